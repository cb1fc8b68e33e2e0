"""The tuning-agent rules' reading, in process with plain documents: how tuning-agent-present links node groups and
NodePools to their cluster (by name, by property dependency, while values are unknown) and walks every cluster of a
stack, and what tuning-agent-least-privilege names for unnamed containers, unnamed volumes and unknown lists.
tests/rules/test_rules_agent.py runs both rules through the policy engine."""

from __future__ import annotations

import pytest

from fixtures.rules.engine import tuning_objects
from wirespeed.rules._k8s import DAEMON_SET
from wirespeed.rules._model import Resource
from wirespeed.rules._node_pools import EKS_CLUSTER, NODE_GROUP
from wirespeed.rules.tuning_agent_least_privilege import check_least_privilege
from wirespeed.rules.tuning_agent_present import check_agent_present
from wirespeed.values import UNKNOWN, NotKnown

EKS = EKS_CLUSTER
AKS = "azure-native:containerservice:ManagedCluster"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
HINT = "as `wirespeed render node-tuning` renders it."


def eks(name, props=None):
    return Resource(EKS, name, f"urn:{name}", {"name": name} if props is None else props)


def group(name, cluster_name, depends_on=()):
    deps = {"clusterName": list(depends_on)} if depends_on else {}
    return Resource(NODE_GROUP, name, f"urn:{name}", {"clusterName": cluster_name}, property_dependencies=deps)


def described(resources):
    """What each finding says the cluster has (the text between 'this cluster has ' and ' but'); a cluster whose
    pools are known only after apply as ``(name, "unknown: <path>")``."""
    found = []
    for finding in check_agent_present(resources, {}):
        if finding.unknown is not None:
            found.append((finding.resource.name, f"unknown: {finding.unknown}"))
            continue
        found.append((finding.resource.name, finding.message.removeprefix("this cluster has ").split(" but ")[0]))
    return found


def test_node_groups_are_counted_one_by_one_by_name_and_by_dependency():
    stack = [
        eks("prod"),
        group("a", "prod"),
        group("b", "prod"),
        group("c", UNKNOWN, depends_on=["urn:prod"]),  # unknown during preview: linked by its dependency alone
        group("d", "prod", depends_on=["urn:prod"]),
        group("e", "other"),
    ]
    assert described(stack) == [("prod", "4 managed node group(s)")]


def test_node_groups_linked_by_dependency_alone_are_counted_one_by_one():
    stack = [eks("prod", {"name": UNKNOWN}), group("a", UNKNOWN, ["urn:prod"]), group("b", UNKNOWN, ["urn:prod"])]
    assert described(stack) == [("prod", "2 managed node group(s)")]


def test_every_cluster_of_the_stack_is_walked():
    # A resource that is no cluster, a cluster without pools and one whose pools are unknown come first: each is
    # passed over (the unknown one said to be so, for a plan judged once), and the cluster after them is judged.
    stack = [
        group("g", "prod"),
        eks("empty"),
        Resource(AKS, "unknown", "urn:unknown", {"agentPoolProfiles": UNKNOWN}),
        eks("prod"),
    ]
    assert described(stack) == [("unknown", "unknown: agentPoolProfiles"), ("prod", "1 managed node group(s)")]


def test_a_node_pool_whose_requirements_are_unknown_counts_as_karpenters():
    pool = Resource(NODE_POOL, "np", "urn:np", {"spec": {"template": {"spec": {"requirements": [UNKNOWN]}}}})
    assert described([eks("prod"), pool]) == [("prod", "1 Karpenter NodePool(s)")]


def daemon_set(edit):
    props = tuning_objects()["DaemonSet"]
    edit(props["spec"]["template"]["spec"])
    return Resource(DAEMON_SET, "agent", "urn:agent", props)


def least_privilege(edit):
    return [f.message for f in check_least_privilege(daemon_set(edit), {})]


def test_an_unnamed_container_is_named_by_where_it_sits():
    def edit(spec):
        spec["containers"][0].pop("name")
        spec["containers"][0]["securityContext"]["privileged"] = True
        spec["containers"][0]["volumeMounts"][2]["readOnly"] = False

    found = least_privilege(edit)
    assert [m.split(":")[0] for m in found] == ["spec.template.spec.containers[0]"] * 2
    assert "hostPath volume 'host-sys' (/sys) is mounted read-write" in found[1]


def test_extra_capabilities_are_listed_sorted():
    found = least_privilege(
        lambda s: s["containers"][0]["securityContext"]["capabilities"]["add"].extend(["SYS_ADMIN", "NET_RAW"])
    )
    assert found == [
        "container 'agent': securityContext.capabilities.add has NET_RAW, SYS_ADMIN beyond NET_ADMIN; the agent needs "
        "only NET_ADMIN (rings, MTU) and the /proc/sys/net mount (sysctls). Keep add: [NET_ADMIN] and drop: [ALL], "
        + HINT
    ]


def test_an_unnamed_host_volume_after_the_sysctl_mount_is_still_judged():
    def edit(spec):
        assert spec["volumes"][1]["hostPath"]["path"] == "/proc/sys/net"
        spec["volumes"].append({"hostPath": {"path": "/etc"}})

    assert least_privilege(edit) == [
        "hostPath volume '?' mounts /etc from the host; the agent needs only /proc/sys/net (global net.* sysctls) and "
        f"/sys read-only (VF detection). Remove it, {HINT}"
    ]


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        pytest.param(
            lambda s: s["containers"][0]["securityContext"]["capabilities"].update(add=[UNKNOWN]),
            "capabilities.add.0",
            id="capability",
        ),
        pytest.param(lambda s: s.update(volumes=[UNKNOWN]), "volumes.0", id="volume"),
        pytest.param(lambda s: s["containers"][0].update(volumeMounts=[UNKNOWN]), "volumeMounts.0", id="mount"),
    ],
)
def test_an_unknown_list_item_names_where_it_is(edit, path):
    with pytest.raises(NotKnown) as info:
        least_privilege(edit)
    assert info.value.path == path
