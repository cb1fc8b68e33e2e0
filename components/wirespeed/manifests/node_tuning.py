"""The tuning DaemonSet and what it needs, as plain Kubernetes objects (dicts): one source for
`wirespeed render node-tuning` (kubectl, Terraform) and the Pulumi component ``wirespeed.kubernetes.NodeTuning``.

Per install: a Namespace; the agent's ServiceAccount, its RBAC (a ClusterRole for its Node and the pod watch's reads,
a Role for its Events in ``default``) and the ValidatingAdmissionPolicy confining it to its own Node's report
(:mod:`wirespeed.manifests.access`); optionally a PodMonitor and the alert rules as a PrometheusRule
(:mod:`wirespeed.manifests.monitoring`).
Per profile: a ConfigMap holding the profile JSON and a DaemonSet on the nodes labelled
``wirespeed.io/profile=<name>``. The privileges and why each is needed: agent/README.md, "Privileges".
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from wirespeed.manifests.access import access_objects
from wirespeed.manifests.metadata import labels, metadata
from wirespeed.manifests.monitoring import prometheus_rule
from wirespeed.manifests.options import METRICS_PORT as METRICS_PORT  # re-exported: wirespeed.numbers reads it here
from wirespeed.manifests.options import (
    NodeTuningError,
    NodeTuningOptions,
    check_line_rates,
    check_options,
    check_probe_ports,
    check_profiles,
    line_rate_annotation,
)
from wirespeed.names import AGENT_NAME as AGENT_NAME  # re-exported: the manifests package API
from wirespeed.names import LINE_RATE_ANNOTATION, SCRAPE_INTERVAL
from wirespeed.names import PROFILE_KEY as PROFILE_KEY
from wirespeed.names import PROFILE_LABEL as PROFILE_LABEL
from wirespeed.profile import Profile
from wirespeed.rules._accepted_args import accepted_labels

Obj = dict[str, Any]

CHECKSUM_ANNOTATION = "wirespeed.io/profile-sha256"
# Prometheus Operator RelabelConfig (monitoring.coreos.com/v1): the pod's node name as the label `node`.
NODE_NAME_RELABELING = {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"}
# The agent pod's wirespeed.io/profile label as the label `profile`, which `wirespeed prove` groups by. Prometheus'
# Kubernetes pod role gives each pod label as __meta_kubernetes_pod_label_<labelname> "with any unsupported
# characters converted to an underscore" (prometheus.io/docs/prometheus/latest/configuration/configuration/
# #kubernetes_sd_config, role pod).
PROFILE_RELABELING = {
    "sourceLabels": ["__meta_kubernetes_pod_label_" + "".join(c if c.isalnum() else "_" for c in PROFILE_LABEL)],
    "targetLabel": "profile",
    "action": "replace",
}

# Where the pod sees things; the agent's flags point at them (agent/cmd/wirespeed-agent/main.go).
PROFILE_DIR = "/etc/wirespeed"
# The host's /proc/sys/net is mounted at <root>/net, so the agent's --proc-sys-root is <root> and
# net.core.netdev_max_backlog resolves to <root>/net/core/netdev_max_backlog (agent/internal/sysctl).
PROC_SYS_ROOT = "/host/proc/sys"
SYS_ROOT = "/host/sys"

# Memory from bench/agent/RESULTS.md ("The whole agent's memory on a busy node"): at 2,000 new flows/s (about
# 60,000-70,000 conntrack entries, every closed port held 240 s) with the probe and tuning on and this GOMEMLIMIT,
# VmRSS and VmHWM 36.3 MiB (VmHWM 43.3 MiB before flows older than the agent were swept); 14.1 MiB of it is the
# static binary's own file pages. Idle, 21 MiB. The request covers the loaded peak with a third to spare, so the
# scheduler reserves what a busy node's agent really uses; the limit leaves room for a larger table and for a
# netlink re-list after ENOBUFS or API retries, which must never OOM-kill the agent mid-apply.
MEMORY_REQUEST_MIB = 48
MEMORY_LIMIT_MIB = 64
MEMORY_REQUEST = f"{MEMORY_REQUEST_MIB}Mi"
MEMORY_LIMIT = f"{MEMORY_LIMIT_MIB}Mi"
# The Go runtime's soft memory limit (GOMEMLIMIT): the container's limit less the binary's file pages and some
# headroom, so that near the limit the garbage collector works harder instead of the kernel killing the pod, as
# https://go.dev/doc/gc-guide#Memory_limit advises for containers. It is not lower on purpose: under a soft limit
# below the live heap the collector runs back to back (up to half of GOMAXPROCS, every core of a large node), so
# a node whose table outgrows the measured load would pay in CPU; 20 MiB brings the loaded VmRSS to 29.5 MiB at no
# measured CPU cost (the same RESULTS section) but leaves no such room.
GO_MEMORY_LIMIT_MIB = 48
# 200 link adds cost 0.59-0.92 s of CPU (same bench): idle otherwise. No CPU limit: CFS throttling would
# delay re-tuning a re-added VF, the one moment the agent must be quick.
CPU_REQUEST = "10m"
# A new profile resizes rings, which blips traffic on each node (MANA re-attaches its vPort): roll through a
# tenth of the nodes at a time rather than the whole pool.
MAX_UNAVAILABLE = "10%"


def profile_json(profile: Profile) -> str:
    """The ConfigMap's profile document: the canonical form `wirespeed profile show --json` prints."""
    return json.dumps(profile.to_json_dict(), indent=2) + "\n"


def profile_checksum(profile: Profile) -> str:
    """sha256 of the exact ConfigMap text: on the pod template, so a profile change rolls the pods."""
    return hashlib.sha256(profile_json(profile).encode()).hexdigest()


def namespace_object(options: NodeTuningOptions) -> Obj:
    meta = metadata(options.namespace, "node-tuning")
    # Pod Security "privileged": the agent pod needs hostNetwork, hostPath volumes and the NET_ADMIN
    # capability, each of which the baseline and restricted levels refuse. Only this namespace is exempted.
    meta["labels"] |= {
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/audit": "privileged",
        "pod-security.kubernetes.io/warn": "privileged",
    }
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def config_map_name(profile: Profile) -> str:
    return f"wirespeed-profile-{profile.name}"


def daemon_set_name(profile: Profile) -> str:
    return f"{AGENT_NAME}-{profile.name}"


def config_map(profile: Profile, options: NodeTuningOptions) -> Obj:
    meta = metadata(config_map_name(profile), "profile", options.namespace, profile.name)
    gbps = options.line_rates.get(profile.name)
    annotations = accepted_labels(options.accepted_advisories)  # what the engine reads for an advisory's reason
    if gbps is not None:  # what the ring and backlog gates read (wirespeed.rules.tuning.config_map_rate)
        annotations[LINE_RATE_ANNOTATION] = line_rate_annotation(gbps)
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {PROFILE_KEY: profile_json(profile)}}


def agent_args() -> list[str]:
    """The agent's command line in the pod (flags from agent/cmd/wirespeed-agent/main.go)."""
    return [
        f"--profile={PROFILE_DIR}/{PROFILE_KEY}",
        f"--proc-sys-root={PROC_SYS_ROOT}",
        f"--sys-root={SYS_ROOT}",
        f"--listen=:{METRICS_PORT}",
    ]


def container_ports(profile: Profile) -> list[Obj]:
    """The metrics port, and the continuous probe's when the profile has a probe section (the agent then serves
    it on the host, agent/README.md "Continuous probe"). With hostNetwork the container port is the host's port, and
    the API server sets hostPort to it anyway; the probe's is written out so NetworkPolicy and security-group
    authors (docs/node-tuning.md, "Probe port") and scanners see which host port the pod holds."""
    ports: list[Obj] = [{"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}]
    if profile.probe is not None:
        port = profile.probe.port
        ports.append({"name": "probe", "containerPort": port, "hostPort": port, "protocol": "TCP"})
    return ports


def _container(profile: Profile, options: NodeTuningOptions) -> Obj:
    return {
        "name": "agent",
        "image": options.image,
        "imagePullPolicy": "IfNotPresent",
        "args": agent_args(),
        "env": [
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "GOMEMLIMIT", "value": f"{GO_MEMORY_LIMIT_MIB}MiB"},
        ],
        "ports": container_ports(profile),
        # /healthz fails only when three resyncs in a row did not finish; /readyz once the first reconcile ran.
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": "metrics"},
            "periodSeconds": 30,
            "timeoutSeconds": 5,
            "failureThreshold": 3,
        },
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": "metrics"},
            "periodSeconds": 10,
            "timeoutSeconds": 5,
        },
        "resources": {
            "requests": {"cpu": CPU_REQUEST, "memory": MEMORY_REQUEST},
            "limits": {"memory": MEMORY_LIMIT},
        },
        # uid 0 with every capability dropped but NET_ADMIN (rings via the ethtool ioctl, MTU via netlink):
        # the /proc/sys/net files are root-owned 0644, and a non-root user would need CAP_DAC_OVERRIDE on
        # top, a broader grant (agent/README.md, "Privileges"). Never privileged.
        "securityContext": {
            "privileged": False,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsUser": 0,
            "runAsGroup": 0,
            "runAsNonRoot": False,
            "capabilities": {"drop": ["ALL"], "add": ["NET_ADMIN"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [
            {"name": "profile", "mountPath": PROFILE_DIR, "readOnly": True},
            {"name": "host-proc-sys-net", "mountPath": f"{PROC_SYS_ROOT}/net"},
            {"name": "host-sys", "mountPath": SYS_ROOT, "readOnly": True},
        ],
    }


def daemon_set(profile: Profile, options: NodeTuningOptions) -> Obj:
    selector = {"app.kubernetes.io/name": AGENT_NAME, PROFILE_LABEL: profile.name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": metadata(daemon_set_name(profile), "agent", options.namespace, profile.name),
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": MAX_UNAVAILABLE}},
            "template": {
                "metadata": {
                    "labels": labels("agent", profile.name),
                    "annotations": {CHECKSUM_ANNOTATION: profile_checksum(profile)},
                },
                "spec": {
                    "serviceAccountName": AGENT_NAME,
                    # The agent tunes the host's NICs and reads their link events: it must live in the host
                    # network namespace.
                    "hostNetwork": True,
                    "dnsPolicy": "ClusterFirstWithHostNet",
                    # Tuning is part of the node being usable: never preempted for ordinary workloads. Allowed
                    # outside kube-system since Kubernetes 1.17 (Cilium's chart relies on it, cilium/cilium#12151);
                    # an API server that limits critical pods per namespace with a PriorityClass-scoped
                    # ResourceQuota (GKE does) needs such a quota in this namespace too.
                    "priorityClassName": "system-node-critical",
                    "nodeSelector": {"kubernetes.io/os": "linux", PROFILE_LABEL: profile.name},
                    # Every taint (any key, any effect): a tainted pool is still a pool whose NICs need tuning.
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [_container(profile, options)],
                    "volumes": [
                        {
                            "name": "profile",
                            "configMap": {
                                "name": config_map_name(profile),
                                "items": [{"key": PROFILE_KEY, "path": PROFILE_KEY}],
                            },
                        },
                        {"name": "host-proc-sys-net", "hostPath": {"path": "/proc/sys/net", "type": "Directory"}},
                        {"name": "host-sys", "hostPath": {"path": "/sys", "type": "Directory"}},
                    ],
                },
            },
        },
    }


def pod_monitor(options: NodeTuningOptions) -> Obj:
    """Prometheus Operator scrape config for every agent pod (all profiles)."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": metadata(AGENT_NAME, "monitoring", options.namespace),
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": AGENT_NAME}},
            "podMetricsEndpoints": [
                {
                    "port": "metrics",
                    "path": "/metrics",
                    "interval": SCRAPE_INTERVAL,
                    # The agent runs on the host network, so `instance` is the node's IP: add the node's name, which
                    # the alerts, the dashboard and `wirespeed size --from-prometheus` name nodes by, and the
                    # profile, which `wirespeed prove` compares before and after by.
                    "relabelings": [copy.deepcopy(NODE_NAME_RELABELING), copy.deepcopy(PROFILE_RELABELING)],
                }
            ],
        },
    }


def node_tuning_objects(profiles: Sequence[Profile], options: NodeTuningOptions | None = None) -> list[Obj]:
    """Every object of a node-tuning install, in apply order (Namespace first, DaemonSets after what they use).

    Raises :class:`NodeTuningError` listing every bad input (no profile, duplicate names, image, namespace).
    """
    options = options or NodeTuningOptions()
    problems = check_profiles(profiles) + check_probe_ports(profiles)
    problems += check_line_rates(profiles, options) + check_options(options)
    if problems:
        raise NodeTuningError(problems)
    objects = [namespace_object(options), *access_objects(options)]
    objects += [config_map(p, options) for p in profiles]
    objects += [daemon_set(p, options) for p in profiles]
    if options.pod_monitor:
        objects.append(pod_monitor(options))
    if options.alerts:
        objects.append(prometheus_rule(options.namespace))
    return objects
