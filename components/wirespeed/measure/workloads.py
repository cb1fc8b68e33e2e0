"""Which workloads held the SNAT ports at a measured peak, read from Prometheus (`wirespeed size ... --from-prometheus
--by-workload`).

The agent exports ``wirespeed_agent_snat_ports_in_use_by_workload{namespace,workload,kind,destination}`` (issue 29;
agent/internal/metrics/README.md): per node, the ports each (workload, destination) pair holds, the node's top K
pairs by name and the rest as ``workload="other" destination="other"``. A peak (wirespeed.measure.snat) is one
moment and one set of series: the busiest node's busiest destination (Azure load balancer), one destination or
every flow summed over the gateway's nodes (Azure NAT gateway), one destination summed over an AZ's nodes (AWS). The
same series of the by-workload gauge, summed the same way and evaluated at the same instant, name who made it: both
gauges come from the same scrape of each agent, so they describe the same flows.

The by-workload series carry no ``zone`` label (the agent's ``zone`` is on ``ports_in_use`` only), so an AZ's nodes
are found by joining on the scrape target (``job``, ``instance``: the labels Prometheus gives every scraped series,
prometheus.io/docs/concepts/jobs_instances/) with the zone of their ``ports_in_use`` series.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wirespeed.measure.prometheus import PrometheusError, Sample
from wirespeed.measure.snat import (
    Measurement,
    Peak,
    duration_seconds,
    iso,
    matchers_of,
    quote_label,
    selector_matchers,
)
from wirespeed.names import (
    AGENT_NAME,
    SNAT_BY_WORKLOAD_FLAG,
    SNAT_BY_WORKLOAD_SINCE,
    SNAT_OTHER_WORKLOAD,
    SNAT_PORTS_IN_USE,
    SNAT_PORTS_IN_USE_BY_WORKLOAD,
)

# How many (workload, destination) rows one peak names (a topk in the query keeps the answer small whatever the
# fleet's size); the ports of the rest are summed in ``AtPeak.rest``.
MAX_WORKLOADS = 20
# How many of them a plot draws over the window: more lines than this are a legend nobody reads.
PLOT_WORKLOADS = 6
# Points a plotted series has at most over the window: each is the highest value in its slice of the window (a
# max_over_time subquery), so no peak is lost to the coarser resolution.
PLOT_POINTS = 400
# Labels printed as the agent writes them, capped: Kubernetes names are at most 253 characters (DNS subdomain,
# kubernetes.io/docs/concepts/overview/working-with-objects/names/); anything longer is not the agent's.
_MAX_LABEL = 253
_GROUP = ("namespace", "workload", "kind", "destination")


@dataclass(frozen=True)
class WorkloadPorts:
    """One (workload, destination) pair's ports at the peak, summed over the peak's nodes."""

    namespace: str
    workload: str
    kind: str
    destination: str
    ports: int

    @property
    def is_other(self) -> bool:
        """The agents' sum of every pair outside their top K (``workload="other"``, no kind)."""
        return self.workload == SNAT_OTHER_WORKLOAD and not self.kind

    @property
    def name(self) -> str:
        """As the agent's SNATPortPressure message names it: ``checkout/payments-api (Deployment)``."""
        if self.is_other:
            return "other (pairs outside each node's top K)"
        if self.kind == "unknown":
            return "unknown (no pod on the node held the address)"
        own = f"{self.namespace}/{self.workload}" if self.namespace else self.workload
        return f"{own} ({self.kind})"

    def to_json(self, peak: int, allocation: int | None) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "workload": self.workload,
            "kind": self.kind,
            "destination": self.destination,
            "ports": self.ports,
            "share_of_peak_percent": percent(self.ports, peak),
            "share_of_allocation_percent": percent(self.ports, allocation) if allocation else None,
        }


def percent(part: int, whole: int) -> float:
    """``part`` of ``whole`` as a percent with one decimal (0 for an empty whole)."""
    return round(100 * part / whole, 1) if whole else 0.0


@dataclass(frozen=True)
class Scope:
    """The by-workload series one peak is made of: exact ``matchers``, and for an AZ its ``zone`` (joined)."""

    matchers: tuple[str, ...]
    zone: str | None = None
    per_node: bool = False
    """The matchers name one node's target: a row is one series, read raw (no subquery step) over the window."""

    def series(self, measurement: Measurement) -> str:
        """The PromQL of the by-workload gauge in this scope (the selector included). The gauge has no ``zone``
        label, so the AZ, and any ``zone`` matcher of ``--selector``, pick their targets from ports_in_use's."""
        pairs = selector_matchers(measurement.selector)
        other = [m for label, m in pairs if label != "zone"]
        zones = [m for label, m in pairs if label == "zone"]
        if self.zone is not None:
            zones.insert(0, f"zone={quote_label(self.zone)}")
        own = f"{SNAT_PORTS_IN_USE_BY_WORKLOAD}{matchers_of(*self.matchers, *other)}"
        if not zones:
            return own
        targets = f"{SNAT_PORTS_IN_USE}{matchers_of(*zones, *other)}"
        # group by gives 1 per target in the AZ: the product keeps the left side's values and labels.
        return f"({own} * on (job, instance) group_left () group by (job, instance) ({targets}))"

    def selects(self, measurement: Measurement) -> bool:
        """Whether :meth:`series` is a plain series selector (no join), which a range ``[...]`` may follow."""
        return self.series(measurement).startswith(SNAT_PORTS_IN_USE_BY_WORKLOAD)


def node_scope(peak: Peak) -> Scope:
    """The series of the peak's own node (every label of its target: what both gauges' scrape shares) and
    destination."""
    target = {k: v for k, v in peak.labels.items() if k not in ("__name__", "destination", "zone")}
    return Scope(tuple(f"{k}={quote_label(v)}" for k, v in sorted(target.items())) + _destination(peak), per_node=True)


def destination_scope(peak: Peak, zone: str | None = None) -> Scope:
    """One destination summed over every node (or, with ``zone``, over that AZ's nodes)."""
    return Scope(_destination(peak), zone)


def every_flow_scope() -> Scope:
    """Every (workload, destination) pair of every node, the agents' ``other`` sums included."""
    return Scope(())


def _destination(peak: Peak) -> tuple[str, ...]:
    return (f"destination={quote_label(peak.destination)}",) if peak.destination else ()


@dataclass(frozen=True)
class AtPeak:
    """Who held the ports of ``peak`` at its moment: the busiest rows first, and the ports no row names."""

    peak: Peak
    scope: Scope
    query: str
    rows: tuple[WorkloadPorts, ...]

    @property
    def named(self) -> int:
        return sum(r.ports for r in self.rows)

    @property
    def rest(self) -> int:
        """Ports of the peak in no row: pairs past MAX_WORKLOADS or outside the nodes' top K (never below 0)."""
        return max(0, self.peak.value - self.named)

    def to_json(self, allocation: int | None, allocation_of: str) -> dict[str, Any]:
        return {
            "time": iso(self.peak.time),
            "peak": self.peak.value,
            "allocation": allocation,
            "allocation_of": allocation_of,
            "query": self.query,
            "workloads": [r.to_json(self.peak.value, allocation) for r in self.rows],
            "unnamed_ports": self.rest,
        }


def at_peak(measurement: Measurement, peak: Peak, scope: Scope) -> AtPeak:
    """The rows of ``scope`` at ``peak``'s moment, busiest first; PrometheusError naming the fix when the agents
    export no by-workload series at all in the window."""
    inner = f"sum by ({', '.join(_GROUP)}) ({scope.series(measurement)})"
    query = f"topk({MAX_WORKLOADS}, {inner})"
    kind, series = measurement.prometheus.query(query, peak.time)
    if kind != "vector":
        raise PrometheusError(f"{measurement.prometheus.flag} {measurement.prometheus.shown_url}: {query} did not "
                              "answer a vector")  # fmt: skip
    rows = [_row(s, query, measurement) for s in series if math.isfinite(s.value)]
    if not rows:
        require_series(measurement)
    rows.sort(key=lambda r: (-r.ports, r.is_other, r.namespace, r.workload, r.kind, r.destination))
    return AtPeak(peak, scope, query, tuple(r for r in rows if r.ports > 0))


def require_series(measurement: Measurement) -> None:
    """PrometheusError when no agent exported the by-workload gauge in the window: say what turns it on."""
    every = every_flow_scope().series(measurement)
    if every_flow_scope().selects(measurement):  # a plain selector: its raw samples
        query = f"count(count_over_time({every}[{measurement.window}]))"
    else:  # joined to a zone: a subquery
        query = f"count(max_over_time({every}[{measurement.window}:{measurement.step}]))"
    kind, series = measurement.prometheus.query(query, measurement.at)
    if kind == "vector" and series:
        return
    where = f" matching {measurement.selector}" if measurement.selector else ""
    raise PrometheusError(
        f"--by-workload: {measurement.prometheus.flag} {measurement.prometheus.shown_url} has no "
        f"{SNAT_PORTS_IN_USE_BY_WORKLOAD} series{where} in the last {measurement.window}: run the {AGENT_NAME} of "
        f"wirespeed {SNAT_BY_WORKLOAD_SINCE} or later with {SNAT_BY_WORKLOAD_FLAG} on (its default; it needs the "
        "agent's Kubernetes report and its list/watch grant on pods, docs/node-tuning.md), or leave --by-workload out"
    )


def _row(series: Sample, query: str, measurement: Measurement) -> WorkloadPorts:
    labels = series.labels
    value = series.value
    if value < 0 or value != int(value):
        raise PrometheusError(
            f"{measurement.prometheus.flag} {measurement.prometheus.shown_url}: {query} gave {value!r}, not a whole "
            "number of ports: are these the wirespeed agent's series?"
        )
    namespace, workload, kind, destination = (_label(labels, k) for k in _GROUP)
    return WorkloadPorts(namespace, workload, kind, destination, int(value))


def _label(labels: Mapping[str, str], key: str) -> str:
    """A label as printed: control characters shown escaped, at most _MAX_LABEL characters."""
    text = labels.get(key, "")
    if not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= _MAX_LABEL else text[:_MAX_LABEL] + "..."


@dataclass(frozen=True)
class Timeline:
    """One workload's ports in a scope over the window: each point the highest of its slice."""

    row: WorkloadPorts
    points: tuple[tuple[float, float], ...]


def over_window(measurement: Measurement, found: AtPeak, limit: int = PLOT_WORKLOADS) -> tuple[Timeline, ...]:
    """The top ``limit`` rows of ``found`` over the window, one query each (a matrix of at most PLOT_POINTS points,
    each the highest value of its slice of the window), for the plot."""
    window = duration_seconds(measurement.window, "--window", 1, math.inf)
    slice_s = max(1, math.ceil(window / PLOT_POINTS))
    # One node's series without a join are read raw; a sum across nodes, or a join to the zone, is an expression,
    # sampled at --step: a slice holds at least one step.
    raw = found.scope.per_node and found.scope.selects(measurement)
    if not raw:
        slice_s = max(slice_s, math.ceil(duration_seconds(measurement.step, "--step", 0, math.inf)))
    out = []
    for row in [r for r in found.rows if not r.is_other][:limit]:
        scope = Scope(found.scope.matchers + _exact_row(row, found.scope), found.scope.zone)
        if raw:
            inner = f"{scope.series(measurement)}[{slice_s}s]"  # the raw samples: nothing between scrapes is lost
        else:
            inner = f"sum by ({', '.join(_GROUP)}) ({scope.series(measurement)})[{slice_s}s:{measurement.step}]"
        query = f"max_over_time({inner})[{measurement.window}:{slice_s}s]"
        kind, series = measurement.prometheus.query(query, measurement.at)
        if kind != "matrix":
            raise PrometheusError(f"{measurement.prometheus.flag} {measurement.prometheus.shown_url}: {query} did "
                                  "not answer a matrix")  # fmt: skip
        points = tuple(p for s in series[:1] for p in s.points if math.isfinite(p[1]))
        out.append(Timeline(row, points))
    return tuple(out)


def _exact_row(row: WorkloadPorts, scope: Scope) -> tuple[str, ...]:
    """Matchers for the row's own series, leaving out those the scope already has (its destination)."""
    return tuple(m for k in _GROUP if (m := f"{k}={quote_label(getattr(row, k))}") not in scope.matchers)


def rows_text(found: AtPeak, allocation: int | None) -> list[str]:
    """The table of ``found`` as `size --by-workload` prints it (plain text: names never cut), indented."""
    from wirespeed.tables import plain

    def shares(ports: int) -> list[str]:
        of_peak = f"{percent(ports, found.peak.value)}%"
        return [of_peak, f"{percent(ports, allocation)}%"] if allocation else [of_peak]

    headers = ["WORKLOAD", "DESTINATION", "PORTS", "OF PEAK"] + (["OF ALLOCATION"] if allocation else [])
    rows = [[r.name, r.destination, f"{r.ports:,}", *shares(r.ports)] for r in found.rows]
    if found.rest:
        rows.append(["(not named)", "", f"{found.rest:,}", *shares(found.rest)])
    lines = ["  " + line for line in plain(headers, rows).splitlines()]
    if found.rest:
        lines.append(
            f"  not named: {found.rest:,} ports in pairs outside a node's top K (the agent's "
            f"--snat-workload-top) or past the top {MAX_WORKLOADS} rows"
        )
    return lines


@dataclass(frozen=True)
class Attribution:
    """The answer of `--by-workload` for one peak: who held its ports, their share of the allocation that peak is
    sized against, and (for `--plot`) the top ones over the window."""

    where: str
    """What the peak is, as the heading says it: ``52.1.2.3:443/tcp on node aks-apps-1``."""
    found: AtPeak
    allocation: int | None
    allocation_of: str
    """What the allocation is: ``allocatedOutboundPorts per node``, ``2 IP(s) x 50,000 connections to one
    destination``."""
    timelines: tuple[Timeline, ...] = ()
    note: str = ""

    def lines(self) -> list[str]:
        found = self.found
        head = f"Workloads at the peak {self.where} at {iso(found.peak.time)} ({SNAT_PORTS_IN_USE_BY_WORKLOAD}"
        allocation = f"; allocation {self.allocation:,}: {self.allocation_of}" if self.allocation else ""
        lines = [f"{head}{allocation}):"]  # its query is listed with the others
        if self.note:
            lines.append(f"  {self.note}")
        if not found.rows:
            lines.append(
                "  none: the agents exported no by-workload series at that moment (attribution was off then, or the "
                "agents had no Kubernetes report)"
            )
            return lines
        return lines + rows_text(found, self.allocation)

    def to_json(self) -> dict[str, Any]:
        own = {"where": self.where, "note": self.note or None}
        return own | self.found.to_json(self.allocation, self.allocation_of)
