"""`wirespeed prove --from-prometheus` end to end through the CLI, against a real Prometheus server (Debian's
prometheus, started on loopback by tests/prometheus_lab.py) that scraped stand-ins for three nodes' agents.

A stand-in (not the agent) serves the agent's probe series (wirespeed.names PROBE_*) as a scripted timeline: each
scrape answers the next point, every sample carrying its own timestamp (the text format's optional timestamp,
prometheus.io/docs/instrumenting/exposition_formats/, which Prometheus keeps: honor_timestamps defaults to true), one
point every 30 s of 20 minutes, T0 to T0+20m (T0: 25 minutes ago). So the windows' edges sit exactly on samples,
increase() extrapolates nothing, and every number is exact:

- before, T0..T0+10m: profile throughput (aks-net-1 + aks-net-2) made 200,000 round trips: 150,000 in
  (100, 316.2] us, 49,900 in (316.2, 1000] us and 100 in (199.5, 316.2] ms, with 100 tails (backlog, on the peer)
  and 100 retransmits; profile default (aks-gp-1) 5,000, all in (100, 316.2] us.
- after, T0+10m..T0+20m: throughput 200,000 again (150,000, 49,998, and 2 slow ones left unexplained, locally),
  counted across aks-net-2's restart at T0+15m (its counters reset); default 5,000.

The bucket bounds are the agent's 15 (agent/internal/metrics/probe.go).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from clirun import wirespeed
from prometheus_lab import running_prometheus
from test_cli_json_keys import DOCUMENTED
from test_size_from_prometheus import BIG, answering  # noqa: F401 (answering: the hostile-server fixture)
from wirespeed.measure.snat import iso
from wirespeed.names import PROBE_CAUSES, PROBE_RETRANSMITS, PROBE_RTT, PROBE_SIDES, PROBE_TAILS

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "prove"
# Prometheus appends a scraped sample only within an hour of the newest it holds (the head block's appendable
# window, half its 2 h chunk range: the log says "samples that are too old"), and the scrape's own `up` is now: so
# the timeline is the 20 minutes that ended 5 minutes ago, on whole minutes, and the goldens name its times T0+.
T0 = int(time.time()) // 60 * 60 - 25 * 60
STEP_S = 30
POINTS = 41  # T0 .. T0+20m
BEFORE = f"{iso(T0)}..{iso(T0 + 600)}"
AFTER = f"{iso(T0 + 600)}..{iso(T0 + 1200)}"
SHOWN_URL = "http://prometheus.test:9090"
# The agent's 15 bounds (agent/internal/metrics/probe.go, probeBuckets): of the one-shot probe's 1e-5 x 10^(k/10) s
# (4 significant digits), every fifth and the four just under each retransmission timeout.
BOUNDS = [float(f"{1e-5 * 10 ** (k / 10):.4g}") for k in range(54) if k % 5 == 0 or k in (43, 46, 49, 53)]
FAST, FASTER, SLOW = BOUNDS.index(3.162e-4), BOUNDS.index(1e-3), BOUNDS.index(0.3162)


@dataclass
class NodeTimeline:
    """One node's probe counters at every point: per bucket (not cumulative), per (cause, side), retransmits."""

    peer: str
    buckets: list[list[int]] = field(default_factory=lambda: [[0] * (len(BOUNDS) + 1) for _ in range(POINTS)])
    tails: list[dict[tuple[str, str], int]] = field(default_factory=lambda: [{} for _ in range(POINTS)])
    retransmits: list[int] = field(default_factory=lambda: [0] * POINTS)

    def spread(self, first: int, last: int, bucket: int, total: int) -> None:
        """``total`` more round trips in ``bucket``, spread over the steps (first, last]."""
        steps = last - first
        for i in range(first + 1, POINTS):
            done = min(i, last) - first
            self.buckets[i][bucket] += total * done // steps

    def tail(self, first: int, last: int, key: tuple[str, str], total: int) -> None:
        steps = last - first
        for i in range(first + 1, POINTS):
            self.tails[i][key] = self.tails[i].get(key, 0) + total * (min(i, last) - first) // steps

    def retransmit(self, first: int, last: int, total: int) -> None:
        for i in range(first + 1, POINTS):
            self.retransmits[i] += total * (min(i, last) - first) // (last - first)

    def restart(self, at: int) -> None:
        """The agent restarted just after point ``at - 1``: from point ``at`` on, every counter counts what came after
        that point, from 0 (no round trip is lost, so a reset-aware increase() still counts every one)."""
        base_b, base_t, base_r = list(self.buckets[at - 1]), dict(self.tails[at - 1]), self.retransmits[at - 1]
        for i in range(at, POINTS):
            self.buckets[i] = [v - b for v, b in zip(self.buckets[i], base_b, strict=True)]
            self.tails[i] = {k: v - base_t.get(k, 0) for k, v in self.tails[i].items()}
            self.retransmits[i] -= base_r

    def exposition(self, point: int) -> str:
        stamp = (T0 + point * STEP_S) * 1000
        peer = f'peer_node="{self.peer}",peer_zone="z2",zones="cross"'
        lines = [f"# TYPE {PROBE_RTT} histogram"]
        running = 0
        for bound, count in zip([*BOUNDS, float("inf")], self.buckets[point], strict=True):
            running += count
            le = "+Inf" if bound == float("inf") else f"{bound:g}"
            lines.append(f'{PROBE_RTT}_bucket{{{peer},le="{le}"}} {running} {stamp}')
        lines += [f"{PROBE_RTT}_count{{{peer}}} {running} {stamp}", f"{PROBE_RTT}_sum{{{peer}}} 0 {stamp}"]
        lines.append(f"# TYPE {PROBE_TAILS} counter")
        for cause in PROBE_CAUSES:  # every series from the start, at 0: one born mid-window would be extrapolated
            for side in PROBE_SIDES:
                value = self.tails[point].get((cause, side), 0)
                lines.append(f'{PROBE_TAILS}{{peer_node="{self.peer}",cause="{cause}",side="{side}"}} {value} {stamp}')
        lines += [
            f"# TYPE {PROBE_RETRANSMITS} counter",
            f'{PROBE_RETRANSMITS}{{peer_node="{self.peer}"}} {self.retransmits[point]} {stamp}',
        ]
        return "\n".join(lines) + "\n"


def fleet() -> dict[str, tuple[str, NodeTimeline]]:
    """node -> (profile, timeline), the module docstring's table."""
    mid, end = 20, 40
    nodes = {
        "aks-net-1": ("throughput", NodeTimeline("aks-net-2")),
        "aks-net-2": ("throughput", NodeTimeline("aks-net-1")),
    }
    for _, node in nodes.values():
        node.spread(0, mid, FAST, 75_000)
        node.spread(0, mid, FASTER, 24_950)
        node.spread(0, mid, SLOW, 50)
        node.tail(0, mid, ("backlog", "peer"), 50)
        node.retransmit(0, mid, 50)
        node.spread(mid, end, FAST, 75_000)
        node.spread(mid, end, FASTER, 24_999)
        node.spread(mid, end, SLOW, 1)
        node.tail(mid, end, ("unexplained", "local"), 1)
    nodes["aks-net-2"][1].restart(30)
    general = NodeTimeline("aks-net-1")
    general.spread(0, mid, FAST, 5_000)
    general.spread(mid, end, FAST, 5_000)
    nodes["aks-gp-1"] = ("default", general)
    return nodes


class TimelineAgent:
    """Serves one node's timeline, one point per scrape, then the last point again."""

    def __init__(self, timeline: NodeTimeline) -> None:
        self.timeline, self.served, self._lock = timeline, 0, threading.Lock()
        agent = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with agent._lock:
                    point = min(agent.served, POINTS - 1)
                    agent.served += 1
                body = agent.timeline.exposition(point).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _query(url: str, promql: str, at: float) -> list[dict[str, object]]:
    form = urllib.parse.urlencode({"query": promql, "time": str(at)}).encode()
    with urllib.request.urlopen(f"{url}/api/v1/query", form, timeout=10) as answer:  # loopback URL of this lab
        result: list[dict[str, object]] = json.load(answer)["data"]["result"]
        return result


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    nodes = fleet()
    agents = {name: TimelineAgent(timeline) for name, (_, timeline) in nodes.items()}
    targets = [(agents[name].port, {"node": name, "profile": profile}) for name, (profile, _) in nodes.items()]
    try:
        with running_prometheus(tmp_path_factory.mktemp("prometheus"), targets, 0.1) as running:
            deadline = time.monotonic() + 60
            end = T0 + (POINTS - 1) * STEP_S
            while time.monotonic() < deadline:
                found = _query(running, f"count(timestamp({PROBE_RTT}_count) == {end})", end)
                if found and found[0]["value"][1] == str(len(nodes)):  # type: ignore[index]
                    break
                time.sleep(0.2)
            else:
                raise TimeoutError("Prometheus did not ingest the whole timeline in 60 s")
            yield running
    finally:
        for agent in agents.values():
            agent.server.shutdown()
            agent.server.server_close()


def _prove(url: str, *extra: str) -> tuple[int, str, str]:
    out = wirespeed("prove", "--from-prometheus", url, "--before", BEFORE, "--after", AFTER, *extra)
    text = out.stdout.replace(url, SHOWN_URL)
    for offset in (0, 600, 1200):
        text = text.replace(iso(T0 + offset), f"T0+{offset // 60}m")
    return out.returncode, text, out.stderr


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"


def test_json_numbers_are_exact(url: str) -> None:
    code, out, err = _prove(url, "--selector", 'profile="throughput"', "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["enough"] is True
    assert doc["min_round_trips"] == 100_000
    assert doc["by"] == "profile"
    assert doc["bucket_bounds_seconds"] == BOUNDS
    assert doc["before"] == {"start": "T0+0m", "end": "T0+10m", "seconds": 600.0}
    assert doc["queries"][0] == {
        "window": "before",
        "time": "T0+10m",
        "query": f'sum by (profile, le) (increase({PROBE_RTT}_bucket{{profile="throughput"}}[600000ms]))',
    }
    assert [q["window"] for q in doc["queries"]] == ["before"] * 3 + ["after"] * 3
    [group] = doc["groups"]
    assert group["group"] == "throughput"
    assert group["enough"] is True
    before, after = group["before"], group["after"]
    assert before["round_trips"] == 200_000
    assert after["round_trips"] == 200_000
    lo, fast, faster, slow = 1e-4, 3.162e-4, 1e-3, 0.3162
    expected_before = {
        "p50": [lo + (fast - lo) * 100_000 / 150_000, [lo, fast]],
        "p99": [fast + (faster - fast) * 48_000 / 49_900, [fast, faster]],
        "p999": [fast + (faster - fast) * 49_800 / 49_900, [fast, faster]],
        "p9999": [0.1995 + (slow - 0.1995) * 80 / 100, [0.1995, slow]],  # above the 199.5 ms bound: an RTO
    }
    for name, (seconds, bucket) in expected_before.items():
        assert before["percentiles_seconds"][name]["seconds"] == pytest.approx(seconds, rel=1e-12), name
        assert before["percentiles_seconds"][name]["bucket_seconds"] == bucket, name
    assert after["percentiles_seconds"]["p9999"]["seconds"] == pytest.approx(
        fast + (faster - fast) * 49_980 / 49_998, rel=1e-12
    )
    assert before["tails"] == 100
    assert before["tails_per_million"] == 500
    assert before["causes"] == [{"cause": "backlog", "side": "peer", "tails": 100, "per_million": 500}]
    assert after["tails"] == 2
    assert after["tails_per_million"] == 10
    assert after["causes"] == [{"cause": "unexplained", "side": "local", "tails": 2, "per_million": 10}]
    assert before["retransmits"] == 100
    assert after["retransmits"] == 0


def test_percentiles_are_histogram_quantiles(url: str) -> None:
    """The interpolation is Prometheus' own: histogram_quantile over the same increase() gives the same numbers."""
    _code, out, _err = _prove(url, "--json")
    doc = json.loads(out)
    for window in ("before", "after"):
        end = T0 + (600 if window == "before" else 1200)
        for name, q in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999), ("p9999", 0.9999)):
            promql = f"histogram_quantile({q}, sum by (profile, le) (increase({PROBE_RTT}_bucket[600000ms])))"
            theirs = {s["metric"]["profile"]: float(s["value"][1]) for s in _query(url, promql, end)}  # type: ignore[index]
            ours = {g["group"]: g[window]["percentiles_seconds"][name]["seconds"] for g in doc["groups"]}
            assert ours == pytest.approx(theirs, rel=1e-12), (window, name)


def test_too_few_round_trips_exits_3(url: str) -> None:
    """The default profile's node made 5,000 round trips per window: printed, and too few to say (exit 3)."""
    code, out, err = _prove(url)
    assert code == 3, err
    _golden("two-profiles.txt", out)
    assert "profile default:" in out
    assert "too few round trips to say (before and after below 100,000)" in out


def test_text_of_one_profile(url: str) -> None:
    code, out, err = _prove(url, "--selector", 'profile="throughput"')
    assert code == 0, err
    _golden("throughput.txt", out)


def test_plot(url: str, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    code, _out, err = _prove(url, "--plot", str(tmp_path / "prove.png"))
    assert code == 3, err
    assert (tmp_path / "prove.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_probe_series_names_the_fix(url: str) -> None:
    code, _out, err = _prove(url, "--selector", 'profile="nosuch"')
    assert code == 2
    assert 'no wirespeed_agent_probe_rtt_seconds_bucket series matching profile="nosuch" in either window' in err


def test_every_bad_flag_at_once() -> None:
    out = wirespeed(
        "prove",
        "--from-prometheus",
        "http://127.0.0.1:1",
        "--before",
        "2026-11-20T10:10:00Z..2026-11-20T10:00:00+00:00",
        "--after",
        "yesterday",
        "--min-round-trips",
        "9999",
        "--by",
        "__name__",
    )
    assert out.returncode == 2
    lines = out.stderr.splitlines()
    assert lines[0] == "error: wirespeed prove: the flags are not usable:"
    assert (
        "--before: '2026-11-20T10:10:00Z..2026-11-20T10:00:00+00:00' is not allowed: END (2026-11-20T10:00:00Z) "
        "must be after START (2026-11-20T10:10:00Z)" in lines[1]
    )
    assert lines[2].startswith("  --after: 'yesterday' is not allowed: START..END")
    assert lines[3].startswith("  --by: '__name__' is not allowed")
    assert lines[4].startswith("  --min-round-trips: 9999 is not allowed: at least 10,000")


def test_overlapping_windows_are_refused() -> None:
    out = wirespeed(
        "prove", "--from-prometheus", "http://127.0.0.1:1", "--before", "now-2h..now-30m", "--after", "now-1h..now"
    )
    assert out.returncode == 2
    assert "the windows overlap" in out.stderr
    assert "give --before a window that ends by the time --after starts" in out.stderr


def test_unreachable_server_names_the_flag() -> None:
    with contextlib.closing(__import__("socket").socket()) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = wirespeed("prove", "--from-prometheus", f"http://127.0.0.1:{port}", "--before", BEFORE, "--after", AFTER)
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: --from-prometheus http://127.0.0.1:{port}: cannot reach the server")


def test_json_keys_are_the_documented_ones(url: str) -> None:
    """docs/cli-json.md's `wirespeed prove --json` section (tests/cli/test_cli_json_keys.py parses it; prove needs a
    Prometheus, so its sample runs here)."""
    keys, nested = DOCUMENTED["prove"]
    code, out, err = _prove(url, "--json")
    assert code == 3, err
    data = json.loads(out)
    assert set(data) == keys
    assert nested == {
        "queries": frozenset({"window", "time", "query"}),
        "groups": frozenset({"group", "enough", "before", "after"}),
    }
    assert all(set(q) == nested["queries"] for q in data["queries"])
    assert all(set(g) == nested["groups"] for g in data["groups"])
    arm = {"round_trips", "percentiles_seconds", "tails", "tails_per_million", "causes", "retransmits"}
    for group in data["groups"]:
        for window in ("before", "after"):
            assert set(group[window]) == arm
            assert set(group[window]["percentiles_seconds"]) == {"p50", "p99", "p999", "p9999"}
            assert all(set(c) == {"cause", "side", "tails", "per_million"} for c in group[window]["causes"])


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param({"body": BIG.encode()}, "larger than 32 MiB; narrow --selector, or --by a label with", id="big"),
        pytest.param({"content_type": "text/html", "body": b"<html>Sign in</html>"}, "answered text/html", id="html"),
    ],
)  # a silent server (the shared client's deadline) is tests/sizing/test_size_from_prometheus.py's
def test_a_wrong_answer_is_one_error_line(
    answering: Callable[..., str],  # noqa: F811 (the fixture imported above)
    answer: dict[str, object],
    message: str,
) -> None:
    server = answering(**answer)
    out = wirespeed("prove", "--from-prometheus", server, "--before", BEFORE, "--after", AFTER, "--timeout", "1")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith(f"error: --from-prometheus {server}"), out.stderr
    assert message in out.stderr
    assert out.stderr.count("\n") == 1
