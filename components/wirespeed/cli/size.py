"""`wirespeed size ...`: outbound SNAT, NAT gateways, NIC rings, the netdev backlog and MTU."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from wirespeed.cli._common import JsonFlag, emit, fail, run

size_app = typer.Typer(
    help="Size outbound SNAT, NAT gateways, NIC rings, the netdev backlog and MTU.", no_args_is_help=True
)

AZURE_LB_EPILOG = (
    "Examples:\n\n"
    "  wirespeed size azure-lb --pool 100:2 --ports 4000 --outbound-ips 7   (the AKS docs' example: fits)\n\n"
    "  wirespeed size azure-lb --pool 60:10% --pool 5:1 --connections-per-second 12 --json\n\n"
    "Exit 0 when it fits; 2 with one line naming required vs available, or the bad field."
)


@size_app.command("azure-lb", epilog=AZURE_LB_EPILOG)
def size_azure_lb(
    pool: Annotated[
        list[str],
        typer.Option(
            "--pool",
            metavar="MAX[:SURGE]",
            help="A node pool: its autoscaler maxCount and upgrade maxSurge as nodes or a percent "
            "(100, 100:2, 100:10%). Repeat per pool. SURGE defaults to 10% (the AKS API default).",
        ),
    ],
    ports: Annotated[
        int | None,
        typer.Option(help="Use this allocatedOutboundPorts (multiple of 8, 8..64,000) instead of a workload."),
    ] = None,
    connections_per_second: Annotated[
        float | None,
        typer.Option(
            help="Peak NEW outbound connections per second from one node to its busiest single destination "
            "(IP, port, protocol). Pooled keep-alive connections barely count; retry storms do."
        ),
    ] = None,
    hold_seconds: Annotated[
        float,
        typer.Option(
            help="Seconds a SNAT port stays taken per connection: its lifetime plus Azure's reuse cooldown (4 minutes)."
        ),
    ] = 240.0,
    headroom: Annotated[float, typer.Option(help="Multiplier over the computed ports for bursts (1..10).")] = 1.25,
    outbound_ips: Annotated[
        int | None,
        typer.Option(help="Check this managed outbound IP count (1..100) instead of computing the minimum."),
    ] = None,
    as_json: JsonFlag = False,
    plot: Annotated[
        Path | None,
        typer.Option(metavar="FILE.png", help="Draw port demand and capacity against node count."),
    ] = None,
) -> None:
    """Size AKS load balancer outbound SNAT: allocatedOutboundPorts and managed outbound IPs.

    AKS rejects a cluster unless ports-per-node x (every pool's maxCount + maxSurge) <= 64,000 x outbound IPs.
    Left at 0, Azure gives each node 1,024 ports up to 50 nodes and silently halves them at 51, 101, 201...
    nodes, so a pool that scales out starves every existing node of SNAT ports. Set the printed
    allocatedOutboundPorts and managedOutboundIPs.count in networkProfile.loadBalancerProfile.
    """
    from wirespeed.sizing import azure_lb
    from wirespeed.sizing.errors import SizingError

    def build() -> azure_lb.LoadBalancerPlan:
        pools = [azure_lb.Pool.parse(spec) for spec in pool]
        workload = None
        if connections_per_second is not None:
            workload = azure_lb.Workload(connections_per_second, hold_seconds, headroom)
        elif ports is None:
            raise SizingError(
                "--ports/--connections-per-second", None, "give one: an explicit port count or the workload"
            )
        if ports is not None and workload is not None:
            raise SizingError("--ports", ports, "give either --ports or --connections-per-second, not both")
        return azure_lb.plan_load_balancer(pools, ports=ports, workload=workload, outbound_ips=outbound_ips)

    plan: azure_lb.LoadBalancerPlan = run(build)
    emit(plan, as_json)
    if plot is not None:
        from wirespeed.plot import plot_load_balancer

        plot_load_balancer(plan, plot)
        if not as_json:
            typer.echo(f"Plot written to {plot}")
    if not plan.feasible:
        fail(
            f"ports: {plan.ports_required:,} required ({plan.allocated_outbound_ports:,} x {plan.nodes_at_max:,} "
            f"nodes) but {plan.ports_available:,} available ({plan.outbound_ips} IP(s) x 64,000)"
        )


@size_app.command("azure-natgw")
def size_azure_natgw(
    flows: Annotated[int, typer.Option(help="Peak concurrent outbound flows from the whole subnet.")],
    as_json: JsonFlag = False,
) -> None:
    """Size an Azure NAT gateway: public IPs (64,512 SNAT ports each, at most 16), allocated on demand."""
    from wirespeed.sizing.nat_gateway import plan_azure_nat_gateway

    emit(run(lambda: plan_azure_nat_gateway(flows)), as_json)


@size_app.command("aws-natgw")
def size_aws_natgw(
    connections: Annotated[
        int, typer.Option(help="Peak concurrent connections through one AZ's gateway to its busiest destination.")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Size an AWS NAT gateway (per AZ): IPs at 55,000 connections per destination each, at most 8."""
    from wirespeed.sizing.nat_gateway import plan_aws_nat_gateway

    emit(run(lambda: plan_aws_nat_gateway(connections)), as_json)


StallOption = Annotated[float | None, typer.Option(help="Milliseconds the consumer may stall.")]
PacketOption = Annotated[int, typer.Option(help="IP packet size in bytes (64..9,216).")]


@size_app.command("rings")
def size_rings(
    driver: Annotated[str, typer.Option(help="NIC driver as `ethtool -i` names it: mlx5_core, mana, ena, ...")],
    line_rate_gbps: Annotated[float, typer.Option(help="Line rate of the host NIC behind the VF, Gb/s.")],
    stall_ms: StallOption = None,
    packet_bytes: PacketOption = 1_500,
    queues: Annotated[int, typer.Option(help="RX queues, for the memory estimate (`ethtool -l`).")] = 8,
    as_json: JsonFlag = False,
) -> None:
    """Size NIC RX/TX rings to absorb a receive stall at line rate (default 1 ms), by the driver's rules."""
    from wirespeed.sizing import rings

    stall = rings.DEFAULT_STALL_MS if stall_ms is None else stall_ms
    emit(
        run(lambda: rings.plan_rings(driver, line_rate_gbps, stall_ms=stall, packet_bytes=packet_bytes, queues=queues)),
        as_json,
    )


@size_app.command("backlog")
def size_backlog(
    line_rate_gbps: Annotated[float, typer.Option(help="Line rate into one CPU's backlog, Gb/s.")],
    stall_ms: StallOption = None,
    packet_bytes: PacketOption = 1_500,
    as_json: JsonFlag = False,
) -> None:
    """Size net.core.netdev_max_backlog to absorb a softirq delay (default 4 ms, one tick at HZ=250)."""
    from wirespeed.sizing import backlog

    stall = backlog.DEFAULT_STALL_MS if stall_ms is None else stall_ms
    emit(run(lambda: backlog.plan_backlog(line_rate_gbps, stall_ms=stall, packet_bytes=packet_bytes)), as_json)


@size_app.command("mtu")
def size_mtu(
    driver: Annotated[str, typer.Option(help="mana, mlx5_core, mlx4_en or ena.")],
    crosses_gateway: Annotated[
        bool, typer.Option(help="Some traffic leaves the VNet/VPC (gateway, peering, internet).")
    ] = False,
    ena_express: Annotated[bool, typer.Option(help="ENA Express (SRD) is on.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """The largest MTU the NIC and path allow. Opt-in: wirespeed never raises MTU on its own."""
    from wirespeed.sizing.mtu import Path as Path_
    from wirespeed.sizing.mtu import plan_mtu

    path: Path_ = "gateway" if crosses_gateway else "local"
    emit(run(lambda: plan_mtu(driver, path=path, ena_express=ena_express)), as_json)
