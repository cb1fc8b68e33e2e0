# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""AWS NAT egress across AZs in either availability mode: IPs per AZ, gateways, and whether default quotas suffice.

A zonal NAT gateway serves one AZ (one gateway per AZ, at most 8 IPs each); a regional one serves every AZ of the
VPC as one gateway with up to 32 IPs per AZ, either with the Elastic IPs you give it per AZ (manual) or with IPs
AWS adds itself as an AZ needs more ports (automatic: no IP inputs at all; adding ``AvailabilityZoneAddresses``
switches a gateway to manual, per the EC2 API reference's CreateNatGateway). Each IP carries 55,000 simultaneous
connections to one destination (IP, port, protocol), so an AZ needs ``ceil(peak to its busiest destination /
55,000)`` IPs. In automatic mode that count is the floor AWS must reach at the peak; it is planned and checked
against the 32-per-AZ limit, but no request can set it.

:func:`plan_aws_nat` is the one entry point, and it takes demand per AZ and per destination: measured demand
is a mapping of AZ to ``{destination: peak}`` (the busiest destination sizes the AZ); ``wirespeed size aws-natgw``,
``NatEgress`` and the Terraform generators call it with one figure per AZ (the busiest destination's). ``size
aws-natgw --from-prometheus`` sizes each AZ from the agents' per-(AZ, destination) sums plus headroom with the same
per-AZ function (:func:`wirespeed.sizing.measured.plan_aws_nat_measured`) and gathers them with
:func:`measured_plan` into an :class:`AwsNatPlan`, for the gateways and quotas. Pure: no cloud SDK.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wirespeed.errors import UserError
from wirespeed.problems import Problem
from wirespeed.sizing.errors import InfeasibleError, SizingError, check_whole
from wirespeed.sizing.nat_gateway import (
    AVAILABILITY_MODES,
    AWS_CONNECTIONS_PER_IP,
    MAX_DEMAND,
    NAT_GATEWAY_EIPS,
    REGION_EIPS,
    ZONAL,
    NatGatewayPlan,
    Quota,
    aws_max_ips,
    plan_aws_nat_gateway,
)

# A regional gateway's IP handling (docs.aws.amazon.com/vpc/latest/userguide/nat-gateways-regional.html, "Regional
# NAT gateways support two modes"): AWS manages the IPs (automatic, AWS's recommendation), or you give each AZ's
# Elastic IPs (manual). A zonal gateway only ever has the IPs you give it. wirespeed defaults to manual: it is the
# only mode whose addresses are yours to allow-list before traffic flows, and whose count the plan decides.
MANUAL = "manual"
AUTOMATIC = "automatic"
IP_MODES = (MANUAL, AUTOMATIC)
# An AZ name (eu-west-1a) or AZ ID (euw1-az1): it becomes part of resource names.
AZ_PATTERN = re.compile(r"^[a-z0-9-]{1,32}$")
# An AZ ID as the EC2 API spells it (use1-az1, euw1-az3): a regional gateway's AvailabilityZoneAddresses take it as
# AvailabilityZoneId, a name as AvailabilityZone (EC2 API reference, AvailabilityZoneAddress).
AZ_ID_PATTERN = re.compile(r"^[a-z]+[0-9]+-az[0-9]+$")
# `wirespeed size aws-natgw --connections N` without --az: AZs the plan assumes (EKS wants subnets in at least two;
# most Regions have three or more).
DEFAULT_AZS = 3

# Per AZ: the peak to its busiest destination, or the peak to each destination (measured demand).
Demand = Mapping[str, int | Mapping[str, int]]


@dataclass(frozen=True)
class QuotaNeed:
    """What a plan needs of one account quota, against the quota's default."""

    quota: Quota
    required: int

    @property
    def default_suffices(self) -> bool:
        return self.required <= self.quota.default

    def to_json(self) -> dict[str, Any]:
        return self.quota.to_json() | {"required": self.required, "default_suffices": self.default_suffices}


@dataclass(frozen=True)
class AzNat:
    """One AZ: its IPs (a zonal gateway's, or a regional gateway's in that AZ) and the destination that sized them."""

    availability_zone: str
    plan: NatGatewayPlan
    busiest_destination: str | None = None

    def to_json(self) -> dict[str, Any]:
        p = self.plan
        return {
            "availability_zone": self.availability_zone,
            "busiest_destination": self.busiest_destination,
            "ips": p.ips,
            "demand": p.demand,
            "capacity": p.capacity,
            "headroom": p.headroom,
        }


@dataclass(frozen=True)
class AwsNatPlan:
    mode: str
    ip_mode: str
    zones: tuple[AzNat, ...]

    @property
    def gateways(self) -> int:
        return len(self.zones) if self.mode == ZONAL else 1

    @property
    def total_ips(self) -> int:
        return sum(z.plan.ips for z in self.zones)

    @property
    def max_ips_per_az(self) -> int:
        return aws_max_ips(self.mode)

    @property
    def quotas(self) -> tuple[QuotaNeed, ...]:
        """The account quotas the plan's Elastic IPs count against. Automatic mode allocates none of yours: AWS
        adds its own and documents no account quota for them."""
        if self.ip_mode == AUTOMATIC:
            return ()
        needs = [QuotaNeed(REGION_EIPS, self.total_ips)]
        if self.mode == ZONAL:
            # Per gateway: the AZ with the most IPs decides (a quota increase applies to every gateway in the Region).
            needs.insert(0, QuotaNeed(NAT_GATEWAY_EIPS, max(z.plan.ips for z in self.zones)))
        return tuple(needs)

    @property
    def default_quotas_suffice(self) -> bool:
        return all(q.default_suffices for q in self.quotas)

    @property
    def warnings(self) -> list[str]:
        return [f"{z.availability_zone}: {w}" for z in self.zones for w in z.plan.warnings] + self.region_warnings

    @property
    def region_warnings(self) -> list[str]:
        """The warnings about the Region as a whole (each AZ's own are in its plan's warnings)."""
        out = []
        for need in self.quotas:
            if need.quota is REGION_EIPS and not need.default_suffices:
                out.append(
                    f"Warning: {need.required} Elastic IPs in all exceed the default quota of {REGION_EIPS.default} "
                    f"Elastic IPs per Region; raise {REGION_EIPS.label} to at least {need.required} (plus the "
                    "Elastic IPs the Region already holds) first."
                )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "cloud": "aws",
            "mode": self.mode,
            "ip_mode": self.ip_mode,
            "gateways": self.gateways,
            "per_ip": AWS_CONNECTIONS_PER_IP,
            "max_ips_per_az": self.max_ips_per_az,
            "zones": [z.to_json() for z in self.zones],
            "total_ips": self.total_ips,
            "quotas": [q.to_json() for q in self.quotas],
            "default_quotas_suffice": self.default_quotas_suffice,
            "warnings": self.warnings,
        }

    @property
    def headline(self) -> str:
        """The gateways and how their IPs come, in one line."""
        if self.mode == ZONAL:
            return (
                f"Zonal: {self.gateways} NAT gateway(s), one per AZ, each with 1 primary + up to "
                f"{self.max_ips_per_az - 1} secondary IPs."
            )
        how = "Elastic IPs you give each AZ" if self.ip_mode == MANUAL else "IPs AWS adds as an AZ needs them"
        return f"Regional: 1 NAT gateway across {len(self.zones)} AZ(s), {how}, up to {self.max_ips_per_az} per AZ."

    @property
    def quota_lines(self) -> list[str]:
        """Each quota the plan's Elastic IPs count against, with its default and whether that suffices."""
        lines = []
        if self.ip_mode == AUTOMATIC:
            lines.append(
                "Quotas: AWS allocates automatic mode's IPs itself; its documentation names no account quota for them."
            )
        for need in self.quotas:
            verdict = "the default suffices" if need.default_suffices else "raise it first"
            lines.append(f"Quota {need.quota.label}: {need.required} needed, default {need.quota.default}: {verdict}.")
        return lines

    def explain(self) -> str:
        lines = [self.headline]
        for z in self.zones:
            to = f" to {z.busiest_destination}" if z.busiest_destination else " to the busiest destination"
            floor = " (the floor AWS must reach)" if self.ip_mode == AUTOMATIC else ""
            lines.append(
                f"  {z.availability_zone}: {z.plan.demand:,} connections{to} / {AWS_CONNECTIONS_PER_IP:,} per IP -> "
                f"{z.plan.ips} IP(s){floor}, {z.plan.capacity:,} capacity ({z.plan.headroom:,} spare)."
            )
        lines.extend(self.quota_lines)
        lines.extend(self.warnings)
        return "\n".join(lines)


class AwsNatInputError(UserError, ValueError):
    """Every problem of one demand (bad AZ names, bad figures, AZs no gateway can carry), in one message."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        # Raised only with at least one problem (plan_aws_nat, measured_plan).
        self.field = problems[0].field.partition("[")[0]
        super().__init__("; ".join(str(p) for p in problems))


def _busiest(az_demand: object) -> tuple[object, str | None]:
    """(peak, destination) of one AZ's demand: a number is the busiest destination's peak itself."""
    if isinstance(az_demand, Mapping):
        if not az_demand:
            return az_demand, None
        destination = max(az_demand, key=lambda d: (_sortable(az_demand[d]), str(d)))
        return az_demand[destination], str(destination)
    return az_demand, None


def _sortable(value: object) -> float:
    """A destination's peak for choosing the busiest: anything but a number loses to every number."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else -math.inf


def _check_modes(mode: object, ip_mode: object) -> list[Problem]:
    problems = []
    if mode not in AVAILABILITY_MODES:
        problems.append(Problem("mode", mode, " or ".join(repr(m) for m in AVAILABILITY_MODES)))
    if ip_mode not in IP_MODES:
        problems.append(Problem("ip_mode", ip_mode, " or ".join(repr(m) for m in IP_MODES)))
    elif mode == ZONAL and ip_mode == AUTOMATIC:
        problems.append(Problem("ip_mode", ip_mode, f"{MANUAL!r} with mode 'zonal' (only regional gateways add IPs)"))
    return problems


def check_aws_nat(
    demand: Demand, mode: str = ZONAL, ip_mode: str = MANUAL, *, field: str = "demand"
) -> tuple[AwsNatPlan | None, list[Problem]]:
    """The plan, or every problem with the inputs: AZ names, each AZ's figures (``field[az]``, or
    ``field[az][destination]`` for measured demand) and AZs that need more IPs than the mode allows."""
    problems = _check_modes(mode, ip_mode)
    if not isinstance(demand, Mapping) or not demand:
        return None, [*problems, Problem(field, demand, "a mapping of AZ name to peak connections")]
    zones = []
    for az, az_demand in demand.items():
        if not isinstance(az, str) or not AZ_PATTERN.match(az):
            problems.append(Problem(f"{field}[{az!r}]", az, "an AZ name such as 'eu-west-1a'"))
            continue
        peak, destination = _busiest(az_demand)
        where = f"{field}[{az!r}]" + (f"[{destination!r}]" if destination is not None else "")
        if isinstance(az_demand, Mapping) and not az_demand:
            problems.append(Problem(where, az_demand, "at least one destination's peak connections"))
            continue
        if isinstance(az_demand, Mapping):
            # Every destination's figure is checked, not only the busiest's: a bad one elsewhere is bad input too.
            for other, value in az_demand.items():
                if other == destination:
                    continue
                try:
                    check_whole(f"{field}[{az!r}][{other!r}]", value, 1, MAX_DEMAND)
                except SizingError as exc:
                    problems.append(Problem(exc.field, exc.value, exc.allowed))
        try:
            zone_mode = mode if mode in AVAILABILITY_MODES else ZONAL
            zones.append(AzNat(az, plan_aws_nat_gateway(peak, zone_mode), destination))  # type: ignore[arg-type]
        except SizingError as exc:
            problems.append(Problem(where, peak, exc.allowed))
        except InfeasibleError as exc:
            problems.append(Problem(where, peak, str(exc).removeprefix("connections: ")))
    if problems:
        return None, problems
    return AwsNatPlan(mode, ip_mode, tuple(zones)), []


def plan_aws_nat(demand: Demand, mode: str = ZONAL, ip_mode: str = MANUAL) -> AwsNatPlan:
    """IPs per AZ, gateways and the quotas they need, for peak concurrent connections per AZ and destination.

    ``demand`` maps each AZ to its busiest destination's peak, or to ``{destination: peak}`` (the busiest one
    sizes the AZ). :class:`AwsNatInputError` lists every problem at once.
    """
    plan, problems = check_aws_nat(demand, mode, ip_mode)
    if plan is None:
        raise AwsNatInputError(problems)
    return plan


def uniform_demand(connections: int, azs: int = DEFAULT_AZS) -> dict[str, int]:
    """One figure for ``azs`` AZs named az1, az2, ... (when only a count is known)."""
    return {f"az{i}": connections for i in range(1, azs + 1)}


def measured_plan(mode: str, ip_mode: str, zones: list[AzNat]) -> AwsNatPlan:
    """The plan of AZs already sized from measured peaks (``--from-prometheus``: each AZ's busiest destination
    summed over its nodes, plus headroom), for its gateways, quotas and warnings; ``ip_mode`` as
    :func:`check_aws_nat` allows it."""
    problems = _check_modes(mode, ip_mode)
    if problems:
        raise AwsNatInputError(problems)
    return AwsNatPlan(mode, ip_mode, tuple(zones))
