"""What a check read, so a gate never passes what it did not judge: how many resources, how many of a type some
enabled rule reads, and which types it did not read that look like compute or egress (a GKE node pool, an EC2
instance, a Pulumi component wirespeed does not know, an AKS cluster under a type token it missed).

"Looks like" is by the words of the type name, for the providers and naming styles teams use (Terraform's
``google_container_node_pool``, Pulumi's ``gcp:container/nodePool:NodePool``, Kubernetes kinds): a hint for the
reader of a report, never a verdict. :func:`enough` is the one place that decides whether an input was judged
enough to pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# (pattern over the type's words joined by "_", what it looks like). Words: camelCase split, every separator
# ("_", ":", "/", ".", "-") a "_", lower case: "gcp:container/nodePool:NodePool" -> "gcp_container_node_pool_node_pool".
_LOOKS_LIKE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), kind)
    for pattern, kind in (
        (r"(?:^|_)(?:node_?pool|node_?group|node_?claim|agent_?pool)s?(?:_|$)", "compute"),
        (r"(?:^|_)(?:kubernetes|container|managed|eks|aks|gke|k8s|openshift)(?:_[a-z0-9]+)?_cluster(?:_|$)", "compute"),
        (
            r"(?:^|_)(?:autoscaling_group|instance_group(?:_manager)?|scale_set|spot_fleet|ec2_fleet|fleet_request)(?:_|$)",
            "compute",
        ),
        (
            r"(?:^|_)(?:launch_configuration|launch_template|instance_template|virtual_machine|spot_instance_request)(?:_|$)",
            "compute",
        ),
        (r"(?:^|_)instances?$", "compute"),  # aws_instance, google_compute_instance, aws:ec2/instance:Instance
        (
            r"(?:^|_)(?:nat|internet_gateway|egress|outbound|transit_gateway|vpn_gateway|network_gateway)(?:_|$)",
            "egress",
        ),
    )
)
# Instances that are not nodes: databases and caches run on instances too, but no wirespeed rule is about them.
_NOT_NODES = re.compile(
    r"(?:^|_)(?:db|rds|sql|database|redis|cache|elasticache|docdb|neptune|opensearch|lightsail|notebook|iam|profile)"
    r"(?:_|$)"
)


def _words(type_name: str) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", type_name)
    return "_".join(w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w)


def looks_like(type_name: str) -> str | None:
    """``"compute"``, ``"egress"`` or None: what a type looks like by its name."""
    words = _words(type_name)
    for pattern, kind in _LOOKS_LIKE:
        if pattern.search(words):
            if kind == "compute" and _NOT_NODES.search(words):
                return None
            return kind
    return None


@dataclass(frozen=True)
class Unread:
    """A type no enabled rule reads, that looks like compute or egress, and how many resources of it the input has."""

    type: str
    count: int
    kind: str  # "compute" or "egress"

    def to_json(self) -> dict[str, str | int]:
        return {"type": self.type, "count": self.count, "looks_like": self.kind}


# Pulumi components whose nodes are read through the resources they create, which every export and preview holds
# beside them (pulumi-eks: its node groups, launch templates or configurations, auto-scaling groups and v1's
# CloudFormation stack; docs/policy-gates.md, "What wirespeed check reads"): not reading the component itself hides
# nothing.
READ_THROUGH_CHILDREN = frozenset(
    {
        "eks:index:Cluster",
        "eks:index:NodeGroup",
        "eks:index:NodeGroupV2",
        "eks:index:ManagedNodeGroup",
        "eks:index:NodeGroupSecurityGroup",
    }
)


def unread(counts: Mapping[str, int]) -> tuple[Unread, ...]:
    """The compute- or egress-looking types among ``counts`` (resources not read, by type), most common first;
    components read through their children (:data:`READ_THROUGH_CHILDREN`) are not listed."""
    found = [
        Unread(t, n, kind)
        for t, n in counts.items()
        if t not in READ_THROUGH_CHILDREN and (kind := looks_like(t)) is not None
    ]
    return tuple(sorted(found, key=lambda u: (-u.count, u.type)))


def enough(judged: int, require_judged: bool) -> bool:
    """Whether a check judged enough to pass: always, unless ``--require-judged`` (or the config's
    ``check.requireJudged``) asks for at least one resource some rule reads."""
    return judged > 0 or not require_judged
