# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""NAT egress per AZ, decided without Pulumi: the gateways and the Elastic IPs each AZ needs, in either mode.

Zonal (the default): one public NAT gateway per AZ, in that AZ's public subnet (a gateway serves its own AZ; routing
another AZ through it adds cross-AZ cost and a shared failure). Regional: one gateway for the VPC, no public subnet,
with each AZ's Elastic IPs given (``ip_mode="manual"``) or added by AWS as needed (``"automatic"``). Each IP carries
55,000 simultaneous connections to one destination (IP, port, protocol), so every AZ's count follows its peak
concurrent connections to its busiest destination (:func:`wirespeed.sizing.aws_nat.plan_aws_nat`: at most 8 IPs per
zonal gateway, 32 per AZ of a regional one; warnings where a default quota is too low).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from wirespeed.problems import Problem
from wirespeed.sizing.aws_nat import (
    AUTOMATIC,
    AZ_ID_PATTERN,
    AZ_PATTERN,
    IP_MODES,
    MANUAL,
    AwsNatPlan,
    AzNat,
    check_aws_nat,
)
from wirespeed.sizing.azure_lb import check_source
from wirespeed.sizing.errors import SizingError
from wirespeed.sizing.nat_gateway import AVAILABILITY_MODES, REGIONAL, ZONAL

__all__ = [
    "ALARM_PERIOD_SECONDS",
    "AUTOMATIC",
    "AZ_ID_PATTERN",
    "AZ_PATTERN",
    "MANUAL",
    "REGIONAL",
    "ZONAL",
    "AzEgress",
    "EgressPlan",
    "check_egress",
    "measured_from_problems",
    "plan_egress",
]

# The ErrorPortAllocation alarm's period: AWS/NATGateway publishes one-minute datapoints
# (docs.aws.amazon.com/vpc/latest/userguide/vpc-nat-gateway-cloudwatch.html).
ALARM_PERIOD_SECONDS = 60

# The plan NatEgress and modules/aws-nat-egress build from: the sizing engine's records under the names the AWS
# components have used since zonal-only days.
EgressPlan = AwsNatPlan
AzEgress = AzNat


def _zones(
    mode: object, public_subnet_ids: object, availability_zones: object, problems: list[Problem]
) -> list[str] | None:
    """The AZs the plan covers: the keys of public_subnet_ids (zonal) or availability_zones (regional)."""
    if mode == REGIONAL:
        if public_subnet_ids is not None:
            problems.append(
                Problem("public_subnet_ids", "given", "only with mode 'zonal' (a regional gateway has none)")
            )
        if (
            isinstance(availability_zones, str)
            or not isinstance(availability_zones, Sequence)
            or not availability_zones
        ):
            problems.append(Problem("availability_zones", availability_zones, "the AZ names the gateway serves"))
            return None
        duplicated = sorted({az for az in availability_zones if list(availability_zones).count(az) > 1})
        if duplicated:
            problems.append(Problem("availability_zones", duplicated, "each AZ once"))
        return list(availability_zones)
    if availability_zones is not None and mode == ZONAL:
        problems.append(Problem("availability_zones", "given", "only with mode 'regional' (zonal: public_subnet_ids)"))
    if not isinstance(public_subnet_ids, Mapping) or not public_subnet_ids:
        problems.append(Problem("public_subnet_ids", public_subnet_ids, "a mapping of AZ name to public subnet ID"))
        return None
    return list(public_subnet_ids)


def plan_egress(
    public_subnet_ids: Mapping[str, object] | None,
    peak_connections: int | Mapping[str, int],
    mode: str = ZONAL,
    ip_mode: str = MANUAL,
    availability_zones: Sequence[str] | None = None,
) -> tuple[EgressPlan | None, list[Problem]]:
    """Size each AZ. ``peak_connections``: one figure for every AZ, or one per AZ (the same AZs). Zonal gateways
    take their AZs from ``public_subnet_ids``; a regional one from ``availability_zones``."""
    problems: list[Problem] = []
    if mode not in AVAILABILITY_MODES:
        problems.append(Problem("mode", mode, " or ".join(repr(m) for m in AVAILABILITY_MODES)))
    if ip_mode not in IP_MODES:
        problems.append(Problem("ip_mode", ip_mode, " or ".join(repr(m) for m in IP_MODES)))
    elif mode == ZONAL and ip_mode == AUTOMATIC:
        problems.append(Problem("ip_mode", ip_mode, "'manual' with mode 'zonal' (only a regional gateway adds IPs)"))
    zones = _zones(mode, public_subnet_ids, availability_zones, problems)
    if zones is None:
        return None, problems
    for az in zones:
        if not isinstance(az, str) or not AZ_PATTERN.match(az):
            where = "availability_zones" if mode == REGIONAL else f"public_subnet_ids[{az!r}]"
            problems.append(Problem(where, az, "an AZ name such as 'eu-west-1a'"))
    per_az: dict[str, object]
    if isinstance(peak_connections, Mapping):
        per_az = dict(peak_connections)
        if set(per_az) != set(zones):
            problems.append(
                Problem("peak_connections", sorted(per_az), f"one figure per AZ: {', '.join(sorted(zones))}")
            )
    else:
        per_az = dict.fromkeys(zones, peak_connections)
    demand = {az: per_az[az] for az in zones if az in per_az and isinstance(az, str) and AZ_PATTERN.match(az)}
    if not demand:
        return None, problems
    # The modes' own problems are reported above; size with valid ones so the figures are checked too.
    sizing_mode = mode if mode in AVAILABILITY_MODES else ZONAL
    sizing_ip_mode = ip_mode if ip_mode in IP_MODES and (sizing_mode, ip_mode) != (ZONAL, AUTOMATIC) else MANUAL
    plan, found = check_aws_nat(demand, sizing_mode, sizing_ip_mode, field="peak_connections")  # type: ignore[arg-type]
    if not isinstance(peak_connections, Mapping):
        # One figure for every AZ fails the same way in each: name it once, as the argument it is.
        found = [Problem("peak_connections", p.value, p.allowed) for p in found]
    problems.extend(p for p in found if p not in problems)
    if problems or plan is None:
        return None, problems
    return plan, []


def check_egress(
    public_subnet_ids: Mapping[str, object] | None,
    peak_connections: int | Mapping[str, int],
    mode: str = ZONAL,
    ip_mode: str = MANUAL,
    availability_zones: Sequence[str] | None = None,
    *,
    vpc_id: object = None,
    private_route_table_ids: Mapping[str, object] | None = None,
    alarms: object = True,
    alarm_actions: object = None,
) -> tuple[EgressPlan | None, list[Problem]]:
    """Every input of NatEgress (and modules/aws-nat-egress) checked at once: :func:`plan_egress`'s, then the
    VPC a regional gateway needs, the route tables' AZs and the alarm options."""
    plan, problems = plan_egress(public_subnet_ids, peak_connections, mode, ip_mode, availability_zones)
    if mode == REGIONAL and vpc_id is None:
        problems.append(Problem("vpc_id", None, "the VPC's ID: a regional gateway is created in a VPC"))
    elif mode == ZONAL and vpc_id is not None:
        problems.append(Problem("vpc_id", "given", "only with mode 'regional' (zonal: public_subnet_ids)"))
    if private_route_table_ids is not None:
        zones = public_subnet_ids if mode == ZONAL else availability_zones
        extra = sorted(set(private_route_table_ids) - set(zones or ()))
        if extra:
            where = "public_subnet_ids" if mode == ZONAL else "availability_zones"
            problems.append(Problem("private_route_table_ids", extra, f"AZs of {where}"))
    if not isinstance(alarms, bool):
        problems.append(Problem("alarms", alarms, "True or False"))
    elif alarm_actions is not None and not alarms:
        problems.append(Problem("alarm_actions", "given", "only with alarms=True"))
    return (None if problems else plan), problems


def measured_from_problems(value: object, field: str) -> list[Problem]:
    """The provenance of a measured ``peak_connections`` (None: not measured), as the Azure components check theirs."""
    if value is None:
        return []
    try:
        check_source(field, value)
    except SizingError as exc:
        return [Problem(field, exc.value, exc.allowed)]
    return []
