"""NAT egress per AZ, decided without Pulumi: how many Elastic IPs each AZ's NAT gateway needs.

One public NAT gateway per AZ (a gateway serves its own AZ; routing another AZ through it adds cross-AZ cost and a
shared failure). Each IP carries 55,000 simultaneous connections to one destination (IP, port, protocol), so the
count follows the peak concurrent connections from that AZ to its busiest destination
(:func:`wirespeed.sizing.nat_gateway.plan_aws_nat_gateway`: at most 8 IPs, a warning above the default quota of 2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wirespeed.problems import Problem
from wirespeed.sizing import InfeasibleError, SizingError
from wirespeed.sizing.nat_gateway import NatGatewayPlan, plan_aws_nat_gateway

# An AZ name (eu-west-1a) or AZ ID (euw1-az1): it becomes part of resource names.
AZ_PATTERN = re.compile(r"^[a-z0-9-]{1,32}$")
# The ErrorPortAllocation alarm's period: AWS/NATGateway publishes one-minute datapoints
# (docs.aws.amazon.com/vpc/latest/userguide/vpc-nat-gateway-cloudwatch.html).
ALARM_PERIOD_SECONDS = 60


@dataclass(frozen=True)
class AzEgress:
    availability_zone: str
    plan: NatGatewayPlan

    def to_json(self) -> dict[str, Any]:
        return {"availability_zone": self.availability_zone} | self.plan.to_json()


@dataclass(frozen=True)
class EgressPlan:
    zones: tuple[AzEgress, ...]

    @property
    def warnings(self) -> list[str]:
        return [f"{z.availability_zone}: {w}" for z in self.zones for w in z.plan.warnings]

    def to_json(self) -> dict[str, Any]:
        return {"zones": [z.to_json() for z in self.zones], "total_ips": sum(z.plan.ips for z in self.zones)}


def plan_egress(
    public_subnet_ids: Mapping[str, object], peak_connections: int | Mapping[str, int]
) -> tuple[EgressPlan | None, list[Problem]]:
    """Size each AZ's gateway. ``peak_connections``: one figure for every AZ, or one per AZ (same keys)."""
    problems: list[Problem] = []
    if not isinstance(public_subnet_ids, Mapping) or not public_subnet_ids:
        return None, [Problem("public_subnet_ids", public_subnet_ids, "a mapping of AZ name to public subnet ID")]
    for az in public_subnet_ids:
        if not isinstance(az, str) or not AZ_PATTERN.match(az):
            problems.append(Problem(f"public_subnet_ids[{az!r}]", az, "an AZ name such as 'eu-west-1a'"))
    if isinstance(peak_connections, Mapping):
        per_az = dict(peak_connections)
        if set(per_az) != set(public_subnet_ids):
            problems.append(
                Problem(
                    "peak_connections", sorted(per_az), f"one figure per AZ: {', '.join(sorted(public_subnet_ids))}"
                )
            )
    else:
        per_az = dict.fromkeys(public_subnet_ids, peak_connections)
    zones = []
    for az in public_subnet_ids:
        if az not in per_az:
            continue
        where = f"peak_connections[{az!r}]" if isinstance(peak_connections, Mapping) else "peak_connections"
        try:
            zones.append(AzEgress(az, plan_aws_nat_gateway(per_az[az])))
        except SizingError as exc:
            problems.append(Problem(where, per_az[az], exc.allowed))
        except InfeasibleError as exc:
            problems.append(Problem(where, per_az[az], str(exc).removeprefix("connections: ")))
    # One figure for every AZ fails the same way in each: report it once.
    unique: list[Problem] = []
    for p in problems:
        if p not in unique:
            unique.append(p)
    problems = unique
    if problems:
        return None, problems
    return EgressPlan(tuple(zones)), []
