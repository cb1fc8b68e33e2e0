# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""``NatEgress``: public NAT gateways sized from the busiest destination, zonal (one per AZ) or regional (one).

A thin adapter over :func:`wirespeed.aws.egress.plan_egress` (pure). Zonal: per AZ, Elastic IPs and a gateway in
the AZ's public subnet with the first IP as ``allocationId`` and the rest as ``secondaryAllocationIds`` (never mixed
with ``aws.ec2.NatGatewayEipAssociation``, which would fight over the same list). Regional: one gateway
(``availability_mode="regional"`` and ``vpc_id``, which the pinned pulumi-aws 7.51.1 takes) with each AZ's Elastic
IPs as ``availabilityZoneAddresses`` (manual) or none at all (automatic: AWS adds IPs and AZs itself). Optional: the
private route tables' default route, and a CloudWatch alarm per gateway on ``ErrorPortAllocation`` > 0 (the
gateway could not allocate a source port: connections are failing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from wirespeed.aws.egress import (
    ALARM_PERIOD_SECONDS,
    AUTOMATIC,
    AZ_ID_PATTERN,
    MANUAL,
    REGIONAL,
    ZONAL,
    AzEgress,
    EgressPlan,
    check_egress,
    measured_from_problems,
)
from wirespeed.aws.snat import nat_gateway_outbound
from wirespeed.problems import InvalidInputError
from wirespeed.profile import Outbound
from wirespeed.pulumi_inputs import input_properties_error
from wirespeed.rules._accepted_args import accepted_advisories_problems, accepted_labels

TYPE_TOKEN = "wirespeed:index:NatEgress"


@dataclass
class NatEgressArgs:
    """Inputs of :class:`NatEgress`. Required first, then optional alphabetically."""

    peak_connections: int | Mapping[str, int]
    """Peak simultaneous connections from one AZ to its busiest single destination (IP, port, protocol): one
    figure for every AZ, or one per AZ. 55,000 per IP; more than 8 IPs (440,000) is refused for a zonal gateway,
    more than 32 per AZ (1,760,000) for a regional one."""

    alarm_actions: pulumi.Input[Sequence[pulumi.Input[str]]] | None = None
    """SNS topic ARNs the ``ErrorPortAllocation`` alarms notify. Only with ``alarms=True``."""

    alarms: bool = True
    """A CloudWatch alarm per gateway on ``ErrorPortAllocation`` > 0 in any minute."""

    availability_zones: Sequence[str] | None = None
    """Regional only: the AZs (names, or IDs such as ``euw1-az1``) the gateway is sized for and, in manual mode,
    serves. Plain strings: they decide how many Elastic IPs exist and name them."""

    ip_mode: str = MANUAL
    """Regional only: ``"manual"`` (the sized Elastic IPs per AZ, yours to allow-list) or ``"automatic"`` (AWS adds
    IPs and AZs as workloads need them; the sized count per AZ is then the floor it must reach)."""

    measured_from: str | None = None
    """Where ``peak_connections`` was measured: the source line `wirespeed size aws-natgw --from-prometheus` prints
    (the busiest AZ's, when one figure serves every AZ). One line, at most 512 characters; registered as the
    component's ``measured_from`` output, so a plan and a pull request show what the IPs were sized from."""

    mode: str = ZONAL
    """``"zonal"``: one gateway per AZ in its public subnet (at most 8 IPs each). ``"regional"``: one gateway for
    the VPC, no public subnet, up to 32 IPs per AZ."""

    private_route_table_ids: Mapping[str, pulumi.Input[str]] | None = None
    """AZ name -> private route table: adds its ``0.0.0.0/0`` route to that AZ's gateway (regional: the one
    gateway). Keys must be AZs of the plan. ``None``: routes are wired elsewhere."""

    public_subnet_ids: Mapping[str, pulumi.Input[str]] | None = None
    """Zonal only (required there): AZ name -> the public subnet its NAT gateway lives in. The keys are plain
    strings: they decide how many gateways exist and name them."""

    tags: Mapping[str, str] = field(default_factory=dict)
    """AWS tags on every gateway, Elastic IP and alarm."""

    accepted_advisories: Mapping[str, str] | None = None
    """Advisory rule id -> the written reason this egress keeps that rule's finding (at most 256 characters), e.g.
    ``{"aws-natgw-eip-quota": "quota L-5F53652F raised to 3 in this account (case 123)"}``: written on each gateway
    as the tag ``wirespeed.io.accept-<rule id>``, which the policy pack and `wirespeed check` report as "accepted:
    <reason>" instead of a finding. Mandatory rules (aws-natgw-capacity) are refused: their findings cannot be
    accepted this way. ``None``: no reasons (docs/policy-gates.md, "Keeping an advisory with a reason")."""

    vpc_id: pulumi.Input[str] | None = None
    """Regional only (required there): the VPC the gateway serves."""


def _check(args: NatEgressArgs) -> EgressPlan:
    plan, problems = check_egress(
        args.public_subnet_ids,
        args.peak_connections,
        args.mode,
        args.ip_mode,
        args.availability_zones,
        vpc_id=args.vpc_id,
        private_route_table_ids=args.private_route_table_ids,
        alarms=args.alarms,
        alarm_actions=args.alarm_actions,
    )
    problems = [
        *problems,
        *measured_from_problems(args.measured_from, "measured_from"),
        *accepted_advisories_problems(args.accepted_advisories),
    ]
    if problems or plan is None:
        raise input_properties_error(InvalidInputError("invalid NatEgressArgs", problems))
    return plan


def _zone_address(az: str, allocation_ids: list[pulumi.Output[str]]) -> aws.ec2.NatGatewayAvailabilityZoneAddressArgs:
    """One AZ's Elastic IPs on a regional gateway, under the field its identifier's shape asks for."""
    if AZ_ID_PATTERN.match(az):
        return aws.ec2.NatGatewayAvailabilityZoneAddressArgs(availability_zone_id=az, allocation_ids=allocation_ids)
    return aws.ec2.NatGatewayAvailabilityZoneAddressArgs(availability_zone=az, allocation_ids=allocation_ids)


class NatEgress(pulumi.ComponentResource):
    """Public NAT gateways, zonal or regional, sized from the workload's connections to its busiest destination."""

    nat_gateway_ids: pulumi.Output[dict[str, str]]
    """AZ name -> the NAT gateway serving it (regional: the same gateway for every AZ)."""
    public_ips: pulumi.Output[dict[str, list[str]]]
    """AZ name -> the public IPs its traffic leaves from (primary first): what destinations must allow-list. In
    automatic mode, the addresses AWS had assigned when the gateway was last read."""
    plan: EgressPlan
    """IPs per AZ with demand, capacity, quotas and warnings (plain data)."""
    profile_outbound: Outbound
    """The tuning profile's outbound section for nodes behind these gateways (kind ``aws-nat-gateway``, the smallest
    AZ's IPs): give it to ``NetworkOptimizedNodeGroupArgs.outbound`` or ``KarpenterNodePoolArgs.outbound``."""

    def __init__(self, name: str, args: NatEgressArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        plan = _check(args)
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.plan = plan
        self.profile_outbound = nat_gateway_outbound({z.availability_zone: z.plan.ips for z in plan.zones})
        for warning in plan.warnings:
            pulumi.log.warn(warning, resource=self)
        tags = dict(args.tags)
        gateway_tags = tags | accepted_labels(args.accepted_advisories)  # the resource the NAT rules judge
        child = pulumi.ResourceOptions(parent=self)
        eips = {
            zone.availability_zone: [
                aws.ec2.Eip(
                    f"{name}-{zone.availability_zone}-eip-{index}",
                    domain="vpc",
                    tags=tags | {"Name": f"{name}-{zone.availability_zone}-{index}"},
                    opts=child,
                )
                for index in range(zone.plan.ips)
            ]
            for zone in plan.zones
            if plan.ip_mode == MANUAL
        }
        gateways: dict[str, aws.ec2.NatGateway] = {}
        ips: dict[str, pulumi.Output[list[str]]] = {}
        if plan.mode == ZONAL:
            for az, addresses in eips.items():
                gateways[az] = aws.ec2.NatGateway(
                    f"{name}-{az}",
                    connectivity_type="public",
                    subnet_id=(args.public_subnet_ids or {})[az],
                    allocation_id=addresses[0].allocation_id,
                    secondary_allocation_ids=[e.allocation_id for e in addresses[1:]] or None,
                    tags=gateway_tags | {"Name": f"{name}-{az}"},
                    opts=child,
                )
                ips[az] = pulumi.Output.all(*[e.public_ip for e in addresses])
        else:
            gateway = aws.ec2.NatGateway(
                name,
                availability_mode=REGIONAL,
                connectivity_type="public",
                vpc_id=args.vpc_id,
                availability_zone_addresses=[
                    _zone_address(az, [e.allocation_id for e in addresses]) for az, addresses in eips.items()
                ]
                or None,
                tags=gateway_tags | {"Name": name},
                opts=child,
            )
            gateways = dict.fromkeys((z.availability_zone for z in plan.zones), gateway)
            if plan.ip_mode == AUTOMATIC:
                ips = {az: _assigned_ips(gateway, az) for az in gateways}
            else:
                ips = {az: pulumi.Output.all(*[e.public_ip for e in addresses]) for az, addresses in eips.items()}
        self._routes(name, args, gateways, child)
        if args.alarms:
            self._alarms(name, args, plan, gateways, tags, child)
        gateway_ids = {az: gw.id for az, gw in gateways.items()}
        self.nat_gateway_ids = pulumi.Output.all(**gateway_ids) if gateway_ids else pulumi.Output.from_input({})
        self.public_ips = pulumi.Output.all(**ips) if ips else pulumi.Output.from_input({})
        outputs: dict[str, object] = {"nat_gateway_ids": self.nat_gateway_ids, "public_ips": self.public_ips}
        if args.measured_from is not None:
            outputs["measured_from"] = args.measured_from.strip()
        self.register_outputs(outputs)

    @staticmethod
    def _routes(
        name: str, args: NatEgressArgs, gateways: Mapping[str, aws.ec2.NatGateway], child: pulumi.ResourceOptions
    ) -> None:
        for az, table in (args.private_route_table_ids or {}).items():
            aws.ec2.Route(
                f"{name}-{az}-default-route",
                route_table_id=table,
                destination_cidr_block="0.0.0.0/0",
                nat_gateway_id=gateways[az].id,
                opts=child,
            )

    @staticmethod
    def _alarms(
        name: str,
        args: NatEgressArgs,
        plan: EgressPlan,
        gateways: Mapping[str, aws.ec2.NatGateway],
        tags: Mapping[str, str],
        child: pulumi.ResourceOptions,
    ) -> None:
        # One alarm per gateway on the dimension AWS documents (NatGatewayId; the NAT gateway metrics page lists no
        # other): a regional gateway's alarm covers all its AZs.
        if plan.mode == ZONAL:
            targets = [(f"{name}-{z.availability_zone}", z.availability_zone, [z]) for z in plan.zones]
        else:
            targets = [(name, next(iter(gateways)), list(plan.zones))]
        for resource_name, az, zones in targets:
            aws.cloudwatch.MetricAlarm(
                f"{resource_name}-port-allocation",
                alarm_description=_alarm_text(name, plan, zones),
                namespace="AWS/NATGateway",
                metric_name="ErrorPortAllocation",
                dimensions={"NatGatewayId": gateways[az].id},
                statistic="Sum",
                period=ALARM_PERIOD_SECONDS,
                evaluation_periods=1,
                threshold=0,
                comparison_operator="GreaterThanThreshold",
                treat_missing_data="notBreaching",
                alarm_actions=args.alarm_actions,
                tags=dict(tags) or None,
                opts=child,
            )


def _alarm_text(name: str, plan: EgressPlan, sized: Sequence[AzEgress]) -> str:
    if plan.mode == ZONAL:
        (zone,) = sized
        return (
            f"NAT gateway {name} in {zone.availability_zone} failed to allocate source ports: connections are "
            f"failing. Sized for {zone.plan.demand:,} connections to one destination ({zone.plan.ips} IP(s)); add "
            f"IPs (up to {plan.max_ips_per_az}) or spread calls over more destination IPs."
        )
    per_az = ", ".join(f"{z.availability_zone} {z.plan.demand:,} ({z.plan.ips} IP(s))" for z in sized)
    fix = (
        f"add Elastic IPs in the AZ that ran out (up to {plan.max_ips_per_az} per AZ)"
        if plan.ip_mode == MANUAL
        else f"AWS adds IPs in automatic mode (up to {plan.max_ips_per_az} per AZ): errors mean it has not caught up"
    )
    return (
        f"Regional NAT gateway {name} failed to allocate source ports: connections are failing. Sized per AZ for "
        f"connections to one destination: {per_az}; {fix}, or spread calls over more destination IPs."
    )


def _assigned_ips(gateway: aws.ec2.NatGateway, az: str) -> pulumi.Output[list[str]]:
    """The public IPs AWS assigned in ``az`` (automatic mode), as the provider last read them."""

    def in_zone(addresses: Sequence[aws.ec2.outputs.NatGatewayRegionalNatGatewayAddress]) -> list[str]:
        return [
            a.public_ip for a in addresses or [] if a.public_ip and az in (a.availability_zone, a.availability_zone_id)
        ]

    return gateway.regional_nat_gateway_addresses.apply(in_zone)
