"""tuning-agent-least-privilege: the tuning DaemonSet runs with no more privilege than it needs (the DaemonSet
wirespeed.manifests renders: NET_ADMIN only, /proc/sys/net read-write, /sys read-only)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from wirespeed.rules import _k8s
from wirespeed.rules._agent import ALLOWED_CAPABILITIES, PRIVILEGES_DOC, PROC_SYS_NET, RENDER_HINT, SYS
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings
from wirespeed.values import elements, get, text


def _capability(name: str) -> str:
    return name.upper().removeprefix("CAP_")


def _container_findings(resource: Resource, container: Any, where: str) -> Iterator[Finding]:
    label = _k8s.container_name(container, where)
    context = get(container, "securityContext")
    if get(context, "privileged") is True:
        yield Finding(
            resource,
            f"{label}: securityContext.privileged is true, which grants every capability and every host device; "
            "the agent needs only NET_ADMIN (ring sizes via the ethtool ioctl, MTU via netlink). Set privileged: "
            f"false with capabilities {{drop: [ALL], add: [NET_ADMIN]}}, {RENDER_HINT}.",
        )
    added = [text(c) for c in elements(get(context, "capabilities", "add"), "capabilities.add")]
    extra = sorted({c for c in added if c and _capability(c) not in ALLOWED_CAPABILITIES})
    if extra:
        yield Finding(
            resource,
            f"{label}: securityContext.capabilities.add has {', '.join(extra)} beyond NET_ADMIN; the agent needs "
            f"only NET_ADMIN (rings, MTU) and the /proc/sys/net mount (sysctls). Keep add: [NET_ADMIN] and drop: "
            f"[ALL], {RENDER_HINT}.",
        )


def _normal(path: str) -> str:
    return "/" + "/".join(p for p in path.split("/") if p)


def _mounts(spec: Any, volume: str) -> Iterator[tuple[str, Any]]:
    for container, where in _k8s.containers({"spec": {"template": {"spec": spec}}}):
        for mount in elements(get(container, "volumeMounts"), "volumeMounts"):
            if text(get(mount, "name")) == volume:
                yield _k8s.container_name(container, where), mount


def _host_findings(resource: Resource) -> Iterator[Finding]:
    spec = get(resource.props, "spec", "template", "spec")
    for field in ("hostPID", "hostIPC"):
        if get(spec, field) is True:
            yield Finding(
                resource,
                f"spec.template.spec.{field} is true: the agent needs the host's network namespace only "
                f"(hostNetwork), not its processes or IPC. Remove {field}, {RENDER_HINT}.",
            )
    for volume in elements(get(spec, "volumes"), "volumes"):
        path = text(get(volume, "hostPath", "path"))
        if path is None:
            continue
        name = text(get(volume, "name")) or "?"
        host_path = _normal(path)
        if host_path == PROC_SYS_NET:
            continue
        if host_path == SYS:
            for label, mount in _mounts(spec, name):
                if get(mount, "readOnly") is not True:
                    yield Finding(
                        resource,
                        f"{label}: hostPath volume {name!r} ({SYS}) is mounted read-write; the agent only reads "
                        f"it (SR-IOV VF detection). Set readOnly: true on the mount, {RENDER_HINT}.",
                    )
            continue
        yield Finding(
            resource,
            f"hostPath volume {name!r} mounts {host_path} from the host; the agent needs only {PROC_SYS_NET} "
            f"(global net.* sysctls) and {SYS} read-only (VF detection). Remove it, {RENDER_HINT}.",
        )


def check_least_privilege(resource: Resource, settings: Settings) -> Iterator[Finding]:
    if not _k8s.is_tuning_daemon_set(resource):
        return
    for container, where in _k8s.containers(resource.props):
        yield from _container_findings(resource, container, where)
    yield from _host_findings(resource)


AGENT_LEAST_PRIVILEGE = Rule(
    id="tuning-agent-least-privilege",
    order=80,
    description="The tuning DaemonSet is not privileged, adds only NET_ADMIN and mounts only what it needs.",
    severity="critical",
    default_enforcement="mandatory",
    remediation="Use the DaemonSet wirespeed renders: privileged false, capabilities drop ALL add NET_ADMIN, "
    "hostPath /proc/sys/net and /sys (read-only) only, no hostPID/hostIPC.",
    source=PRIVILEGES_DOC,
    scope="resource",
    types=(_k8s.DAEMON_SET,),
    config_schema={},
    reads=(
        Reads(
            _k8s.DAEMON_SET,
            (
                *_k8s.TUNING_DAEMON_SET_READS,
                *(
                    f"spec.template.spec.{field}[].{path}"
                    for field in ("initContainers", "containers")
                    for path in (
                        "name",
                        "securityContext.privileged",
                        "securityContext.capabilities.add[]",
                        "volumeMounts[].name",
                        "volumeMounts[].readOnly",
                    )
                ),
                "spec.template.spec.hostPID",
                "spec.template.spec.hostIPC",
                "spec.template.spec.volumes[].name",
                "spec.template.spec.volumes[].hostPath.path",
            ),
        ),
    ),
    check=check_least_privilege,
)

RULE = AGENT_LEAST_PRIVILEGE
