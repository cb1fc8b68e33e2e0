"""`wirespeed size azure-lb --from-prometheus URL` (and azure-natgw, aws-natgw): size from the fleet's measured peak.

The flags every measured command shares, reading Prometheus (wirespeed.measure), and printing what was asked, what
was found (node, destination, value, when), the plan, and the stack config that pins the figure it was sized from.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any

import typer

from wirespeed.cli._common import fail, run
from wirespeed.errors import UserError
from wirespeed.measure.prometheus import MAX_TOKEN_BYTES, TIMEOUT_RANGE_S, Deadline, Prometheus
from wirespeed.measure.snat import (
    DEFAULT_STEP,
    STEP_RANGE_S,
    WINDOW_RANGE_S,
    Measurement,
    Peak,
    check_selector,
    duration_seconds,
)
from wirespeed.measure.workloads import (
    Attribution,
    Scope,
    at_peak,
    destination_scope,
    every_flow_scope,
    node_scope,
    over_window,
)
from wirespeed.names import SNAT_PORTS_IN_USE, SNAT_PORTS_IN_USE_BY_WORKLOAD, SNAT_PORTS_PEAK
from wirespeed.sizing import azure_lb
from wirespeed.sizing.aws_nat import AwsNatPlan, AzNat, measured_plan
from wirespeed.sizing.exact import decimal_text, exact
from wirespeed.sizing.measured import (
    AwsZoneDemand,
    AwsZoneMeasuredPlan,
    AzureNatDemand,
    plan_aws_nat_measured,
    plan_azure_nat_measured,
)
from wirespeed.sizing.nat_gateway import (
    AZURE_CONNECTIONS_PER_DESTINATION_PER_IP,
    AZURE_PORTS_PER_IP,
    AZURE_STANDARD,
    ZONAL,
)

FromPrometheusOption = Annotated[
    str | None,
    typer.Option(
        "--from-prometheus",
        metavar="URL",
        help="Size from the peak the wirespeed agents measured, read from this Prometheus server's HTTP API (its "
        "base URL, e.g. http://prometheus.monitoring:9090; user:password@ for basic auth).",
    ),
]
WindowOption = Annotated[
    str, typer.Option(help="With --from-prometheus: how far back the peak is taken, a Prometheus duration (7d, 36h).")
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        help=f"With --from-prometheus: seconds every query together may take ({TIMEOUT_RANGE_S[0]:g}.."
        f"{TIMEOUT_RANGE_S[1]:g})."
    ),
]
SelectorOption = Annotated[
    str | None,
    typer.Option(
        help='With --from-prometheus: PromQL label matchers for one cluster or pool, e.g. cluster="prod" (every '
        "series read must match)."
    ),
]
StepOption = Annotated[
    str,
    typer.Option(
        help="With --from-prometheus: resolution of the sums across nodes (a subquery step); your scrape interval."
    ),
]
TokenOption = Annotated[
    Path | None,
    typer.Option(
        "--bearer-token-file",
        help="With --from-prometheus: a file holding a bearer token for the server (a service account token).",
    ),
]
ByWorkloadOption = Annotated[
    bool,
    typer.Option(
        "--by-workload",
        help=f"With --from-prometheus: name the workloads that held the ports at the measured peak (namespace, "
        f"workload, kind, destination, ports, share of the peak and of the allocation), from the agents' "
        f"{SNAT_PORTS_IN_USE_BY_WORKLOAD}; with --plot, the top workloads over the window.",
    ),
]
HeadroomText = Annotated[
    str | None,
    typer.Option(
        "--headroom",
        help="Headroom over the measured peak: a percent (25%) or a multiplier (1.25). "
        f"Default {decimal_text((exact(azure_lb.DEFAULT_HEADROOM) - 1) * 100)}%.",
    ),
]


@dataclass(frozen=True)
class Source:
    """Where and how to measure: the flags of a `--from-prometheus` run, checked."""

    url: str
    window: str
    timeout: float
    selector: str | None
    step: str = DEFAULT_STEP
    token_file: Path | None = None

    def measurement(self) -> Measurement:
        duration_seconds(self.window, "--window", *WINDOW_RANGE_S)
        duration_seconds(self.step, "--step", *STEP_RANGE_S)
        low, high = TIMEOUT_RANGE_S
        if not low <= self.timeout <= high:
            fail(f"--timeout: {self.timeout:g} is not allowed: seconds from {low:g} to {high:g}")
        token = _token(self.token_file) if self.token_file is not None else None
        prometheus = Prometheus(self.url, Deadline(self.timeout), bearer_token=token)
        return Measurement(prometheus, self.window.strip(), self.step.strip(), check_selector(self.selector))


def source(
    url: str, window: str, timeout: float, selector: str | None, step: str = DEFAULT_STEP, token: Path | None = None
) -> Measurement:
    """The checked measurement, or exit 2 naming the flag."""
    return run(lambda: Source(url, window, timeout, selector, step, token).measurement())


def _token(path: Path) -> str:
    """A bearer token from a small regular file (MAX_TOKEN_BYTES): one line, whitespace trimmed."""
    shown = f"--bearer-token-file {path}"
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            fail(f"{shown}: not a regular file")
        if info.st_size > MAX_TOKEN_BYTES:
            fail(f"{shown}: {info.st_size:,} bytes is not allowed: a token file of at most {MAX_TOKEN_BYTES:,} bytes")
        with open(path, "rb") as handle:
            data = handle.read(MAX_TOKEN_BYTES + 1)
    except OSError as exc:
        fail(f"{shown}: cannot be read: {exc.strerror or exc}")
    text = data.decode("utf-8", "replace").strip()
    if not text or len(data) > MAX_TOKEN_BYTES or not text.isprintable():
        fail(f"{shown}: is not allowed: one line of printable text, the token")
    return text


def headroom(text: str | None) -> Fraction:
    """``--headroom`` as a multiplier: ``25%`` is 1.25, ``1.25`` is 1.25. Default azure_lb.DEFAULT_HEADROOM."""
    if text is None:
        return exact(azure_lb.DEFAULT_HEADROOM)
    low, high = azure_lb.HEADROOM_RANGE
    allowed = (
        f"a percent from 0% to {(high - 1) * 100}% (25%) or a multiplier from {low} to {high} (1.25) over the measured "
        "peak"
    )
    try:
        value = Fraction(text.strip().removesuffix("%"))
    except (ValueError, ZeroDivisionError):
        fail(f"--headroom: {text!r} is not allowed: {allowed}")
    multiplier = 1 + value / 100 if text.strip().endswith("%") else value
    if not low <= multiplier <= high:
        fail(f"--headroom: {text!r} is not allowed: {allowed}")
    return multiplier


def _asked(measurement: Measurement) -> list[str]:
    lines = [f"Measured by prometheus {measurement.prometheus.shown_url} over {measurement.window}"]
    lines[0] += f" to {_iso(measurement.at)}:" if measurement.at is not None else ":"
    lines += [f"  query: {q}" for q in measurement.prometheus.queries]
    return lines


def _iso(at: float | None) -> str:
    from wirespeed.measure.snat import iso

    return iso(at) if at is not None else "now"


def _prometheus_json(measurement: Measurement, **peaks: Any) -> dict[str, Any]:
    return {
        "url": measurement.prometheus.shown_url,
        "window": measurement.window,
        "step": measurement.step,
        "selector": measurement.selector or None,
        "end": _iso(measurement.at),
        "queries": list(measurement.prometheus.queries),
        **{k: (v.to_json() if isinstance(v, Peak) else v) for k, v in peaks.items()},
    }


def _attribute(
    measurement: Measurement,
    peak: Peak,
    scope: Scope,
    where: str,
    allocation: tuple[int, str],
    plot: bool,
    note: str = "",
) -> Attribution:
    """`--by-workload`: who held ``peak``'s ports (and with ``plot`` the top ones over the window), or exit 2."""
    try:
        found = at_peak(measurement, peak, scope)
        timelines = over_window(measurement, found) if plot else ()
    except UserError as exc:
        fail(str(exc))
    return Attribution(where, found, allocation[0], allocation[1], timelines, note)


def _pin(lines: list[str], keys: list[tuple[str, str]]) -> None:
    lines.append("Pin it in the stack (a plan then shows where the number came from):")
    lines += [f"  pulumi config set {key} {shlex.quote(value)}" for key, value in keys]


# ---------------------------------------------------------------------- azure-lb
def azure_lb_from_prometheus(
    measurement: Measurement,
    pools: list[azure_lb.Pool],
    multiplier: Fraction,
    outbound_ips: int | None,
    by_workload: bool = False,
    plot: bool = False,
) -> tuple[azure_lb.LoadBalancerPlan, list[str], dict[str, Any], Attribution | None]:
    """The plan sized from the busiest node's busiest destination (or the agents' between-scrape peak when higher),
    the lines saying what was measured, the JSON of the measurement, and with ``by_workload`` who held the ports at
    the scraped peak (the agent's own peak gauge names no workloads)."""
    try:
        peak = measurement.node_peak()
        burst = measurement.between_scrapes()
    except UserError as exc:
        fail(str(exc))
    sized_from, metric = peak, SNAT_PORTS_IN_USE
    if burst is not None and burst.value > peak.value:
        sized_from, metric = burst, SNAT_PORTS_PEAK
    origin = measurement.source(sized_from, metric)
    measured = run(
        lambda: azure_lb.MeasuredPeak(sized_from.value, origin, multiplier),
        {"measured_peak_ports_per_node": "the measured peak", "headroom": "--headroom"},
    )
    names = {"outbound IPs": "outbound IPs for --pool x the measured peak", "outbound_ips": "--outbound-ips",
             "ports per node": "ports per node for the measured peak x --headroom"}  # fmt: skip
    plan = run(lambda: azure_lb.plan_load_balancer(pools, measured=measured, outbound_ips=outbound_ips), names)
    attributed = _azure_lb_workloads(measurement, plan, peak, sized_from is not peak, plot) if by_workload else None
    lines = _asked(measurement)
    lines.append(f"Peak: {peak.describe()} ({SNAT_PORTS_IN_USE}).")
    if burst is None:
        lines.append(f"Between scrapes: no {SNAT_PORTS_PEAK} series (older agents); sized from the scraped peak.")
    elif burst.value > peak.value:
        lines.append(
            f"Between scrapes: {burst.describe()} ({SNAT_PORTS_PEAK}, the agent's own peak, which sees bursts a scrape "
            "misses); sized from it."
        )
    else:
        lines.append(f"Between scrapes: {burst.value:,} at most ({SNAT_PORTS_PEAK}); the scraped peak stands.")
    details = _prometheus_json(measurement, peak=peak, between_scrapes=burst)
    if attributed is not None:
        details["by_workload"] = attributed.to_json()
    return plan, lines, details, attributed


def _azure_lb_workloads(
    measurement: Measurement, plan: azure_lb.LoadBalancerPlan, peak: Peak, from_burst: bool, plot: bool
) -> Attribution:
    """Who held the scraped peak's ports on its node, against the node's allocatedOutboundPorts."""
    note = ""
    if from_burst:
        note = "Sized from the agent's between-scrape peak, which names no workloads: these held the scraped peak."
    allocation = (plan.allocated_outbound_ports, "allocatedOutboundPorts, one node's ports to one destination")
    where = f"to {peak.destination} on node {peak.node}"
    return _attribute(measurement, peak, node_scope(peak), where, allocation, plot, note)


def emit_azure_lb(
    plan: azure_lb.LoadBalancerPlan,
    lines: list[str],
    details: dict[str, Any],
    as_json: bool,
    attributed: Attribution | None = None,
) -> None:
    if as_json:
        data = plan.to_json()
        data["measured_peak"]["prometheus"] = details
        typer.echo(json.dumps(data, indent=2))
        return
    assert plan.measured is not None
    out = [*lines, plan.explain(), *(attributed.lines() if attributed else [])]
    _pin(out, [("wirespeed:measuredPeakPortsPerNode", str(plan.measured.ports_in_use)),
               ("wirespeed:measuredPeakSource", plan.measured.source),
               ("wirespeed:headroomPercent", decimal_text((exact(plan.measured.headroom) - 1) * 100))])  # fmt: skip
    typer.echo("\n".join(out))


# ---------------------------------------------------------------------- azure-natgw
def azure_natgw_from_prometheus(
    measurement: Measurement,
    multiplier: Fraction,
    as_json: bool,
    by_workload: bool = False,
    plot: bool = False,
    sku: str = AZURE_STANDARD,
) -> list[Attribution]:
    """Print the plan from the measured peaks for a gateway of ``sku``; with ``by_workload`` who held the ports of
    the peak that decides the IP count (returned, for the plot)."""
    try:
        total = measurement.total_peak()
        busiest = measurement.destination_peaks()[0]
    except UserError as exc:
        fail(str(exc))
    origin = (
        f"{measurement.source(total, 'sum of ' + SNAT_PORTS_IN_USE)}; busiest destination "
        f"{busiest.destination} {busiest.value:,} at {_iso(busiest.time)}"
    )
    demand = run(
        lambda: AzureNatDemand(total.value, busiest.value, str(busiest.destination), origin, multiplier),
        {"flows": "the measured flows", "headroom": "--headroom"},
    )
    plan = run(lambda: plan_azure_nat_measured(demand, sku), {"flows": "the measured flows", "sku": "--sku"})
    attributed = (
        [_azure_natgw_workloads(measurement, plan.ips, plan.binding, total, busiest, plot)] if by_workload else []
    )
    if as_json:
        data = plan.to_json()
        data["measured"]["prometheus"] = _prometheus_json(measurement, total=total, busiest_destination=busiest)
        if attributed:
            data["measured"]["prometheus"]["by_workload"] = attributed[0].to_json()
        typer.echo(json.dumps(data, indent=2))
        return attributed
    lines = _asked(measurement)
    lines.append(f"Peak of all flows through the gateway: {total.describe('flows')} (every node, every destination).")
    lines.append(f"Peak to one destination: {busiest.describe('flows')} (summed over nodes).")
    lines.append(plan.explain())
    lines += [line for a in attributed for line in a.lines()]
    # No wirespeed:natGatewaySku pin: the root program creates Standard only (azure.outbound.COMPONENT_NAT_SKUS).
    _pin(lines, [("wirespeed:natGatewayIpCount", str(plan.ips)), ("wirespeed:measuredPeakSource", origin)])
    typer.echo("\n".join(lines))
    return attributed


def _azure_natgw_workloads(
    measurement: Measurement, ips: int, binding: str, total: Peak, busiest: Peak, plot: bool
) -> Attribution:
    """The workloads of the peak that decides the IP count: the busiest destination's (summed over nodes) against
    the IPs' connections to one destination, or every flow against the IPs' ports."""
    if binding == "destination":
        allocation = (
            ips * AZURE_CONNECTIONS_PER_DESTINATION_PER_IP,
            f"{ips} IP(s) x {AZURE_CONNECTIONS_PER_DESTINATION_PER_IP:,} connections to one destination",
        )
        where = f"to {busiest.destination} (summed over nodes; it decides the IP count)"
        return _attribute(measurement, busiest, destination_scope(busiest), where, allocation, plot)
    allocation = (ips * AZURE_PORTS_PER_IP, f"{ips} IP(s) x {AZURE_PORTS_PER_IP:,} ports")
    where = "of every flow through the gateway (every node and destination; it decides the IP count)"
    return _attribute(measurement, total, every_flow_scope(), where, allocation, plot)


# ---------------------------------------------------------------------- aws-natgw
def aws_zone_peaks(measurement: Measurement) -> tuple[dict[str, Peak], dict[str, Peak]]:
    """Per AZ ("" for nodes without a zone label): the busiest destination's sum over the AZ's nodes at its peak, and
    for AZs without per-destination series the conservative fallback (every node's own peak gauge, summed)."""
    try:
        busiest: dict[str, Peak] = {}
        for peak in measurement.destination_peaks(by_zone=True, required=False):
            busiest.setdefault(peak.zone or "", peak)  # busiest first
        fallback = {p.zone or "": p for p in measurement.zone_peak_fallback() if (p.zone or "") not in busiest}
    except UserError as exc:
        fail(str(exc))
    if not busiest and not fallback:
        fail(str(measurement.no_data(SNAT_PORTS_IN_USE)))
    return busiest, fallback


def aws_natgw_from_prometheus(
    measurement: Measurement,
    multiplier: Fraction,
    mode: str,
    ip_mode: str,
    as_json: bool,
    by_workload: bool = False,
    plot: bool = False,
) -> list[Attribution]:
    """Print the plan per AZ from the measured peaks; with ``by_workload`` who held the ports of each AZ's busiest
    destination at its peak (returned, for the plot; AZs with only the fallback figure name none)."""
    busiest, fallback = aws_zone_peaks(measurement)
    demands = [_zone_demand(measurement, zone, busiest, fallback, multiplier) for zone in sorted({*busiest, *fallback})]
    plans = run(lambda: plan_aws_nat_measured(demands, mode), {"connections": "the measured connections"})
    # The gateways and the account quotas the measured AZs' Elastic IPs need, as `size aws-natgw` without
    # --from-prometheus reports them.
    whole = measured_plan(mode, ip_mode, [AzNat(p.demand.zone, p.plan, p.demand.destination) for p in plans])
    attributed = [_aws_workloads(measurement, p, busiest[p.demand.zone], plot) for p in plans
                  if by_workload and p.demand.zone in busiest]  # fmt: skip
    if as_json:
        data = whole.to_json() | {
            "zones": [p.to_json() for p in plans],
            "prometheus": _prometheus_json(
                measurement, zones={z: p.to_json() for z, p in sorted({**busiest, **fallback}.items())}
            ),
        }
        if by_workload:
            data["prometheus"]["by_workload"] = {a.found.scope.zone or "": a.to_json() for a in attributed}
        typer.echo(json.dumps(data, indent=2))
        return attributed
    lines = _aws_lines(measurement, plans, whole, busiest, fallback)
    typer.echo("\n".join(lines + [line for a in attributed for line in a.lines()]))
    return attributed


def _aws_workloads(measurement: Measurement, plan: AwsZoneMeasuredPlan, peak: Peak, plot: bool) -> Attribution:
    """Who held the ports of one AZ's busiest destination at its peak, against that AZ's IPs."""
    zone = plan.demand.zone
    allocation = (plan.plan.capacity, f"{plan.plan.ips} IP(s) x {plan.plan.per_ip:,} connections to one destination")
    where = f"to {peak.destination} in {zone or '(no zone label)'} (summed over its nodes)"
    return _attribute(measurement, peak, destination_scope(peak, zone), where, allocation, plot)


def _zone_demand(
    measurement: Measurement, zone: str, busiest: dict[str, Peak], fallback: dict[str, Peak], multiplier: Fraction
) -> AwsZoneDemand:
    measured = zone in busiest
    peak = busiest[zone] if measured else fallback[zone]
    metric = f"sum by (zone, destination) of {SNAT_PORTS_IN_USE}"
    if not measured:
        metric = f"sum by (zone) of each node's {SNAT_PORTS_PEAK}"
    origin = measurement.source(peak, metric)
    destination = peak.destination if measured else None
    names = {"connections": f"the measured connections in {zone or '(no zone label)'}", "headroom": "--headroom"}
    return run(lambda: AwsZoneDemand(zone, peak.value, destination, origin, multiplier), names)


def _aws_lines(
    measurement: Measurement,
    plans: list[AwsZoneMeasuredPlan],
    whole: AwsNatPlan,
    busiest: dict[str, Peak],
    fallback: dict[str, Peak],
) -> list[str]:
    lines = _asked(measurement)
    for zone, peak in sorted(busiest.items()):
        lines.append(f"Peak in {zone or '(no zone label)'}: {peak.describe('connections')} (summed over its nodes).")
    for zone, peak in sorted(fallback.items()):
        lines.append(
            f"Peak in {zone or '(no zone label)'}: no per-destination series; every node's own peak "
            f"({SNAT_PORTS_PEAK}) summed: {peak.value:,}, an over-estimate, never an under-estimate."
        )
    if "" in busiest or "" in fallback:
        lines.append(
            "Nodes without a zone label are summed as one AZ: let the agent read its Node "
            "(topology.kubernetes.io/zone) to size each AZ on its own."
        )
    lines.append(whole.headline)
    lines += [p.explain() for p in plans]
    lines += whole.quota_lines + whole.region_warnings
    by_az = {p.demand.zone: p.plan.demand for p in plans}
    # The mode the plan was sized for goes with the figures: a regional AZ's IPs do not fit a zonal gateway.
    modes = "" if whole.mode == ZONAL else f"mode='{whole.mode}', ip_mode='{whole.ip_mode}', "
    top = max(plans, key=lambda p: p.plan.demand)
    lines.append(
        f"Pin it: NatEgressArgs({modes}peak_connections="
        + json.dumps(by_az).replace('"', "'")
        + f", measured_from={top.demand.source!r}) or modules/aws-nat-egress peak_connections_by_az; the root "
        "stack takes one figure for every AZ (the busiest AZ's), with where it was measured:"
    )
    pins = [("wirespeed:natPeakConnections", str(top.plan.demand)),
            ("wirespeed:measuredPeakSource", top.demand.source)]  # fmt: skip
    if whole.mode != ZONAL:
        pins = [("wirespeed:natMode", whole.mode), ("wirespeed:natIpMode", whole.ip_mode), *pins]
    lines += [f"  pulumi config set {key} {shlex.quote(value)}" for key, value in pins]
    return lines
