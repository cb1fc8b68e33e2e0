"""`wirespeed size ...`: outbound SNAT, NAT gateways, NIC rings, the netdev backlog and MTU."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import Annotated

import typer

from wirespeed.cli import measured
from wirespeed.cli._common import JsonFlag, WholeHelp, emit, fail, flags_given, refuse_unused, run, writable_file
from wirespeed.install_hint import install_extra
from wirespeed.measure.prometheus import DEFAULT_TIMEOUT_S
from wirespeed.measure.snat import DEFAULT_STEP, DEFAULT_WINDOW
from wirespeed.measure.workloads import Attribution
from wirespeed.sizing import aws_nat, azure_lb, backlog, nat_gateway, rings
from wirespeed.sizing.errors import SizingError
from wirespeed.sizing.packets import DEFAULT_PACKET_BYTES

size_app = typer.Typer(
    rich_markup_mode=None,  # click's plain help: rich cut long flag names at 80 columns (--accept-unchecked-se…)
    cls=WholeHelp,
    help="Size outbound SNAT, NAT gateways, NIC rings, the netdev backlog and MTU.",
    no_args_is_help=True,
)

AZURE_LB_EPILOG = (
    "Examples:\n\n"
    "  wirespeed size azure-lb --pool 100:2 --ports 4000 --outbound-ips 7   (the AKS docs' example: fits)\n\n"
    "  wirespeed size azure-lb --pool 60:10% --pool 5:1 --connections-per-second 12 --json\n\n"
    "Exit 0 when it fits; 2 with one line naming required vs available, or the bad flag."
)

# The library names inputs as its API does; these are the flags a user typed for them.
SIZE_FLAGS = {
    "ports": "--ports",
    "outbound_ips": "--outbound-ips",
    "connections_per_second": "--connections-per-second",
    "hold_seconds": "--hold-seconds",
    "headroom": "--headroom",
    "pools": "--pool",
    "flows": "--flows",
    "connections": "--connections",
    "driver": "--driver",
    "line_rate_gbps": "--line-rate-gbps",
    "stall_ms": "--stall-ms",
    "packet_bytes": "--packet-bytes",
    "queues": "--queues",
    "ena_express": "--ena-express",
}

# The flags that say how Prometheus is read: without --from-prometheus nothing reads them.
MEASURED_ONLY = ("window", "timeout", "selector", "step", "bearer_token_file", "by_workload")
MEASURED_ONLY_REASON = (
    "only with --from-prometheus (how the measured peak is read from Prometheus); leave {it} out, or size from "
    "the measured peak with --from-prometheus URL"
)


def _refuse_measured_only(ctx: typer.Context, from_prometheus: str | None) -> None:
    if from_prometheus is None:
        refuse_unused(flags_given(ctx, *MEASURED_ONLY), MEASURED_ONLY_REASON)


_HALVINGS = ", ".join(f"{upper + 1:,}" for upper, _ in azure_lb.DYNAMIC_DEFAULT_TABLE[:3])
AZURE_LB_HELP = (
    "Size AKS load balancer outbound SNAT: allocatedOutboundPorts and managed outbound IPs.\n\n"
    "AKS rejects a cluster unless ports-per-node x (every pool's maxCount + maxSurge) <= "
    f"{azure_lb.PORTS_PER_IP:,} x outbound IPs. Left at 0, Azure gives each node "
    f"{azure_lb.DYNAMIC_DEFAULT_TABLE[0][1]:,} ports up to {azure_lb.DYNAMIC_DEFAULT_TABLE[0][0]:,} nodes and "
    f"silently halves them at {_HALVINGS}... nodes, so a pool that scales out starves every existing node of SNAT "
    "ports. Set the printed allocatedOutboundPorts and managedOutboundIPs.count in "
    "networkProfile.loadBalancerProfile."
)


# The azure-lb options, typed once here so the command's signature reads as a list of them.
PoolsOption = Annotated[
    list[str],
    typer.Option(
        "--pool",
        metavar="MAX[:SURGE]",
        help="A node pool: its autoscaler maxCount and upgrade maxSurge as nodes or a percent "
        f"(100, 100:2, 100:10%). Repeat per pool. SURGE defaults to {azure_lb.DEFAULT_SURGE_PERCENT:g}% "
        "(the AKS API default).",
    ),
]
PortsOption = Annotated[
    int | None,
    typer.Option(
        help=f"Use this allocatedOutboundPorts (multiple of {azure_lb.PORT_GRANULARITY}, "
        f"{azure_lb.PORT_GRANULARITY}..{azure_lb.MAX_PORTS_PER_NODE:,}) instead of a workload."
    ),
]
ConnectionsOption = Annotated[
    float | None,
    typer.Option(
        help="Peak NEW outbound connections per second from one node to its busiest single destination "
        "(IP, port, protocol). Pooled keep-alive connections barely count; retry storms do."
    ),
]
HoldSecondsOption = Annotated[
    float | None,
    typer.Option(
        help="Seconds a SNAT port stays taken per connection: its lifetime plus Azure's reuse cooldown. "
        f"Default {azure_lb.DEFAULT_WORKLOAD_HOLD_SECONDS:g} (TCP). UDP holds its port for the outbound idle timeout "
        "after the last packet, and every UDP flow of a node draws on one pool: size UDP by the node's new UDP flows "
        "per second with the idle timeout in seconds (1800 on AKS's default). Only with --connections-per-second."
    ),
]
HeadroomOption = Annotated[
    str | None,
    typer.Option(
        help=f"Headroom over the computed ports (--connections-per-second) or the measured peak (--from-prometheus): "
        f"a multiplier (1.25) or a percent (25%). Default {azure_lb.DEFAULT_HEADROOM:g}.",
    ),
]
OutboundIpsOption = Annotated[
    int | None,
    typer.Option(
        help=f"Check this managed outbound IP count (1..{azure_lb.MAX_OUTBOUND_IPS:,}) instead of computing "
        "the minimum."
    ),
]
PlotOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE.png",
        help="Draw port demand and capacity against node count, and with --by-workload the top workloads over the "
        "window (needs matplotlib; without it the sizing is still printed, a warning says how to add it, and the exit "
        "status is the sizing's).",
    ),
]
WorkloadPlotOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE.png",
        help="With --from-prometheus --by-workload: draw the top workloads' ports over the window (needs matplotlib; "
        "without it the sizing is still printed and a warning says how to add it).",
    ),
]


def _workload_plot(plot: Path | None, by_workload: bool) -> None:
    """``--plot`` of azure-natgw and aws-natgw: a drawing of the --by-workload answer, so only with it."""
    if plot is None:
        return
    if not by_workload:
        fail(
            f"--plot {plot}: only with --from-prometheus URL --by-workload (it draws the top workloads over the "
            "window); add them, or leave --plot out"
        )
    writable_file(plot, "--plot", (".png",))


@size_app.command("azure-lb", help=AZURE_LB_HELP, epilog=AZURE_LB_EPILOG)
def size_azure_lb(
    ctx: typer.Context,
    pool: PoolsOption,
    ports: PortsOption = None,
    connections_per_second: ConnectionsOption = None,
    hold_seconds: HoldSecondsOption = None,
    headroom: HeadroomOption = None,
    outbound_ips: OutboundIpsOption = None,
    as_json: JsonFlag = False,
    plot: PlotOption = None,
    from_prometheus: measured.FromPrometheusOption = None,
    window: measured.WindowOption = DEFAULT_WINDOW,
    timeout: measured.TimeoutOption = DEFAULT_TIMEOUT_S,
    selector: measured.SelectorOption = None,
    bearer_token_file: measured.TokenOption = None,
    by_workload: measured.ByWorkloadOption = False,
) -> None:
    _refuse_measured_only(ctx, from_prometheus)
    if plot is not None:
        writable_file(plot, "--plot", (".png",))
    if from_prometheus is not None:
        _check_measured_flags(ports, connections_per_second, hold_seconds)
        pools = _parse_pools(pool)
        source = measured.source(from_prometheus, window, timeout, selector, token=bearer_token_file)
        multiplier = measured.headroom(headroom)
        lb, lines, details, attributed = measured.azure_lb_from_prometheus(
            source, pools, multiplier, outbound_ips, by_workload, plot is not None
        )
        measured.emit_azure_lb(lb, lines, details, as_json, attributed)
        _finish(lb, plot, as_json, attributed)
        return
    _check_demand(ports, connections_per_second, hold_seconds, headroom)
    pools = _parse_pools(pool)
    workload = None
    demand_flags = "--ports"
    if connections_per_second is not None:
        demand_flags = "--connections-per-second"
        workload = run(
            lambda: azure_lb.Workload(
                connections_per_second,
                azure_lb.DEFAULT_WORKLOAD_HOLD_SECONDS if hold_seconds is None else hold_seconds,
                azure_lb.DEFAULT_HEADROOM if headroom is None else _multiplier(headroom),
            ),
            SIZE_FLAGS,
        )
    names = {
        **SIZE_FLAGS,
        "outbound IPs": f"outbound IPs for --pool x {demand_flags}",
        "ports per node": "ports per node for --connections-per-second x --hold-seconds x --headroom",
    }
    plan = run(
        lambda: azure_lb.plan_load_balancer(pools, ports=ports, workload=workload, outbound_ips=outbound_ips), names
    )
    emit(plan, as_json)
    _finish(plan, plot, as_json)


def _multiplier(text: str) -> float | Fraction:
    """``--headroom`` with --connections-per-second: a multiplier (checked by the sizing) or a percent."""
    if text.strip().endswith("%"):
        return measured.headroom(text)
    try:
        return float(text)
    except ValueError:
        fail(f"--headroom: {text!r} is not allowed: a multiplier (1.25) or a percent (25%)")


def _check_measured_flags(ports: int | None, connections_per_second: float | None, hold_seconds: float | None) -> None:
    given = [
        f"{flag} {value if isinstance(value, int) else format(value, 'g')}"
        for flag, value in (
            ("--ports", ports),
            ("--connections-per-second", connections_per_second),
            ("--hold-seconds", hold_seconds),
        )
        if value is not None
    ]
    if given:
        fail(
            f"{', '.join(given)}: not allowed with --from-prometheus, which sizes from the measured peak (the agent "
            "counts held ports itself); give one demand"
        )


def _finish(
    plan: azure_lb.LoadBalancerPlan, plot: Path | None, as_json: bool, workloads: Attribution | None = None
) -> None:
    """The plot when asked, and exit 2 when fixed IPs cannot carry the ports."""
    if plot is not None:
        _write_plot(plot, as_json, lambda path: _plot_load_balancer(plan, path, workloads))
    fix = plan.fix()
    if fix is not None:
        # The same numbers as aks-snat-capacity's fix in `wirespeed check`, worded with the flags typed here.
        fail(
            f"--outbound-ips {plan.outbound_ips}: {plan.outbound_ips} IP(s) x {azure_lb.PORTS_PER_IP:,} = "
            f"{plan.ports_available:,} ports available but {plan.ports_required:,} required "
            f"({plan.allocated_outbound_ports:,} x {plan.nodes_at_max:,} nodes); to fit, "
            f"{fix.text('--outbound-ips', '--ports', 'the pools (--pool)')}"
        )


def _check_demand(
    ports: int | None, connections_per_second: float | None, hold_seconds: float | None, headroom: str | None
) -> None:
    """Exactly one of --ports and --connections-per-second, and the workload's flags only with the workload."""
    if ports is not None:
        if connections_per_second is not None:
            fail(
                f"--ports {ports} and --connections-per-second {connections_per_second:g}: give one, not both "
                "(an explicit port count, or the workload to compute it from)"
            )
        extras = [
            f"{flag} {value if isinstance(value, str) else format(value, 'g')}"
            for flag, value in (("--hold-seconds", hold_seconds), ("--headroom", headroom))
            if value is not None
        ]
        if extras:
            fail(
                f"{', '.join(extras)}: applies only to --connections-per-second; with --ports {ports} it would "
                "be ignored, so leave it out"
            )
    elif connections_per_second is None:
        fail(
            "--ports or --connections-per-second is required: an explicit port count, or the workload's peak "
            "new connections per second to compute it from"
        )


def _matplotlib_missing() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("matplotlib") is None
    except ValueError:  # imported before and then removed
        return True


def _plot_load_balancer(plan: azure_lb.LoadBalancerPlan, path: Path, workloads: Attribution | None) -> None:
    from wirespeed.plot import plot_load_balancer

    plot_load_balancer(plan, path, workloads)


def _plot_workloads(attributions: list[Attribution], path: Path) -> None:
    from wirespeed.plot import plot_workloads

    plot_workloads(attributions, path)


def _write_plot(plot: Path, as_json: bool, draw: Callable[[Path], None]) -> None:
    """The plot, or without matplotlib one ``warning:`` line saying how to add it (the sizing is already out).

    Exit status stays the sizing's (0, or 2 when fixed IPs cannot carry the ports): the plot is a drawing of an
    answer that was delivered, and a script must still be able to tell "does not fit" from "no picture"."""
    if _matplotlib_missing():
        typer.echo(
            f"warning: --plot {plot}: not written: matplotlib is not installed in this environment; add it "
            f"with: {install_extra('plot')}",
            err=True,
        )
        return
    try:
        draw(plot)
    except OSError as exc:  # checked above; still possible (disk full, a race, root on a read-only mount)
        fail(f"--plot: {str(plot)!r}: cannot be written: {exc.strerror or exc}")
    if not as_json:
        typer.echo(f"Plot written to {plot}")


def _parse_pools(specs: list[str]) -> list[azure_lb.Pool]:
    """Every --pool, each error naming which one (``--pool #2 '10:x'``) when several were given."""
    pools = []
    for index, spec in enumerate(specs, start=1):
        shown = f"--pool #{index} {spec!r}" if len(specs) > 1 else f"--pool {spec!r}"
        try:
            pools.append(azure_lb.Pool.parse(spec))
        except SizingError as exc:
            if exc.field.endswith(".max_count"):
                fail(f"{shown}: MAX {exc.value!r} is not allowed: {exc.allowed}")
            if exc.field.endswith(".max_surge"):
                fail(f"{shown}: SURGE {exc.value!r} is not allowed: {exc.allowed}")
            fail(f"{shown} is not allowed: {exc.allowed}")
    return pools


AZURE_NATGW_HELP = (
    f"Size an Azure NAT gateway: public IPs ({nat_gateway.AZURE_PORTS_PER_IP:,} SNAT ports each, at most "
    f"{nat_gateway.AZURE_MAX_IPS}), allocated on demand; --sku StandardV2 for the zone-redundant gateway."
)
AZURE_NATGW_SKU_HELP = "NAT gateway SKU: " + "; ".join(
    f"{s.name} ({'zone-redundant' if s.zone_redundant else 'zonal'}, {s.gbps} Gbps, {s.public_ip_sku} public IPs)"
    for s in nat_gateway.AZURE_NAT_SKUS.values()
)


@size_app.command("azure-natgw", help=AZURE_NATGW_HELP)
def size_azure_natgw(
    ctx: typer.Context,
    flows: Annotated[int | None, typer.Option(help="Peak concurrent outbound flows from the whole subnet.")] = None,
    sku: Annotated[str, typer.Option(help=AZURE_NATGW_SKU_HELP)] = nat_gateway.AZURE_STANDARD,
    as_json: JsonFlag = False,
    from_prometheus: measured.FromPrometheusOption = None,
    window: measured.WindowOption = DEFAULT_WINDOW,
    headroom: measured.HeadroomText = None,
    timeout: measured.TimeoutOption = DEFAULT_TIMEOUT_S,
    selector: measured.SelectorOption = None,
    step: measured.StepOption = DEFAULT_STEP,
    bearer_token_file: measured.TokenOption = None,
    by_workload: measured.ByWorkloadOption = False,
    plot: WorkloadPlotOption = None,
) -> None:
    _refuse_measured_only(ctx, from_prometheus)
    if (flows is None) == (from_prometheus is None):
        fail("--flows: give --flows N (the subnet's peak concurrent flows) or --from-prometheus URL, one of the two")
    _workload_plot(plot, by_workload)
    if sku not in nat_gateway.AZURE_NAT_SKUS:
        fail(f"--sku {sku!r} is not allowed: " + " or ".join(repr(n) for n in nat_gateway.AZURE_NAT_SKU_NAMES))
    if from_prometheus is not None:
        source = measured.source(from_prometheus, window, timeout, selector, step, bearer_token_file)
        multiplier = measured.headroom(headroom)
        found = measured.azure_natgw_from_prometheus(source, multiplier, as_json, by_workload, plot is not None, sku)
        if plot is not None:
            _write_plot(plot, as_json, lambda path: _plot_workloads(found, path))
        return
    if headroom is not None:
        fail(f"--headroom {headroom}: only with --from-prometheus (--flows is the demand as given)")
    assert flows is not None, "one of the two, checked above"
    given = flows
    emit(run(lambda: nat_gateway.plan_azure_nat_gateway(given, sku), SIZE_FLAGS), as_json)


AWS_NATGW_HELP = (
    "Size AWS NAT egress per AZ: IPs at "
    f"{nat_gateway.AWS_CONNECTIONS_PER_IP:,} connections per destination each (zonal: one gateway per AZ, at most "
    f"{nat_gateway.AWS_ZONAL_MAX_IPS} IPs; regional: one gateway, at most {nat_gateway.AWS_REGIONAL_MAX_IPS_PER_AZ} "
    "per AZ), and whether the account's default Elastic IP quotas suffice. With --from-prometheus, every AZ from its "
    "busiest destination summed over the AZ's nodes, as the wirespeed agents measured it."
)
AWS_NATGW_EPILOG = (
    "Examples:\n\n"
    "  wirespeed size aws-natgw --connections 120000                  (3 AZs, zonal)\n\n"
    "  wirespeed size aws-natgw --az eu-west-1a=120000 --az eu-west-1b=600000 --mode regional\n\n"
    "  wirespeed size aws-natgw --connections 900000 --mode regional --ip-mode automatic\n\n"
    "  wirespeed size aws-natgw --from-prometheus http://prometheus.monitoring:9090 --window 7d\n\n"
    f"Quotas named when their defaults are too low: {nat_gateway.NAT_GATEWAY_EIPS.label} (zonal) and "
    f"{nat_gateway.REGION_EIPS.label}. Exit 0 when it fits (quota warnings included); 2 with one line naming the "
    "flag and what is allowed."
)
# wirespeed's bound, not AWS's: no Region has more AZs than this, so a larger --azs is a typo.
MAX_AZS = 32


def _az_demand(pairs: list[str]) -> dict[str, int]:
    demand: dict[str, int] = {}
    for pair in pairs:
        name, sep, figure = pair.partition("=")
        if not sep or not name or not figure.strip().lstrip("-").isdigit():
            fail(f"--az: {pair!r} is not allowed: NAME=CONNECTIONS, such as eu-west-1a=120000")
        if name in demand:
            fail(f"--az: {name!r} is given twice: one figure per AZ")
        demand[name] = int(figure)
    return demand


def _flag(field: str, uniform: bool) -> str:
    """The flag a problem of :func:`aws_nat.check_aws_nat` is about, as the user typed it."""
    if field in ("mode", "ip_mode"):
        return f"--{field.replace('_', '-')}"
    az = field.removeprefix("demand[").partition("]")[0].strip("'")
    return "--connections" if uniform else f"--az {az}"


@size_app.command("aws-natgw", help=AWS_NATGW_HELP, epilog=AWS_NATGW_EPILOG)
def size_aws_natgw(
    ctx: typer.Context,
    connections: Annotated[
        int | None,
        typer.Option(help="Peak concurrent connections from each AZ to its busiest destination (IP, port, protocol)."),
    ] = None,
    azs: Annotated[int, typer.Option(help="AZs the egress serves, with --connections.")] = aws_nat.DEFAULT_AZS,
    az: Annotated[
        list[str] | None,
        typer.Option(
            "--az",
            metavar="NAME=CONNECTIONS",
            help="One AZ and its peak to its busiest destination, instead of --connections and --azs. Repeat per AZ.",
        ),
    ] = None,
    mode: Annotated[
        str, typer.Option(help="zonal (one gateway per AZ) or regional (one gateway for the VPC).")
    ] = nat_gateway.ZONAL,
    ip_mode: Annotated[
        str,
        typer.Option(help="regional only: manual (you give each AZ's Elastic IPs) or automatic (AWS adds IPs)."),
    ] = aws_nat.MANUAL,
    as_json: JsonFlag = False,
    from_prometheus: measured.FromPrometheusOption = None,
    window: measured.WindowOption = DEFAULT_WINDOW,
    headroom: measured.HeadroomText = None,
    timeout: measured.TimeoutOption = DEFAULT_TIMEOUT_S,
    selector: measured.SelectorOption = None,
    step: measured.StepOption = DEFAULT_STEP,
    bearer_token_file: measured.TokenOption = None,
    by_workload: measured.ByWorkloadOption = False,
    plot: WorkloadPlotOption = None,
) -> None:
    _refuse_measured_only(ctx, from_prometheus)
    _workload_plot(plot, by_workload)
    if az or from_prometheus is not None:
        spread = "each AZ is named by --az" if az else "the measured AZs are the AZs"
        refuse_unused(
            flags_given(ctx, "azs"),
            f"only with --connections (the AZs it is spread over); {spread}, so leave {{it}} out",
        )
    if from_prometheus is not None:
        if connections is not None or az:
            fail("--from-prometheus: not with --connections or --az (the measured peaks are the demand)")
        modes = aws_nat.check_aws_nat({"measured": 1}, mode, ip_mode)[1]
        if modes:
            fail("; ".join(f"--{p.field.replace('_', '-')}: {p.value!r} is not allowed: {p.allowed}" for p in modes))
        source = measured.source(from_prometheus, window, timeout, selector, step, bearer_token_file)
        found = measured.aws_natgw_from_prometheus(
            source, measured.headroom(headroom), mode, ip_mode, as_json, by_workload, plot is not None
        )
        if plot is not None:
            _write_plot(plot, as_json, lambda path: _plot_workloads(found, path))
        return
    if headroom is not None:
        fail(f"--headroom {headroom}: only with --from-prometheus (--connections and --az are the demand as given)")
    if (connections is None) == (not az):
        fail(
            "--connections: give --connections N (every AZ), --az NAME=N for each AZ or --from-prometheus URL, one of "
            "them"
        )
    if az:
        demand: dict[str, int] = _az_demand(az)
    else:
        if not 1 <= azs <= MAX_AZS:
            fail(f"--azs: {azs} is not allowed: a whole number from 1 to {MAX_AZS}")
        demand = aws_nat.uniform_demand(connections or 0, azs)
    plan, problems = aws_nat.check_aws_nat(demand, mode, ip_mode)
    if plan is None:
        said: list[str] = []
        for problem in problems:
            # The CLI's words (FieldError's and InfeasibleError's): "<value> is not allowed: <allowed>", or the
            # shortfall itself, which names its own numbers.
            infeasible = " required but " in problem.allowed
            reason = problem.allowed if infeasible else f"{problem.value!r} is not allowed: {problem.allowed}"
            line = f"{_flag(problem.field, not az)}: {reason}"
            if line not in said:
                said.append(line)
        fail("; ".join(said))
    emit(plan, as_json)


StallOption = Annotated[float | None, typer.Option(help="Milliseconds the consumer may stall.")]
PacketOption = Annotated[int, typer.Option(help="IP packet size in bytes.")]


RINGS_HELP = (
    f"Size NIC RX/TX rings to absorb a receive stall at line rate (default {rings.DEFAULT_STALL_MS:g} ms), by the "
    "driver's rules."
)


@size_app.command("rings", help=RINGS_HELP)
def size_rings(
    driver: Annotated[str, typer.Option(help="NIC driver as `ethtool -i` names it: mlx5_core, mana, ena, ...")],
    line_rate_gbps: Annotated[float, typer.Option(help="Line rate of the host NIC behind the VF, Gb/s.")],
    stall_ms: StallOption = None,
    packet_bytes: PacketOption = DEFAULT_PACKET_BYTES,
    queues: Annotated[
        int, typer.Option(help="RX queues, for the memory estimate (`ethtool -l`).")
    ] = rings.DEFAULT_QUEUES,
    as_json: JsonFlag = False,
) -> None:
    stall = rings.DEFAULT_STALL_MS if stall_ms is None else stall_ms
    emit(
        run(
            lambda: rings.plan_rings(driver, line_rate_gbps, stall_ms=stall, packet_bytes=packet_bytes, queues=queues),
            SIZE_FLAGS,
        ),
        as_json,
    )


BACKLOG_HELP = (
    f"Size net.core.netdev_max_backlog to absorb a softirq delay (default {backlog.DEFAULT_STALL_MS:g} ms, one tick "
    "at HZ=250)."
)


class BacklogCloud(StrEnum):
    azure = "azure"
    aws = "aws"


@size_app.command("backlog", help=BACKLOG_HELP)
def size_backlog(
    line_rate_gbps: Annotated[float, typer.Option(help="Line rate into one CPU's backlog, Gb/s.")],
    stall_ms: StallOption = None,
    packet_bytes: PacketOption = DEFAULT_PACKET_BYTES,
    cloud: Annotated[
        BacklogCloud | None,
        typer.Option(help="azure: within AKS's sysctl range; aws: the kernel's int range. Unset: AKS's range."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    stall = backlog.DEFAULT_STALL_MS if stall_ms is None else stall_ms
    which: backlog.BacklogCloud = None if cloud is None else cloud.value
    emit(
        run(
            lambda: backlog.plan_backlog(line_rate_gbps, stall_ms=stall, packet_bytes=packet_bytes, cloud=which),
            SIZE_FLAGS,
        ),
        as_json,
    )


@size_app.command("mtu")
def size_mtu(
    driver: Annotated[str, typer.Option(help="mana, mlx5_core, mlx4_en or ena.")],
    crosses_gateway: Annotated[
        bool, typer.Option(help="Some traffic leaves the VNet/VPC (gateway, peering, internet).")
    ] = False,
    ena_express: Annotated[
        bool, typer.Option(help="ENA Express (SRD) is on (the ena driver only; refused for another).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """The largest MTU the NIC and path allow. Opt-in: wirespeed never raises MTU on its own."""
    from wirespeed.sizing.mtu import Path as Path_
    from wirespeed.sizing.mtu import plan_mtu

    path: Path_ = "gateway" if crosses_gateway else "local"
    emit(run(lambda: plan_mtu(driver, path=path, ena_express=ena_express), SIZE_FLAGS), as_json)
