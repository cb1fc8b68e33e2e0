"""Before and after, from the fleet's probes: `wirespeed prove --from-prometheus URL --before .. --after ..`.

The node agent's probe (issue 30; wirespeed.names PROBE_*) counts every request/response round trip in a histogram
and every tail (a round trip over its threshold) by the cause it attributed it to. For each window this reads, per
group (a label the agent's series carry: ``profile`` by default), the round trips in each bucket
(``increase()`` of the ``_bucket`` counters over the window), the tails by cause and side, and the probe sockets'
retransmissions, and turns the buckets into percentiles the way Prometheus' ``histogram_quantile`` does.

Resolution, honestly: a histogram knows only how many round trips fell in each bucket (the agent's are two per
decade, a factor of 3.16, with bounds just under each retransmission timeout), so a percentile is a point
interpolated linearly inside the bucket that holds it (prometheus.io/docs/prometheus/latest/querying/functions/
#histogram_quantile: "linear interpolation within a bucket"); the answer carries that bucket's bounds, and one in the
+Inf bucket is only "above the last bound". ``increase()`` extrapolates to the window's edges when the first and last
samples do not sit on them (same page, #increase: "extrapolated to cover the full time range"), so counts can be
fractional: they are estimates of whole numbers. The agent counts tails when a probe round ends (--probe-round,
a minute by default), so a window's tails can be a round late at either edge.

Enough to say: with n round trips, the number beyond the q-quantile is Binomial(n, 1 - q) (the order statistics of a
sample: en.wikipedia.org/wiki/Order_statistic, "the k-th order statistic ... binomial"), so p99.99 is decided by no
round trip at all below n = 10,000, and by N of them with a relative spread of 1/sqrt(N) (a Poisson count's variance
is its mean: en.wikipedia.org/wiki/Poisson_distribution). The default minimum, 100,000 per window and group, puts
about 10 round trips beyond p99.99 (a spread of about 32%).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from wirespeed.measure.prometheus import Prometheus, PrometheusError, Sample
from wirespeed.measure.snat import WINDOW_RANGE_S, duration_seconds, iso, matchers_of
from wirespeed.names import PROBE_RETRANSMITS, PROBE_RTT, PROBE_TAILS

QUANTILES = (("p50", 0.5), ("p99", 0.99), ("p999", 0.999), ("p9999", 0.9999))
QUANTILE_NAMES = {"p50": "p50", "p99": "p99", "p999": "p99.9", "p9999": "p99.99"}
# The fewest round trips per window and group for any verdict: 1 / (1 - 0.9999), one round trip beyond p99.99.
MIN_ROUND_TRIPS_FLOOR = 10_000
# The default: about 10 beyond p99.99 (module docstring). At the continuous probe's defaults (8 peers x 4 streams x
# 1/s: DefaultFleetPeers, DefaultStreams, DefaultFleetRate in agent/internal/probe) one node makes 32 round trips a
# second: 100,000 in about 52 minutes, or 10 minutes of five nodes (docs/node-tuning.md says the same).
DEFAULT_MIN_ROUND_TRIPS = 100_000
DEFAULT_GROUP_LABEL = "profile"
_OWN_LABELS = ("le", "cause", "side")  # the labels prove's own queries group by
_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")
_NOW = re.compile(r"now(?:\s*-\s*(\S+))?")
# The times a window may name: from the Unix epoch to the last second datetime can print (year 9999).
_LAST_SECOND = 253_402_300_799
# A window END this far past the local clock is refused: clocks of a laptop and a Prometheus server differ by seconds.
_FUTURE_SLACK_S = 300
_TIME_FORMS = (
    "an RFC 3339 time with its zone (2026-11-20T10:00:00Z), unix seconds (1795168800), now, or now-DURATION (now-7d)"
)


@dataclass(frozen=True)
class Window:
    """One ``--before``/``--after`` window: [start, end] in unix seconds, as the user wrote it."""

    flag: str
    text: str
    start: float
    end: float

    @property
    def milliseconds(self) -> int:
        return round((self.end - self.start) * 1000)

    @property
    def range(self) -> str:
        """The window as a PromQL range (``[3600000ms]``: exact to the millisecond the API's times carry)."""
        return f"{self.milliseconds}ms"

    def to_json(self) -> dict[str, Any]:
        return {"start": iso(self.start), "end": iso(self.end), "seconds": self.milliseconds / 1000}

    def describe(self) -> str:
        return f"{iso(self.start)}..{iso(self.end)} ({_span(self.end - self.start)})"


def _span(seconds: float) -> str:
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _instant(text: str, flag: str, now: float) -> tuple[float | None, str | None]:
    """One end of a window in unix seconds, or why it is not one."""
    raw = text.strip()
    bad = f"{flag}: {raw!r} is not allowed: {_TIME_FORMS}"
    if match := _NOW.fullmatch(raw):
        if match[1] is None:
            return now, None
        try:
            return now - duration_seconds(match[1], flag, 0.001, WINDOW_RANGE_S[1] * 2), None
        except PrometheusError:
            return None, bad
    if _NUMBER.fullmatch(raw):
        stamp = float(raw)
    else:
        try:
            moment = datetime.fromisoformat(raw)
            stamp = moment.timestamp()
        except (ValueError, OverflowError):
            return None, bad
        if moment.tzinfo is None:
            return None, f"{flag}: {raw!r} is not allowed: give the time's zone (Z for UTC): {_TIME_FORMS}"
    if not 0 <= stamp <= _LAST_SECOND:
        return None, f"{flag}: {raw!r} is not allowed: a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z"
    return stamp, None


def parse_window(text: str, flag: str, now: float) -> tuple[Window | None, list[str]]:
    """``START..END`` as a :class:`Window`, or every problem with it."""
    low, high = WINDOW_RANGE_S
    shape = f"{flag}: {text!r} is not allowed: START..END, each {_TIME_FORMS}"
    if text.count("..") != 1:
        return None, [shape]
    first, second = text.split("..")
    start, start_problem = _instant(first, flag, now)
    end, end_problem = _instant(second, flag, now)
    problems = [p for p in (start_problem, end_problem) if p]
    if start is None or end is None:
        return None, problems
    if end <= start:
        problems.append(f"{flag}: {text!r} is not allowed: END ({iso(end)}) must be after START ({iso(start)})")
    elif not low <= end - start <= high:
        problems.append(
            f"{flag}: {text!r} is not allowed: a window from {_span(low)} to {_span(high)} long (it is "
            f"{_span(end - start)}): shorter measures a few scrapes, longer outlives any retention"
        )
    if end > now + _FUTURE_SLACK_S:
        problems.append(f"{flag}: {text!r} is not allowed: END ({iso(end)}) is in the future; now is {iso(now)}")
    return (Window(flag, text, start, end) if not problems else None), problems


def parse_windows(before: str, after: str, now: float | None = None) -> tuple[list[Window], list[str]]:
    """Both windows, or every problem with either (and with the pair: ``--before`` must end by ``--after``'s
    start, or the two answers share round trips)."""
    now = time.time() if now is None else now
    first, first_problems = parse_window(before, "--before", now)
    second, second_problems = parse_window(after, "--after", now)
    problems = first_problems + second_problems
    if first is not None and second is not None and first.end > second.start:
        problems.append(
            f"--before {before} and --after {after}: the windows overlap (before ends {iso(first.end)}, after starts "
            f"{iso(second.start)}): give --before a window that ends by the time --after starts"
        )
    return ([first, second] if first and second and not problems else []), problems


def check_group_label(label: str) -> str | None:
    """None when ``label`` is a Prometheus label name, else why not (prometheus.io/docs/concepts/data_model/: label
    names match [a-zA-Z_][a-zA-Z0-9_]*; names beginning with __ are reserved for internal use)."""
    if label in _OWN_LABELS:
        return (
            f"--by: {label!r} is not allowed: prove already splits by it ({', '.join(_OWN_LABELS)}); give a label that "
            "names a group of nodes, e.g. profile"
        )
    if _LABEL_NAME.fullmatch(label) and not label.startswith("__"):
        return None
    return f"--by: {label!r} is not allowed: a label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __), e.g. profile"


@dataclass(frozen=True)
class Percentile:
    """One percentile: its interpolated value and the bucket that holds it (``upper`` None: the +Inf bucket, where
    the value is the last bound and the truth is above it)."""

    name: str
    q: float
    seconds: float
    lower: float
    upper: float | None

    @property
    def above_last_bound(self) -> bool:
        return self.upper is None

    def to_json(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "bucket_seconds": [self.lower, self.upper]}


def _bucket_counts(samples: Iterable[tuple[str, float]]) -> list[tuple[float, float]]:
    """(upper bound, cumulative count) ascending, +Inf last; a count lower than the bucket below it (increase()
    extrapolates each bucket on its own) raised to it, as histogram_quantile does."""
    bounds = sorted((float(le), value) for le, value in samples)
    fixed, running = [], 0.0
    for bound, value in bounds:
        running = max(running, value)
        fixed.append((bound, running))
    return fixed


def percentile(buckets: Sequence[tuple[float, float]], name: str, q: float) -> Percentile | None:
    """histogram_quantile's answer for cumulative ``buckets`` (from :func:`_bucket_counts`); None when empty.

    Prometheus' rules (promql/quantile.go, bucketQuantile): rank = q x count; the first bucket whose cumulative count
    reaches rank holds it; inside it the value is interpolated linearly from the bucket below's bound (0 for the
    first bucket when its bound is positive); in the +Inf bucket the answer is the highest finite bound.
    """
    if len(buckets) < 2 or not math.isinf(buckets[-1][0]) or buckets[-1][1] <= 0:
        return None
    total = buckets[-1][1]
    rank = q * total
    index = next(i for i, (_, count) in enumerate(buckets) if count >= rank)
    if index == len(buckets) - 1:
        last = buckets[-2][0]
        return Percentile(name, q, last, last, None)
    upper, count = buckets[index]
    lower, below = (0.0, 0.0) if index == 0 else buckets[index - 1]
    if index == 0 and upper <= 0:
        return Percentile(name, q, upper, upper, upper)
    inside = count - below
    # Prometheus' own arithmetic, in its order (bucketStart + (bucketEnd-bucketStart)*(rank/count)), so the value is
    # histogram_quantile's to the last bit, not within a rounding of it.
    seconds = upper if inside <= 0 else lower + (upper - lower) * ((rank - below) / inside)
    return Percentile(name, q, seconds, lower, upper)


@dataclass
class Arm:
    """One group's round trips in one window."""

    buckets: list[tuple[float, float]] = field(default_factory=list)
    tails: dict[tuple[str, str], float] = field(default_factory=dict)
    retransmits: float | None = None

    @property
    def round_trips(self) -> float:
        return self.buckets[-1][1] if self.buckets and math.isinf(self.buckets[-1][0]) else 0.0

    @property
    def tail_count(self) -> float:
        return sum(self.tails.values())

    def per_million(self, count: float) -> float | None:
        return count / self.round_trips * 1e6 if self.round_trips > 0 else None

    def percentiles(self) -> list[Percentile]:
        return [p for name, q in QUANTILES if (p := percentile(self.buckets, name, q)) is not None]

    def causes(self) -> list[tuple[str, str, float]]:
        """(cause, side, tails), most first; causes with no tail left out."""
        found = [(cause, side, n) for (cause, side), n in self.tails.items() if n > 0]
        return sorted(found, key=lambda c: (-c[2], c[0], c[1]))

    def to_json(self) -> dict[str, Any]:
        return {
            "round_trips": self.round_trips,
            "percentiles_seconds": {p.name: p.to_json() for p in self.percentiles()},
            "tails": self.tail_count,
            "tails_per_million": self.per_million(self.tail_count),
            "causes": [
                {"cause": c, "side": s, "tails": n, "per_million": self.per_million(n)} for c, s, n in self.causes()
            ],
            "retransmits": self.retransmits,
        }


@dataclass(frozen=True)
class Group:
    """One group (a value of the ``--by`` label; "" for series without it) before and after."""

    name: str
    before: Arm
    after: Arm

    def enough(self, minimum: int) -> bool:
        return self.before.round_trips >= minimum and self.after.round_trips >= minimum


@dataclass
class Proof:
    """What one `wirespeed prove` asked and found."""

    prometheus: Prometheus
    windows: list[Window]
    by: str
    selector: str
    min_round_trips: int
    groups: list[Group] = field(default_factory=list)
    bounds: list[float] = field(default_factory=list)
    asked: list[tuple[Window, str]] = field(default_factory=list)
    """Every query, with the window it was evaluated for (at the window's end)."""

    @property
    def enough(self) -> bool:
        return bool(self.groups) and all(g.enough(self.min_round_trips) for g in self.groups)

    def queries_for(self, window: Window) -> dict[str, str]:
        sel = matchers_of(self.selector)
        return {
            "buckets": f"sum by ({self.by}, le) (increase({PROBE_RTT}_bucket{sel}[{window.range}]))",
            "tails": f"sum by ({self.by}, cause, side) (increase({PROBE_TAILS}{sel}[{window.range}]))",
            "retransmits": f"sum by ({self.by}) (increase({PROBE_RETRANSMITS}{sel}[{window.range}]))",
        }

    def _ask(self, promql: str, window: Window) -> list[Sample]:
        self.asked.append((window, promql))
        kind, series = self.prometheus.query(promql, window.end)
        if kind != "vector":
            raise PrometheusError(
                f"{self.prometheus.flag} {self.prometheus.shown_url}: {promql} did not answer a vector"
            )
        return [s for s in series if math.isfinite(s.value) and s.value >= 0]

    def _arms(self, window: Window) -> dict[str, Arm]:
        queries = self.queries_for(window)
        arms: dict[str, Arm] = {}
        per_le: dict[str, list[tuple[str, float]]] = {}
        for s in self._ask(queries["buckets"], window):
            if "le" in s.labels:
                per_le.setdefault(s.labels.get(self.by, ""), []).append((s.labels["le"], s.value))
        for group, samples in per_le.items():
            arms.setdefault(group, Arm()).buckets = _bucket_counts(samples)
            self.bounds = sorted({float(le) for le, _ in samples if math.isfinite(float(le))} | set(self.bounds))
        for s in self._ask(queries["tails"], window):
            key = (s.labels.get("cause", ""), s.labels.get("side", ""))
            arm = arms.setdefault(s.labels.get(self.by, ""), Arm())
            arm.tails[key] = arm.tails.get(key, 0.0) + s.value
        for s in self._ask(queries["retransmits"], window):
            arms.setdefault(s.labels.get(self.by, ""), Arm()).retransmits = s.value
        return arms

    def measure(self) -> Proof:
        """Ask Prometheus for both windows; PrometheusError when neither has a probe series at all."""
        before, after = (self._arms(w) for w in self.windows)
        if not any(a.buckets for a in (*before.values(), *after.values())):
            where = f" matching {self.selector}" if self.selector else ""
            raise PrometheusError(
                f"{self.prometheus.flag} {self.prometheus.shown_url}: no {PROBE_RTT}_bucket series{where} in either "
                "window: does this Prometheus scrape the wirespeed agent with its probe on (the agent's --probe, or "
                "the profile's probe section), and are --before and --after within its retention?"
            )
        names = sorted(set(before) | set(after))
        self.groups = [Group(n, before.get(n, Arm()), after.get(n, Arm())) for n in names]
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.prometheus.shown_url,
            "selector": self.selector or None,
            "by": self.by,
            "before": self.windows[0].to_json(),
            "after": self.windows[1].to_json(),
            "min_round_trips": self.min_round_trips,
            "bucket_bounds_seconds": self.bounds,
            "queries": [{"window": w.flag.removeprefix("--"), "time": iso(w.end), "query": q} for w, q in self.asked],
            "enough": self.enough,
            "groups": [
                {
                    "group": g.name or None,
                    "enough": g.enough(self.min_round_trips),
                    "before": g.before.to_json(),
                    "after": g.after.to_json(),
                }
                for g in self.groups
            ],
        }
