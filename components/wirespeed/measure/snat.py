"""The fleet's measured SNAT demand, read from Prometheus: the peaks `wirespeed size ... --from-prometheus` sizes from.

Three questions, one per kind of egress (the node agent's series: wirespeed.names, agent/internal/metrics/README.md):

- Azure load balancer: ports are per node, so the busiest node's busiest destination over the window
  (``max_over_time`` of ``wirespeed_agent_snat_ports_in_use``), and the agent's own peak gauge (which also sees
  bursts between two scrapes) as a floor.
- Azure NAT gateway: its IPs serve every node behind it, so per-destination sums across nodes, and the sum of every
  flow, each at its peak over the window (a subquery at ``step``).
- AWS NAT gateway: one per AZ, so per-destination sums across the nodes of each zone, at their peak over the window.

Every peak comes with when it happened: ``max_over_time`` gives the value, not the time, so the series that holds
the peak is read again as a range vector (the raw samples, or the subquery's points) and the first point equal to
the peak is its time. Destinations outside a node's top K are summed by the agent as ``destination="other"``; that
series is left out of per-destination peaks (it is many destinations) and kept in totals.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from wirespeed.measure.prometheus import Prometheus, PrometheusError, Sample
from wirespeed.names import SCRAPE_INTERVAL, SNAT_OTHER_DESTINATION, SNAT_PORTS_IN_USE, SNAT_PORTS_PEAK

# Prometheus durations (prometheus.io/docs/prometheus/latest/querying/basics/#float-literals-and-time-durations):
# units ms, s, m, h, d (24 h), w (7 d), y (365 d), combinable from largest to smallest (1h30m).
_UNITS = {"y": 365 * 86_400, "w": 7 * 86_400, "d": 86_400, "h": 3_600, "m": 60, "s": 1, "ms": 0.001}
_DURATION = re.compile(
    r"^(?:([0-9]+)y)?(?:([0-9]+)w)?(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?(?:([0-9]+)ms)?$"
)
# wirespeed's bounds: a window shorter than a few scrapes measures nothing; a longer one than a year outlives every
# retention default (Prometheus keeps 15 d unless told otherwise: --storage.tsdb.retention.time).
WINDOW_RANGE_S = (60, 366 * 86_400)
DEFAULT_WINDOW = "7d"
# A subquery's resolution: the PodMonitor's scrape interval (wirespeed.manifests.node_tuning), so the step sees every
# scrape of a sum across nodes; steps finer than the scrape add nothing, coarser ones can miss a peak.
DEFAULT_STEP = SCRAPE_INTERVAL
STEP_RANGE_S = (1, 3_600)
# Labels a node is named by, best first: the PodMonitor's relabelled `node` (wirespeed.manifests), the common
# `kubernetes_node`/`nodename` of hand-written scrape configs, else the scrape target.
NODE_LABELS = ("node", "kubernetes_node", "nodename", "instance", "pod")
# A label selector wirespeed adds to every series it reads: comma-separated PromQL matchers.
_LABEL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)")
_MATCHER = re.compile(r'\s*[A-Za-z_][A-Za-z0-9_]*\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*')


def duration_seconds(text: str, flag: str, low: float, high: float) -> float:
    """A Prometheus duration (``7d``, ``36h``, ``1h30m``) in seconds, within [low, high]; PrometheusError otherwise."""
    match = _DURATION.fullmatch(text.strip()) if isinstance(text, str) else None
    allowed = f"a Prometheus duration from {_human(low)} to {_human(high)}, e.g. 7d, 36h or 1h30m"
    if not match or not any(match.groups()):
        raise PrometheusError(f"{flag}: {text!r} is not allowed: {allowed}")
    seconds = sum(int(v) * unit for v, unit in zip(match.groups(), _UNITS.values(), strict=True) if v)
    if not low <= seconds <= high:
        raise PrometheusError(f"{flag}: {text!r} is not allowed: {allowed}")
    return seconds


def _human(seconds: float) -> str:
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def check_selector(text: str | None) -> str:
    """``--selector``: PromQL label matchers (``cluster="prod",zone=~"eu-west-1.*"``) added to every series read."""
    if text is None or not text.strip():
        return ""
    parts = _split_matchers(text)
    if parts is None or any(not _MATCHER.fullmatch(p) for p in parts):
        raise PrometheusError(
            f"--selector: {text!r} is not allowed: PromQL label matchers separated by commas, e.g. "
            'cluster="prod",zone=~"eu-west-1.*"'
        )
    return ",".join(p.strip() for p in parts)


def selector_matchers(selector: str) -> list[tuple[str, str]]:
    """A checked ``--selector`` (:func:`check_selector`) as (label name, matcher) pairs, in its order."""
    parts = _split_matchers(selector) if selector else []
    return [(match[1], p.strip()) for p in parts or [] if (match := _LABEL.match(p))]


def _split_matchers(text: str) -> list[str] | None:
    """``text`` split at the commas outside quoted values; None when a quote is left open."""
    parts, current, quoted, escaped = [], "", False, False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            parts.append(current)
            current = ""
            continue
        current += char
    if quoted:
        return None
    parts.append(current)
    return parts


def matchers_of(*matchers: str) -> str:
    """``{a,b}`` of the non-empty matchers; nothing at all when there are none."""
    given = [m for m in matchers if m]
    return "{" + ",".join(given) + "}" if given else ""


def quote_label(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _exactly(labels: Mapping[str, str]) -> str:
    """Matchers for one series: every label equal."""
    return ",".join(f"{k}={quote_label(v)}" for k, v in sorted(labels.items()) if k != "__name__")


def iso(stamp: float) -> str:
    """Unix seconds as the UTC time the plans print (``2026-11-20T10:00:00Z``)."""
    moment = datetime.fromtimestamp(stamp, UTC)
    text = moment.isoformat(timespec="milliseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def node_of(labels: Mapping[str, str]) -> str:
    return next((labels[k] for k in NODE_LABELS if labels.get(k)), "?")


@dataclass(frozen=True)
class Peak:
    """One measured peak: its value, when it first happened, and which series (node, destination, zone) holds it."""

    value: int
    time: float
    query: str
    labels: Mapping[str, str]

    @property
    def node(self) -> str | None:
        return node_of(self.labels) if any(self.labels.get(k) for k in NODE_LABELS) else None

    @property
    def destination(self) -> str | None:
        return self.labels.get("destination")

    @property
    def zone(self) -> str | None:
        return self.labels.get("zone")

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "time": iso(self.time),
            "node": self.node,
            "destination": self.destination,
            "zone": self.zone,
            "query": self.query,
        }

    def describe(self, unit: str = "ports in use") -> str:
        where = [f"to {self.destination}" if self.destination else "", f"on node {self.node}" if self.node else ""]
        zone = f" in zone {self.zone}" if self.zone else ""
        text = " ".join(w for w in where if w)
        return f"{self.value:,} {unit}{' ' + text if text else ''}{zone} at {iso(self.time)}"


@dataclass
class Measurement:
    """What one `--from-prometheus` run asked and found; ``at`` is the window's end (the server's now)."""

    prometheus: Prometheus
    window: str
    step: str = DEFAULT_STEP
    selector: str = ""
    at: float | None = None

    @property
    def _where(self) -> str:
        return f"{self.prometheus.flag} {self.prometheus.shown_url}"

    def _instant(self, promql: str) -> list[Sample]:
        kind, series = self.prometheus.query(promql, self.at)
        if kind != "vector":
            raise PrometheusError(
                f"{self.prometheus.flag} {self.prometheus.shown_url}: {promql} did not answer a vector"
            )
        if series and self.at is None:
            self.at = series[0].time  # every later query is evaluated at the same instant
        return [s for s in series if math.isfinite(s.value)]

    def _range(self, promql: str) -> list[Sample]:
        kind, series = self.prometheus.query(promql, self.at)
        if kind != "matrix":
            raise PrometheusError(
                f"{self.prometheus.flag} {self.prometheus.shown_url}: {promql} did not answer a matrix"
            )
        return series

    def _first_time(self, range_query: str, value: float) -> float:
        """When the series ``range_query`` reads (a range vector) first reached ``value``."""
        for series in self._range(range_query):
            for stamp, sample in series.points:
                if sample >= value:
                    return stamp
        # The window slid between the two queries (or the series was compacted away): the window's end is an honest
        # upper bound.
        return self.at or 0.0

    def _peak(self, query: str, series: Sample, range_query: str) -> Peak:
        value = series.value
        return Peak(_count(value, query, self), self._first_time(range_query, value), query, dict(series.labels))

    def source(self, peak: Peak, metric: str) -> str:
        """The provenance line a stack pins (wirespeed:measuredPeakSource, ``measured_from``)."""
        what = " ".join(
            w
            for w in (
                f"to {peak.destination}" if peak.destination else "",
                f"on {peak.node}" if peak.node else "",
                f"in {peak.zone}" if peak.zone else "",
            )
            if w
        )
        end = iso(self.at) if self.at is not None else "now"
        return (
            f"prometheus {self.prometheus.shown_url}, max of {metric} over {self.window} to {end}: "
            f"{peak.value:,}{' ' + what if what else ''} at {iso(peak.time)}"
        )

    # ------------------------------------------------------------------ Azure load balancer: per node
    def node_peak(self) -> Peak:
        """The most ports one node held to one destination over the window."""
        matchers = matchers_of(f'destination!="{SNAT_OTHER_DESTINATION}"', self.selector)
        query = f"topk(1, max_over_time({SNAT_PORTS_IN_USE}{matchers}[{self.window}]))"
        found = self._instant(query)
        if not found:
            raise self.no_data(SNAT_PORTS_IN_USE)
        top = found[0]
        raw = f"{SNAT_PORTS_IN_USE}{{{_exactly(top.labels)}}}[{self.window}]"
        return self._peak(query, top, raw)

    def between_scrapes(self) -> Peak | None:
        """The agent's own peak gauge at its highest over the window (it sees bursts between scrapes); None when the
        agents export none."""
        query = f"topk(1, max_over_time({SNAT_PORTS_PEAK}{matchers_of(self.selector)}[{self.window}]))"
        found = self._instant(query)
        if not found:
            return None
        top = found[0]
        raw = f"{SNAT_PORTS_PEAK}{{{_exactly(top.labels)}}}[{self.window}]"
        return self._peak(query, top, raw)

    # ------------------------------------------------------------------ NAT gateways: sums across nodes
    def _sum_peaks(self, by: tuple[str, ...], extra: str = "") -> list[tuple[str, Sample, str]]:
        """(query, series, range query of its points) per group of the per-``by`` sum at its peak over the window."""
        matchers = matchers_of(extra, self.selector)
        grouping = f" by ({', '.join(by)})" if by else ""
        inner = f"sum{grouping} ({SNAT_PORTS_IN_USE}{matchers})"
        query = f"max_over_time({inner}[{self.window}:{self.step}])"
        found = []
        for series in self._instant(query):
            exact = [f"{k}={quote_label(series.labels.get(k, ''))}" for k in by]
            own = matchers_of("" if "destination" in by else extra, self.selector, *exact)
            found.append((query, series, f"sum{grouping} ({SNAT_PORTS_IN_USE}{own})[{self.window}:{self.step}]"))
        return found

    def total_peak(self) -> Peak:
        """Every flow through the gateway (every node, every destination, ``other`` included) at its peak."""
        found = self._sum_peaks(())
        if not found:
            raise self.no_data(SNAT_PORTS_IN_USE)
        query, series, points = found[0]
        return self._peak(query, series, points)

    def destination_peaks(self, by_zone: bool = False, required: bool = True) -> list[Peak]:
        """Per destination (and zone), the sum across nodes at its peak; busiest first. The time is read for the
        busiest destination (of each zone); the others carry the window's end. No series: an error, or [] when not
        ``required``."""
        by = ("zone", "destination") if by_zone else ("destination",)
        found = self._sum_peaks(by, f'destination!="{SNAT_OTHER_DESTINATION}"')
        if not found and not required:
            return []
        if not found:
            raise self.no_data(SNAT_PORTS_IN_USE)
        found.sort(key=lambda f: (-f[1].value, sorted(f[1].labels.items())))
        peaks, timed = [], set()
        for query, series, points in found:
            group = series.labels.get("zone", "") if by_zone else ""
            if group in timed:
                peaks.append(
                    Peak(_count(series.value, query, self), self.at or series.time, query, dict(series.labels))
                )
                continue
            timed.add(group)
            peaks.append(self._peak(query, series, points))
        return peaks

    def zone_peak_fallback(self) -> list[Peak]:
        """The conservative per-zone figure when no per-destination series exist: every node's own peak (each to its
        busiest destination, at its own moment) summed by zone; an over-estimate, never an under-estimate."""
        query = f"sum by (zone) (max_over_time({SNAT_PORTS_PEAK}{matchers_of(self.selector)}[{self.window}]))"
        return [
            Peak(_count(s.value, query, self), self.at or s.time, query, dict(s.labels)) for s in self._instant(query)
        ]

    def no_data(self, metric: str) -> PrometheusError:
        where = f" matching {self.selector}" if self.selector else ""
        return PrometheusError(
            f"{self.prometheus.flag} {self.prometheus.shown_url}: no {metric} series{where} in the last {self.window}: "
            "does this Prometheus scrape the wirespeed agent with SNAT accounting on (the agent's --snat, on when it "
            "can read conntrack), and is --window within its retention?"
        )


def _count(value: float, query: str, measurement: Measurement) -> int:
    """A peak as a whole count of ports; a negative, fractional or non-finite figure is not the agent's."""
    if not math.isfinite(value) or value < 0 or value != int(value):
        raise PrometheusError(
            f"{measurement.prometheus.flag} {measurement.prometheus.shown_url}: {query} gave {value!r}, not a whole "
            "number of ports: are these the wirespeed agent's series?"
        )
    return int(value)
