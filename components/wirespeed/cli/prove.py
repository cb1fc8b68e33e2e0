"""`wirespeed prove --from-prometheus URL --before START..END --after START..END`: did the change make round trips
faster? The agents' probe histograms and tails, per profile (or another label), before and after.

Exit 0 when every group had at least --min-round-trips round trips in both windows (the answer says something), 3
when any had fewer (the numbers are printed, marked as too few to say), 2 for bad input or an unusable Prometheus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from wirespeed.cli._common import JsonFlag, fail, fail_all, run
from wirespeed.cli.measured import SelectorOption, TimeoutOption, TokenOption, _token
from wirespeed.measure.probe import (
    DEFAULT_GROUP_LABEL,
    DEFAULT_MIN_ROUND_TRIPS,
    MIN_ROUND_TRIPS_FLOOR,
    QUANTILE_NAMES,
    Arm,
    Group,
    Percentile,
    Proof,
    check_group_label,
    parse_windows,
)
from wirespeed.measure.prometheus import DEFAULT_TIMEOUT_S, TIMEOUT_RANGE_S, Deadline, Prometheus, PrometheusError
from wirespeed.measure.snat import check_selector, iso
from wirespeed.names import PROBE_RTT

NOT_ENOUGH_EXIT = 3
_WINDOW_HELP = (
    "START..END: RFC 3339 times with their zone (2026-11-20T10:00:00Z), unix seconds, now or now-DURATION "
    "(now-7d..now)."
)


def register(app: typer.Typer) -> None:
    app.command("prove")(prove)


def prove(
    from_prometheus: Annotated[
        str,
        typer.Option(
            "--from-prometheus",
            metavar="URL",
            help="The Prometheus server that scrapes the wirespeed agents (its base URL, e.g. "
            "http://prometheus.monitoring:9090; user:password@ for basic auth).",
        ),
    ],
    before: Annotated[str, typer.Option("--before", metavar="START..END", help=f"The window before. {_WINDOW_HELP}")],
    after: Annotated[str, typer.Option("--after", metavar="START..END", help=f"The window after. {_WINDOW_HELP}")],
    selector: SelectorOption = None,
    by: Annotated[
        str,
        typer.Option(
            help="The label the agents' series carry that names a group: profile (the PodMonitor adds it from the "
            "agent pod's wirespeed.io/profile label), or a pool label of your scrape config."
        ),
    ] = DEFAULT_GROUP_LABEL,
    min_round_trips: Annotated[
        int,
        typer.Option(
            help=f"Round trips each group needs in each window for exit 0 (at least {MIN_ROUND_TRIPS_FLOOR:,}: one "
            "round trip beyond p99.99; the default puts about 10 beyond it)."
        ),
    ] = DEFAULT_MIN_ROUND_TRIPS,
    plot: Annotated[
        Path | None,
        typer.Option(help="Draw each group's percentiles before and after to this PNG (needs matplotlib)."),
    ] = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    bearer_token_file: TokenOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Round trips, p50/p99/p99.9/p99.99 and tails per million with their causes, per profile, before and after.

    Reads the wirespeed agents' probe series (wirespeed_agent_probe_rtt_seconds, _tails_total, _retransmits_total).
    Exit 0 when every group had at least --min-round-trips in both windows, 3 when one had fewer, 2 for bad input.
    """
    proof = _checked(from_prometheus, before, after, selector, by, min_round_trips, timeout, bearer_token_file)
    run(proof.measure)
    typer.echo(_json(proof) if as_json else explain(proof))
    if plot is not None:
        from wirespeed.cli.size import _write_plot
        from wirespeed.plot import plot_proof

        _write_plot(plot, as_json, lambda path: plot_proof(proof, path))
    if not proof.enough:
        raise typer.Exit(NOT_ENOUGH_EXIT)


def _checked(
    url: str,
    before: str,
    after: str,
    selector: str | None,
    by: str,
    min_round_trips: int,
    timeout: float,
    token_file: Path | None,
) -> Proof:
    """Every flag checked, every problem reported at once (exit 2)."""
    windows, problems = parse_windows(before, after)
    if bad := check_group_label(by):
        problems.append(bad)
    if min_round_trips < MIN_ROUND_TRIPS_FLOOR:
        problems.append(
            f"--min-round-trips: {min_round_trips} is not allowed: at least {MIN_ROUND_TRIPS_FLOOR:,} (below it no "
            "round trip lies beyond p99.99, which then says nothing)"
        )
    low, high = TIMEOUT_RANGE_S
    if not low <= timeout <= high:
        problems.append(f"--timeout: {timeout:g} is not allowed: seconds from {low:g} to {high:g}")
    checked_selector = ""
    try:
        checked_selector = check_selector(selector)
    except PrometheusError as exc:
        problems.append(str(exc))
    if problems:
        if len(problems) == 1:
            fail(problems[0])
        fail_all("wirespeed prove: the flags are not usable", problems)
    token = _token(token_file) if token_file is not None else None
    narrow = "--selector, or --by a label with fewer values"
    prometheus = run(lambda: Prometheus(url, Deadline(timeout), bearer_token=token, narrow=narrow))
    return Proof(prometheus, windows, by, checked_selector, min_round_trips)


def _json(proof: Proof) -> str:
    import json

    return json.dumps(proof.to_json(), indent=2)


def seconds_text(seconds: float, digits: int = 3) -> str:
    """A round trip for people: 87.4 us, 12.3 ms, 1.41 s (``digits`` significant digits; 999.7 us is 1 ms)."""
    text = ""
    units = (("us", 1e-6), ("ms", 1e-3), ("s", 1.0))
    for index, (name, scale) in enumerate(units):
        text = f"{seconds / scale:.{digits}g} {name}"
        # Shown in this unit while it reads below one of the next (SI prefixes step by a thousand).
        if index == len(units) - 1 or float(text.split()[0]) < round(units[index + 1][1] / scale):
            break
    return text


def _percentile_text(p: Percentile | None) -> str:
    if p is None:
        return "-"
    if p.above_last_bound:
        return f"> {seconds_text(p.lower)}"
    # The bounds with the 4 significant digits the agent gives them (agent/internal/probe/histogram.go).
    return f"{seconds_text(p.seconds)} in [{seconds_text(p.lower, 4)}, {seconds_text(p.upper or 0, 4)}]"


def _count(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value - round(value)) < 0.005 else f"{value:,.2f}"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _row(name: str, first: str, second: str) -> str:
    return f"  {name:<22} {first:>32} {second:>32}".rstrip()


def _group_lines(group: Group, proof: Proof) -> list[str]:
    title = f"{proof.by} {group.name}" if group.name else f"series without a {proof.by} label"
    arms: tuple[Arm, Arm] = (group.before, group.after)
    lines = [f"{title}:", _row("", "before", "after"), _row("round trips", *(_count(a.round_trips) for a in arms))]
    for name, label in QUANTILE_NAMES.items():
        found = [next((p for p in a.percentiles() if p.name == name), None) for a in arms]
        lines.append(_row(label, *(_percentile_text(p) for p in found)))
    lines.append(_row("tails per million", *(_rate(a.per_million(a.tail_count)) for a in arms)))
    causes = sorted({(c, s) for a in arms for c, s, _ in a.causes()})
    for cause, side in causes:
        counts = [a.tails.get((cause, side), 0.0) for a in arms]
        lines.append(
            _row(
                f"  {cause} ({side})",
                *(f"{_rate(a.per_million(n))} ({_count(n)})" for a, n in zip(arms, counts, strict=True)),
            )
        )
    lines.append(_row("probe retransmits", *(_count(a.retransmits) for a in arms)))
    if group.enough(proof.min_round_trips):
        lines.append(f"  enough round trips in both windows (at least {proof.min_round_trips:,} each)")
    else:
        short = [w for w, a in zip(("before", "after"), arms, strict=True) if a.round_trips < proof.min_round_trips]
        lines.append(
            f"  too few round trips to say ({' and '.join(short)} below {proof.min_round_trips:,}): run the probe "
            "longer or on more nodes, or widen the window"
        )
    return lines


def explain(proof: Proof) -> str:
    """The answer in prose: what was asked, then each group's before and after."""
    first, second = proof.windows
    lines = [
        f"Probe round trips by {proof.by}, from prometheus {proof.prometheus.shown_url}"
        + (f" matching {proof.selector}" if proof.selector else "")
        + ":",
        f"  before: {first.describe()}",
        f"  after:  {second.describe()}",
    ]
    lines += [f"  query ({w.flag.removeprefix('--')}, at {iso(w.end)}): {q}" for w, q in proof.asked]
    if proof.bounds:
        lines.append(
            f"Resolution: {len(proof.bounds)} bucket bounds of {PROBE_RTT} from {seconds_text(proof.bounds[0])} to "
            f"{seconds_text(proof.bounds[-1])}; a percentile is interpolated inside its bucket (shown) as "
            "histogram_quantile does, so it is known only to lie in that bucket; increase() extrapolates to the "
            "window's edges, so counts are estimates."
        )
    for group in proof.groups:
        lines += ["", *_group_lines(group, proof)]
    verdict = "enough round trips to say" if proof.enough else "NOT enough round trips to say for every group"
    lines += ["", f"Verdict: {verdict} (exit {0 if proof.enough else NOT_ENOUGH_EXIT})."]
    return "\n".join(lines)
