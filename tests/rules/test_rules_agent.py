"""tuning-agent-least-privilege on the DaemonSet wirespeed.manifests renders (the compliant fixture), one field
changed per failing case; tuning-agent-present over whole stacks."""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from fixtures.rules.engine import fixture, stack_resource, tuning_objects, urn, validate, validate_stack

LEAST = "tuning-agent-least-privilege"
PRESENT = "tuning-agent-present"
HINT = "as `wirespeed render node-tuning` renders it."
PRIVILEGED = {"privileged": True}


def daemon_set(edit):
    objects = tuning_objects()["DaemonSet"]
    edit(objects["spec"]["template"]["spec"])
    return objects


def container(spec):
    return spec["containers"][0]


def test_the_rendered_daemon_set_passes():
    assert validate(LEAST, "daemon_set", tuning_objects()["DaemonSet"]) == []


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(
            lambda s: container(s)["securityContext"].update(privileged=True),
            "container 'agent': securityContext.privileged is true, which grants every capability and every host "
            "device; the agent needs only NET_ADMIN (ring sizes via the ethtool ioctl, MTU via netlink). Set "
            f"privileged: false with capabilities {{drop: [ALL], add: [NET_ADMIN]}}, {HINT}",
            id="privileged",
        ),
        pytest.param(
            lambda s: container(s)["securityContext"]["capabilities"]["add"].append("SYS_ADMIN"),
            "container 'agent': securityContext.capabilities.add has SYS_ADMIN beyond NET_ADMIN; the agent needs only "
            "NET_ADMIN (rings, MTU) and the /proc/sys/net mount (sysctls). Keep add: [NET_ADMIN] and drop: [ALL], "
            + HINT,
            id="extra-capability",
        ),
        pytest.param(
            lambda s: s["volumes"][1]["hostPath"].update(path="/proc/sys"),
            "hostPath volume 'host-proc-sys-net' mounts /proc/sys from the host; the agent needs only /proc/sys/net "
            f"(global net.* sysctls) and /sys read-only (VF detection). Remove it, {HINT}",
            id="all-of-proc-sys",
        ),
        pytest.param(
            lambda s: container(s)["volumeMounts"][2].update(readOnly=False),
            "container 'agent': hostPath volume 'host-sys' (/sys) is mounted read-write; the agent only reads it "
            f"(SR-IOV VF detection). Set readOnly: true on the mount, {HINT}",
            id="sys-read-write",
        ),
        pytest.param(
            lambda s: s.update(hostPID=True),
            "spec.template.spec.hostPID is true: the agent needs the host's network namespace only (hostNetwork), "
            f"not its processes or IPC. Remove hostPID, {HINT}",
            id="host-pid",
        ),
        pytest.param(
            lambda s: s.update(initContainers=[{"name": "setup", "image": "busybox:1", "securityContext": PRIVILEGED}]),
            "container 'setup': securityContext.privileged is true, which grants every capability and every host "
            "device; the agent needs only NET_ADMIN (ring sizes via the ethtool ioctl, MTU via netlink). Set "
            f"privileged: false with capabilities {{drop: [ALL], add: [NET_ADMIN]}}, {HINT}",
            id="privileged-init-container",
        ),
    ],
)
def test_one_privilege_too_many(edit, expected):
    assert validate(LEAST, "daemon_set", daemon_set(edit)) == [expected]


def test_cap_prefixed_net_admin_and_trailing_slashes_are_the_same_grant():
    def edit(spec):
        container(spec)["securityContext"]["capabilities"]["add"] = ["CAP_NET_ADMIN"]
        spec["volumes"][1]["hostPath"]["path"] = "/proc/sys/net/"

    assert validate(LEAST, "daemon_set", daemon_set(edit)) == []


def test_other_daemon_sets_are_not_the_agent():
    other = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "node-exporter", "labels": {"app.kubernetes.io/name": "node-exporter"}},
        "spec": {
            "template": {"spec": {"hostPID": True, "containers": [{"name": "x", "image": "prom/node-exporter:v1"}]}}
        },
    }
    assert validate(LEAST, "daemon_set", other) == []


def test_an_agent_daemon_set_is_recognised_by_its_image_too():
    objects = daemon_set(lambda s: s.update(hostIPC=True))
    objects["metadata"]["labels"] = {}
    (message,) = validate(LEAST, "daemon_set", objects)
    assert message.startswith("spec.template.spec.hostIPC is true")


# --- tuning-agent-present -----------------------------------------------------------------------------------------

PRESENT_TAIL = (
    " but the stack deploys no wirespeed tuning DaemonSet: NIC rings stay at driver defaults (RX 1,024 on Azure's "
    "Mellanox VF, reset again whenever the host re-adds the VF) and netdev_max_backlog at 1,000 wherever the pool "
    "does not set it. Add wirespeed.kubernetes.NodeTuning (or `wirespeed render node-tuning | kubectl apply -f -`); "
    "if another stack deploys it, disable tuning-agent-present for this one."
)
# An EKS cluster's nodes have ENA (ena_netdev.h ENA_DEFAULT_RING_SIZE; RX max per instance type, up to 16K) and
# no AKS pool setting: nothing about Azure belongs in its finding.
EKS_PRESENT_TAIL = (
    " but the stack deploys no wirespeed tuning DaemonSet: NIC rings stay at ENA's driver default (RX 1,024 of up "
    "to 16,384) and netdev_max_backlog at the kernel default 1,000 wherever node user data does not set it. Add "
    "wirespeed.kubernetes.NodeTuning (or `wirespeed render node-tuning | kubectl apply -f -`); if another stack "
    "deploys it, disable tuning-agent-present for this one."
)


def aks_stack():
    return [
        stack_resource("cluster", "aks", fixture("aks_cluster")),
        stack_resource("pool", "user", fixture("aks_agent_pool")),
    ]


def eks_stack():
    return [
        stack_resource("eks_cluster", "ingest", {"name": "ingest", "version": "1.31"}),
        stack_resource("node_group", "ingest", fixture("eks_node_group")),
        stack_resource("node_pool", "burst", fixture("karpenter_node_pool")),
    ]


def test_clusters_with_the_agent_pass():
    agent = stack_resource("daemon_set", "agent", tuning_objects()["DaemonSet"])
    assert validate_stack(PRESENT, [*aks_stack(), agent]) == []
    assert validate_stack(PRESENT, [*eks_stack(), agent]) == []
    component = stack_resource("wirespeed:index:NodeTuning", "tuning", {})
    assert validate_stack(PRESENT, [*aks_stack(), component]) == []


def test_aks_cluster_without_the_agent():
    assert validate_stack(PRESENT, aks_stack()) == [
        ("this cluster has 2 node pool(s)" + PRESENT_TAIL, urn("cluster", "aks"))
    ]


def test_eks_cluster_without_the_agent_counts_node_groups_and_karpenter():
    assert validate_stack(PRESENT, eks_stack()) == [
        (
            "this cluster has 1 managed node group(s) and 1 Karpenter NodePool(s)" + EKS_PRESENT_TAIL,
            urn("eks_cluster", "ingest"),
        )
    ]


def test_a_cluster_without_pools_needs_no_agent():
    props = fixture("aks_cluster")
    del props["agentPoolProfiles"]
    assert validate_stack(PRESENT, [stack_resource("cluster", "aks", props)]) == []
    assert validate_stack(PRESENT, [stack_resource("eks_cluster", "ingest", {"name": "ingest"})]) == []


def test_eks_node_group_linked_by_dependency_when_the_cluster_name_is_unknown():
    group = fixture("eks_node_group")
    group["clusterName"] = UNKNOWN_STRING_VALUE
    resources = [
        stack_resource("eks_cluster", "ingest", {"name": UNKNOWN_STRING_VALUE}),
        stack_resource("node_group", "ingest", group, {"clusterName": [urn("eks_cluster", "ingest")]}),
    ]
    assert validate_stack(PRESENT, resources) == [
        ("this cluster has 1 managed node group(s)" + EKS_PRESENT_TAIL, urn("eks_cluster", "ingest"))
    ]
