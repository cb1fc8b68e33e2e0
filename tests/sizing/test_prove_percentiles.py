"""wirespeed.measure.probe without a server: percentiles from cumulative buckets by histogram_quantile's rules
(promql/quantile.go, bucketQuantile), the +Inf bucket, and the windows' parsing. The numbers against a real
Prometheus (and its own histogram_quantile) are tests/sizing/test_prove_from_prometheus.py's."""

from __future__ import annotations

import pytest

from wirespeed.cli.prove import _percentile_text, seconds_text
from wirespeed.measure.probe import _bucket_counts, check_group_label, parse_windows, percentile

INF = float("inf")


def test_linear_inside_the_bucket_that_holds_the_rank() -> None:
    buckets = _bucket_counts([("0.001", 50.0), ("0.002", 90.0), ("+Inf", 100.0)])
    p50 = percentile(buckets, "p50", 0.5)
    assert p50 is not None
    assert (p50.seconds, p50.lower, p50.upper) == (0.001, 0.0, 0.001)  # rank 50 is the first bucket's top
    p75 = percentile(buckets, "p75", 0.75)
    assert p75 is not None
    assert p75.seconds == pytest.approx(0.001 + 0.001 * 25 / 40)
    assert (p75.lower, p75.upper) == (0.001, 0.002)


def test_the_inf_bucket_answers_the_last_bound_and_says_so() -> None:
    buckets = _bucket_counts([("0.2", 10.0), ("2", 10.0), ("+Inf", 11.0)])
    p99 = percentile(buckets, "p99", 0.99)
    assert p99 is not None
    assert p99.above_last_bound
    assert (p99.seconds, p99.lower, p99.upper) == (2.0, 2.0, None)
    assert _percentile_text(p99) == "> 2 s"


def test_no_round_trips_no_percentile() -> None:
    assert percentile(_bucket_counts([("0.1", 0.0), ("+Inf", 0.0)]), "p50", 0.5) is None
    assert percentile([], "p50", 0.5) is None


def test_extrapolated_buckets_are_made_monotonic() -> None:
    """increase() extrapolates each bucket on its own, so a bucket can come out below the one under it."""
    assert _bucket_counts([("0.1", 10.2), ("0.2", 10.1), ("+Inf", 10.3)]) == [(0.1, 10.2), (0.2, 10.2), (INF, 10.3)]


@pytest.mark.parametrize(
    ("seconds", "digits", "text"),
    [
        (8.74e-5, 3, "87.4 us"),
        (0.0123, 3, "12.3 ms"),
        (1.41, 3, "1.41 s"),
        (1.259e-4, 4, "125.9 us"),
        (1e-6, 3, "1 us"),
    ],
)
def test_seconds_for_people(seconds: float, digits: int, text: str) -> None:
    assert seconds_text(seconds, digits) == text


def test_windows_relative_to_now() -> None:
    windows, problems = parse_windows("now-2h..now-1h", "now-1h..now", now=10_000.0)
    assert problems == []
    assert [(w.start, w.end, w.range) for w in windows] == [
        (2_800.0, 6_400.0, "3600000ms"),
        (6_400.0, 10_000.0, "3600000ms"),
    ]


def test_a_window_too_short_and_one_in_the_future() -> None:
    _, problems = parse_windows("now-30s..now", "now..now+1h", now=10_000.0)
    assert problems[0] == (
        "--before: 'now-30s..now' is not allowed: a window from 1m to 366d long (it is 30s): shorter measures a few "
        "scrapes, longer outlives any retention"
    )
    assert problems[1].startswith("--after: 'now+1h' is not allowed")


@pytest.mark.parametrize("label", ["le", "cause", "side", "__name__", "1pool", "pool-name"])
def test_by_must_name_a_group_label(label: str) -> None:
    assert (check_group_label(label) or "").startswith(f"--by: {label!r} is not allowed")


def test_by_accepts_a_label() -> None:
    assert check_group_label("agentpool") is None
