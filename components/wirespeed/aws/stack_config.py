"""The root project's EKS stack config (``wirespeed:cloud`` aws), parsed and checked without Pulumi.

Node groups are one string each, ``NAME:TYPE[+TYPE...]:MIN:MAX[:PROFILE[:ena-express]]`` (Pulumi's project
config has no object type); NAT gateways are ``AZ=SUBNET`` strings (zonal), or one regional gateway in ``natVpcId``
serving the AZs of ``natPrivateRouteTables`` (``natMode: regional``). Every problem of every key, and of every node
group and gateway as the components would see it, is collected before anything registers, each under the config
key that causes it (``wirespeed:nodeGroups[1]: ...``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wirespeed.aws.capacity import GIVE_A_REASON, NodeGroupPlan, plan_node_group
from wirespeed.aws.egress import MANUAL, REGIONAL, ZONAL, EgressPlan, check_egress, measured_from_problems
from wirespeed.manifests.options import OR_A_PROFILE
from wirespeed.problems import InvalidInputError, Problem
from wirespeed.sizing.nat_gateway import AVAILABILITY_MODES
from wirespeed.values import whole

NODE_GROUP_FORMAT = "NAME:TYPE[+TYPE...]:MIN:MAX[:PROFILE[:ena-express]]"
# EKS node group names: letters, digits, '-' and '_', starting with a letter or digit, up to 63 characters.
NODE_GROUP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
# The part of a node group string each plan_node_group argument comes from, so a problem names what the user wrote
# (``wirespeed:nodeGroups[2] (MIN)``), not the Python argument (``min_size``).
_GROUP_PARTS = {
    "name": "NAME",
    "instance_types": "TYPE",
    "min_size": "MIN",
    "max_size": "MAX",
    "profile": "PROFILE",
    "ena_express": "ena-express",
}
_ARGUMENT = re.compile(r"(\w+)(.*)")


def _group_key(where: str, field: str) -> str:
    """``wirespeed:nodeGroups[i] (PART...)`` for a component argument path such as ``instance_types[0]``."""
    argument = _ARGUMENT.fullmatch(field)
    if argument is None or argument.group(1) not in _GROUP_PARTS:
        return f"{where} ({field})"
    name, rest = argument.groups()
    return f"{where} ({_GROUP_PARTS[name]}{rest})"


@dataclass(frozen=True)
class NodeGroupSpec:
    """One node group as configured (``profile`` and ``ena_express`` as given: the component derives the rest)."""

    name: str
    profile: str
    ena_express: bool
    plan: NodeGroupPlan


@dataclass(frozen=True)
class EksStack:
    cluster_name: str
    node_role_arn: str
    subnet_ids: list[str]
    security_group_ids: list[str]
    node_groups: list[NodeGroupSpec]
    nat_public_subnets: dict[str, str] = field(default_factory=dict)
    nat_route_tables: dict[str, str] = field(default_factory=dict)
    nat_peak_connections: int = 0
    egress: EgressPlan | None = None
    nat_mode: str = ZONAL
    nat_ip_mode: str = MANUAL
    nat_vpc_id: str | None = None
    # Where nat_peak_connections was measured (wirespeed:measuredPeakSource), or None.
    nat_measured_from: str | None = None

    def plan_json(self) -> dict[str, Any]:
        """What `wirespeed plan` shows: instance types with bandwidth and ENA Express, user data, NAT IPs per AZ."""
        egress = self.egress.to_json() if self.egress else None
        if egress is not None and self.nat_measured_from is not None:
            egress["measured_from"] = self.nat_measured_from
        return {
            "cluster_name": self.cluster_name,
            "node_groups": {g.name: g.plan.to_json() for g in self.node_groups},
            "nat_egress": egress,
        }


class EksStackError(InvalidInputError):
    """Every problem of the aws stack config, by config key (``wirespeed:nodeGroups[0]``)."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__("invalid wirespeed stack config (cloud aws)", problems)


def _texts(settings: Mapping[str, Any], key: str, problems: list[Problem]) -> list[str] | None:
    """A list-of-strings key; None (and a problem) for any other type. A bare string is refused too: Python would
    otherwise read ``subnet-a`` as the list of its characters. Only an absent key is the empty list: a stated false,
    0, "" or {} is refused as typed, not read as "none" (no security groups, no NAT gateways, silently)."""
    value = settings.get(key)
    if value is None:
        return []
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return list(value)
    problems.append(Problem(f"wirespeed:{key}", value, "a list of strings"))
    return None


def _pairs(key: str, values: Sequence[str], problems: list[Problem]) -> dict[str, str]:
    out: dict[str, str] = {}
    for index, item in enumerate(values):
        az, sep, value = str(item).partition("=")
        if not sep or not az or not value:
            problems.append(Problem(f"wirespeed:{key}[{index}]", item, "AZ=ID, e.g. us-east-1a=subnet-0abc..."))
        elif az in out:
            problems.append(Problem(f"wirespeed:{key}[{index}]", item, f"each AZ once ({az} is given twice)"))
        else:
            out[az] = value
    return out


def _group_allowed(allowed: str) -> str:
    """The component's allowed text in the node group string's terms: its part names for argument names, and
    without what only Python callers can give (not_network_optimised_reason, a Profile object)."""
    allowed = allowed.replace(GIVE_A_REASON, "").replace(OR_A_PROFILE, "")
    for argument, part in _GROUP_PARTS.items():
        allowed = re.sub(rf"\b{argument}\b", part, allowed) if "_" in argument else allowed
    return allowed


def _group(index: int, text: str, security_groups: bool, problems: list[Problem]) -> NodeGroupSpec | None:
    where = f"wirespeed:nodeGroups[{index}]"
    parts = str(text).split(":")
    if not 4 <= len(parts) <= 6:
        problems.append(Problem(where, text, NODE_GROUP_FORMAT))
        return None
    name, types, low, high, *rest = parts
    profile = rest[0] if rest else "throughput"
    ena_express = len(rest) == 2
    if ena_express and rest[1] != "ena-express":
        problems.append(Problem(where, text, f"{NODE_GROUP_FORMAT}: the sixth field can only be ena-express"))
        return None
    if not NODE_GROUP_NAME.match(name):
        problems.append(Problem(_group_key(where, "name"), name, "letters, digits, '-' and '_', up to 63 characters"))
    sizes = []
    for label, value in (("min_size", low), ("max_size", high)):
        if not value.isdigit():
            problems.append(Problem(_group_key(where, label), value, "a whole number of nodes"))
            return None
        sizes.append(int(value))
    plan, found = plan_node_group(
        instance_types=types.split("+"),
        profile=profile,
        min_size=sizes[0],
        max_size=sizes[1],
        ena_express=ena_express,
    )
    problems.extend(Problem(_group_key(where, p.field), p.value, _group_allowed(p.allowed)) for p in found)
    if ena_express and not security_groups:
        problems.append(
            Problem(
                "wirespeed:securityGroupIds", [], "the node security groups: ena-express needs them (EKS adds none)"
            )
        )
    return None if plan is None else NodeGroupSpec(name, profile, ena_express, plan)


def eks_stack(settings: Mapping[str, Any]) -> EksStack:
    """Parse and check the aws keys; :class:`EksStackError` lists every problem."""
    problems: list[Problem] = []
    for key in ("clusterName", "nodeRoleArn"):
        if not settings.get(key):
            problems.append(Problem(f"wirespeed:{key}", settings.get(key, ""), "required when wirespeed:cloud is aws"))
    subnets = _texts(settings, "subnetIds", problems)
    if subnets == []:
        problems.append(Problem("wirespeed:subnetIds", subnets, "the private subnets of the node groups, one per AZ"))
    security_groups = _texts(settings, "securityGroupIds", problems) or []
    groups_text = _texts(settings, "nodeGroups", problems)
    if groups_text == []:
        problems.append(Problem("wirespeed:nodeGroups", groups_text, f"at least one {NODE_GROUP_FORMAT}"))
    groups_text = groups_text or []
    groups = [_group(i, g, bool(security_groups), problems) for i, g in enumerate(groups_text)]
    names = [g.name for g in groups if g is not None]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(Problem("wirespeed:nodeGroups", name, "each node group name once"))
    public = _pairs("natPublicSubnets", _texts(settings, "natPublicSubnets", problems) or [], problems)
    routes = _pairs("natPrivateRouteTables", _texts(settings, "natPrivateRouteTables", problems) or [], problems)
    # Absent is 0 (Pulumi.yaml's "not set"); a stated value, "" or false too, is the user's and is named as typed.
    raw_connections = settings.get("natPeakConnections")
    raw_connections = 0 if raw_connections is None else raw_connections
    connections = whole(raw_connections)
    if connections is None:
        problems.append(Problem("wirespeed:natPeakConnections", raw_connections, "a whole number of connections"))
        connections = 0
    nat = _nat_settings(settings)
    egress = _egress(public, routes, connections, nat, problems)
    measured_from = _measured_from(settings, egress, problems)
    if problems:
        raise EksStackError(problems)
    return EksStack(
        cluster_name=str(settings["clusterName"]),
        node_role_arn=str(settings["nodeRoleArn"]),
        subnet_ids=subnets or [],
        security_group_ids=security_groups,
        node_groups=[g for g in groups if g is not None],
        nat_public_subnets=public,
        nat_route_tables=routes,
        nat_peak_connections=connections,
        egress=egress,
        nat_mode=nat["natMode"],
        nat_ip_mode=nat["natIpMode"],
        nat_vpc_id=nat["natVpcId"] or None,
        nat_measured_from=measured_from,
    )


def _measured_from(settings: Mapping[str, Any], egress: EgressPlan | None, problems: list[Problem]) -> str | None:
    """wirespeed:measuredPeakSource: where natPeakConnections was measured ("" or absent: not measured)."""
    key, value = "wirespeed:measuredPeakSource", settings.get("measuredPeakSource")
    if value is None or value == "":
        return None  # a stated false or 0 is no source, and is judged below
    found = measured_from_problems(value, key)
    if not found and egress is None:
        found = [Problem(key, value, "only with the NAT gateways this stack sizes (wirespeed:natPublicSubnets, or "
                         "natMode regional)")]  # fmt: skip
    problems.extend(found)
    return None if found else str(value).strip()


# NatEgress's argument -> the config key a user sets for it.
NAT_KEYS = {
    "peak_connections": "natPeakConnections",
    "public_subnet_ids": "natPublicSubnets",
    "availability_zones": "natPrivateRouteTables",
    "private_route_table_ids": "natPrivateRouteTables",
    "vpc_id": "natVpcId",
    "mode": "natMode",
    "ip_mode": "natIpMode",
}


# Pulumi.yaml's defaults of the NAT keys. Only an absent key takes its default: a stated value is the user's and is
# judged, so `natMode: ""` is refused as 'Zonal' is, instead of quietly meaning zonal. natVpcId's "" is its documented
# "not set".
NAT_DEFAULTS = {"natMode": ZONAL, "natIpMode": MANUAL, "natVpcId": ""}


def _nat_settings(settings: Mapping[str, Any]) -> dict[str, str]:
    return {key: default if settings.get(key) is None else str(settings[key]) for key, default in NAT_DEFAULTS.items()}


def _egress(
    public: dict[str, str], routes: dict[str, str], connections: int, nat: dict[str, str], problems: list[Problem]
) -> EgressPlan | None:
    """The NAT egress plan: zonal from natPublicSubnets, regional in natVpcId for the AZs of natPrivateRouteTables;
    None when neither is configured. Problems are named by config key."""
    mode = nat["natMode"]
    if mode not in AVAILABILITY_MODES and not public and not routes:
        # No gateway is configured, so check_egress never sees the mode: a stated one is still judged.
        problems.append(Problem("wirespeed:natMode", mode, " or ".join(repr(m) for m in AVAILABILITY_MODES)))
        return None
    if mode == ZONAL and not public:
        if routes:
            problems.append(
                Problem("wirespeed:natPrivateRouteTables", sorted(routes), "only with wirespeed:natPublicSubnets")
            )
        return None
    if connections <= 0:
        problems.append(
            Problem("wirespeed:natPeakConnections", connections, "peak connections to the busiest destination per AZ")
        )
        return None
    egress, found = check_egress(
        public or None,
        connections,
        mode,
        nat["natIpMode"],
        list(routes) if mode == REGIONAL else None,
        vpc_id=(nat["natVpcId"] or None) if mode == REGIONAL else None,
        private_route_table_ids=routes or None,
    )
    for p in found:
        head, _, rest = p.field.partition("[")
        key = NAT_KEYS.get(head, head)
        allowed = p.allowed.replace("public_subnet_ids", "wirespeed:natPublicSubnets").replace(
            "availability_zones", "wirespeed:natPrivateRouteTables"
        )
        problems.append(Problem(f"wirespeed:{key}" + (f"[{rest}" if rest else ""), p.value, allowed))
    return egress
