"""``NatEgress``: one public NAT gateway per AZ with as many Elastic IPs as the busiest destination needs.

A thin adapter over :func:`wirespeed.aws.egress.plan_egress` (pure). Each gateway gets its primary allocation
and the rest as ``secondary_allocation_ids`` (never mixed with ``aws.ec2.NatGatewayEipAssociation``, which
would fight over the same list). Optional: the private route tables' default route, and a CloudWatch alarm per
gateway on ``ErrorPortAllocation`` > 0 (the gateway could not allocate a source port: connections are failing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from wirespeed.aws.egress import ALARM_PERIOD_SECONDS, EgressPlan, plan_egress
from wirespeed.aws.snat import nat_gateway_outbound
from wirespeed.problems import InvalidInputError, Problem
from wirespeed.profile import Outbound
from wirespeed.pulumi_inputs import input_properties_error

TYPE_TOKEN = "wirespeed:index:NatEgress"


@dataclass
class NatEgressArgs:
    """Inputs of :class:`NatEgress`. Required first, then optional alphabetically."""

    public_subnet_ids: Mapping[str, pulumi.Input[str]]
    """AZ name -> the public subnet its NAT gateway lives in. The keys are plain strings: they decide how many
    gateways exist and name them."""

    peak_connections: int | Mapping[str, int]
    """Peak simultaneous connections from one AZ to its busiest single destination (IP, port, protocol): one
    figure for every AZ, or one per AZ. 55,000 per IP; more than 440,000 (8 IPs) is refused."""

    alarm_actions: pulumi.Input[Sequence[pulumi.Input[str]]] | None = None
    """SNS topic ARNs the ``ErrorPortAllocation`` alarms notify. Only with ``alarms=True``."""

    alarms: bool = True
    """A CloudWatch alarm per gateway on ``ErrorPortAllocation`` > 0 in any minute."""

    private_route_table_ids: Mapping[str, pulumi.Input[str]] | None = None
    """AZ name -> private route table: adds its ``0.0.0.0/0`` route to that AZ's gateway. Keys must be AZs of
    ``public_subnet_ids``. ``None``: routes are wired elsewhere."""

    tags: Mapping[str, str] = field(default_factory=dict)
    """AWS tags on every gateway, Elastic IP and alarm."""


def _check(args: NatEgressArgs) -> EgressPlan:
    plan, problems = plan_egress(args.public_subnet_ids, args.peak_connections)
    if args.private_route_table_ids is not None:
        extra = sorted(set(args.private_route_table_ids) - set(args.public_subnet_ids or {}))
        if extra:
            problems.append(
                Problem("private_route_table_ids", extra, "AZs that have a public subnet in public_subnet_ids")
            )
    if not isinstance(args.alarms, bool):
        problems.append(Problem("alarms", args.alarms, "True or False"))
    elif args.alarm_actions is not None and not args.alarms:
        problems.append(Problem("alarm_actions", "given", "only with alarms=True"))
    if problems or plan is None:
        raise input_properties_error(InvalidInputError("invalid NatEgressArgs", problems))
    return plan


class NatEgress(pulumi.ComponentResource):
    """Public NAT gateways, one per AZ, sized from the workload's connections to its busiest destination."""

    nat_gateway_ids: pulumi.Output[dict[str, str]]
    """AZ name -> NAT gateway ID."""
    public_ips: pulumi.Output[dict[str, list[str]]]
    """AZ name -> the gateway's public IPs (primary first): what destinations must allow-list."""
    plan: EgressPlan
    """IPs per AZ with demand, capacity and warnings (plain data)."""
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
        gateway_ids: dict[str, pulumi.Output[str]] = {}
        ips: dict[str, pulumi.Output[list[str]]] = {}
        for zone in plan.zones:
            az = zone.availability_zone
            child = pulumi.ResourceOptions(parent=self)
            eips = [
                aws.ec2.Eip(
                    f"{name}-{az}-eip-{index}", domain="vpc", tags=tags | {"Name": f"{name}-{az}-{index}"}, opts=child
                )
                for index in range(zone.plan.ips)
            ]
            gateway = aws.ec2.NatGateway(
                f"{name}-{az}",
                connectivity_type="public",
                subnet_id=args.public_subnet_ids[az],
                allocation_id=eips[0].allocation_id,
                secondary_allocation_ids=[e.allocation_id for e in eips[1:]] or None,
                tags=tags | {"Name": f"{name}-{az}"},
                opts=child,
            )
            gateway_ids[az] = gateway.id
            ips[az] = pulumi.Output.all(*[e.public_ip for e in eips])
            if args.private_route_table_ids is not None and az in args.private_route_table_ids:
                aws.ec2.Route(
                    f"{name}-{az}-default-route",
                    route_table_id=args.private_route_table_ids[az],
                    destination_cidr_block="0.0.0.0/0",
                    nat_gateway_id=gateway.id,
                    opts=child,
                )
            if args.alarms:
                aws.cloudwatch.MetricAlarm(
                    f"{name}-{az}-port-allocation",
                    alarm_description=(
                        f"NAT gateway {name} in {az} failed to allocate source ports: connections are failing. "
                        f"Sized for {zone.plan.demand:,} connections to one destination ({zone.plan.ips} IP(s)); "
                        "add IPs (up to 8) or spread calls over more destination IPs."
                    ),
                    namespace="AWS/NATGateway",
                    metric_name="ErrorPortAllocation",
                    dimensions={"NatGatewayId": gateway.id},
                    statistic="Sum",
                    period=ALARM_PERIOD_SECONDS,
                    evaluation_periods=1,
                    threshold=0,
                    comparison_operator="GreaterThanThreshold",
                    treat_missing_data="notBreaching",
                    alarm_actions=args.alarm_actions,
                    tags=tags or None,
                    opts=child,
                )
        self.nat_gateway_ids = pulumi.Output.all(**gateway_ids) if gateway_ids else pulumi.Output.from_input({})
        self.public_ips = pulumi.Output.all(**ips) if ips else pulumi.Output.from_input({})
        self.register_outputs({"nat_gateway_ids": self.nat_gateway_ids, "public_ips": self.public_ips})
