"""kubernetes resources as the Kubernetes objects the agent rules read (``KUBERNETES_DOCS``/<type>)."""

from __future__ import annotations

from typing import Any

from wirespeed.check.terraform.blocks import Props, blocks, clean, known_text, repeated
from wirespeed.values import UNKNOWN, at

KUBERNETES_DOCS = "https://registry.terraform.io/providers/hashicorp/kubernetes/latest/docs/resources"


def manifest_type(manifest: Any) -> str | None:
    """The Pulumi token of a Kubernetes object: ``apps/v1`` + ``DaemonSet`` -> ``kubernetes:apps/v1:DaemonSet``
    (the core group's ``v1`` is ``core/v1``, as pulumi-kubernetes names it)."""
    api_version, kind = known_text(at(manifest, "apiVersion")), known_text(at(manifest, "kind"))
    if not api_version or not kind:
        return None
    return f"kubernetes:{api_version if '/' in api_version else 'core/' + api_version}:{kind}"


def config_map(values: Any) -> Props:
    """kubernetes_config_map / kubernetes_config_map_v1 (``KUBERNETES_DOCS``/config_map_v1) as a ConfigMap."""
    metadata = at(values, "metadata")
    return clean(
        {
            "metadata": {
                "name": at(metadata, "name"),
                "namespace": at(metadata, "namespace"),
                "annotations": at(metadata, "annotations"),  # the line rate the ring and backlog gates size from
            },
            "data": at(values, "data"),
        }
    )


def _container(container: Any) -> Any:
    capabilities = at(container, "security_context", "capabilities")
    return clean(
        {
            "name": at(container, "name"),
            "image": at(container, "image"),
            "securityContext": {
                "privileged": at(container, "security_context", "privileged"),
                "capabilities": UNKNOWN
                if capabilities == UNKNOWN
                else {"add": at(capabilities, "add"), "drop": at(capabilities, "drop")},
            },
            "volumeMounts": blocks(
                repeated(container, "volume_mount"),
                lambda m: clean(
                    {"name": at(m, "name"), "mountPath": at(m, "mount_path"), "readOnly": at(m, "read_only")}
                ),
            ),
        }
    )


def _volume(volume: Any) -> Any:
    return clean({"name": at(volume, "name"), "hostPath": {"path": at(volume, "host_path", "path")}})


def daemon_set(values: Any) -> Props:
    """kubernetes_daemon_set_v1 / kubernetes_daemonset (``KUBERNETES_DOCS``/daemon_set_v1): the nested blocks
    (``spec.template.spec.container``, ``security_context``, ``volume``) as the DaemonSet object the agent rules
    read (the same fields in the Kubernetes API's names)."""
    metadata = at(values, "metadata")
    pod = at(values, "spec", "template", "spec")
    return clean(
        {
            "metadata": {
                "name": at(metadata, "name"),
                "namespace": at(metadata, "namespace"),
                "labels": at(metadata, "labels"),
            },
            "spec": {
                "template": {
                    "spec": UNKNOWN
                    if pod == UNKNOWN
                    else {
                        "hostNetwork": at(pod, "host_network"),
                        "hostPID": at(pod, "host_pid"),
                        "hostIPC": at(pod, "host_ipc"),
                        "containers": blocks(repeated(pod, "container"), _container),
                        "initContainers": blocks(repeated(pod, "init_container"), _container),
                        "volumes": blocks(repeated(pod, "volume"), _volume),
                    }
                }
            },
        }
    )
