"""The dashboard's probe and per-workload panels against a real Prometheus (Debian's prometheus, started on loopback by
tests/prometheus_lab.py): each panel's query, as Grafana sends it, returns series with the labels its legend reads.

A stand-in (not the agent) for three nodes' agents serves the agent's probe and per-workload SNAT series; every series
it serves has exactly the labels the agent's README table (generated from the agent's registry) gives that metric,
and the RTT histogram the agent's 15 bucket bounds. Counters grow by a fixed amount each scrape, so every rate's
ratios, and with them every percentile's bucket, are exact whatever the scrape timing:

- aks-a (zone z1) probes aks-b and aks-c (z2): cross-zone; aks-b probes aks-a (cross) and aks-c (same); aks-c probes
  aks-b (same). Each pair per scrape: 1,000 round trips in (100, 316.2] us, of which a cross-zone pair's 3 are in
  (199.5, 316.2] ms instead (0.3%: above its p99, below its p99.9).
- tails per scrape: aks-a -> aks-b 2 (backlog, peer side), aks-b -> aks-c 1 (unexplained, local); aks-c -> aks-b's
  series stays 0.
- SNAT ports to 52.1.2.3:443/tcp: on aks-a payments-api 1,200, export 900 and the agent's "other" 1,400; on aks-b
  payments-api 300.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prometheus_lab import SCRAPE_INTERVAL_S, running_prometheus
from test_dashboard import TARGET_LABELS, agent_series
from test_prove_from_prometheus import BOUNDS, FAST, SLOW
from wirespeed.manifests import monitoring
from wirespeed.names import PROBE_RTT, PROBE_TAILS, SNAT_PORTS_IN_USE_BY_WORKLOAD

ZONES = {"aks-a": "z1", "aks-b": "z2", "aks-c": "z2"}
PEERS = {"aks-a": ("aks-b", "aks-c"), "aks-b": ("aks-a", "aks-c"), "aks-c": ("aks-b",)}
TAILS = {("aks-a", "aks-b"): ("backlog", "peer", 2), ("aks-b", "aks-c"): ("unexplained", "local", 1)}
TAILS_AT_ZERO = {("aks-c", "aks-b"): ("unexplained", "local", 0)}
DESTINATION = "52.1.2.3:443/tcp"
WORKLOADS = {
    "aks-a": {
        ("checkout", "payments-api", "Deployment"): 1200,
        ("batch", "export", "CronJob"): 900,
        ("", "other", ""): 1400,
    },
    "aks-b": {("checkout", "payments-api", "Deployment"): 300},
}
CLUSTER = "lab"
SCRAPES = 12  # per stand-in before the queries: 6 s at the lab's 0.5 s, more than the rate window below holds
# Grafana's $__rate_interval is max($__interval + scrape interval, 4 x scrape interval)
# (grafana.com/docs/grafana/latest/datasources/prometheus/template-variables/, "Use __rate_interval"): 4 x 0.5 s is
# 2 s; 5 s holds ten of the lab's scrapes.
RATE_INTERVAL = "5s"
NEW_PANELS = (
    "SNAT: top workloads by destination",
    "Probe: round-trip percentiles",
    "Probe: tails by cause and side",
    "Probe: worst node pairs",
)


def _labels(**labels: str) -> str:
    return ",".join(f'{k}="{v}"' for k, v in labels.items())


def exposition(node: str, scrape: int) -> str:
    """What the stand-in for ``node``'s agent answers to its ``scrape``-th scrape (counters: ``scrape`` times each
    step), in the text format (prometheus.io/docs/instrumenting/exposition_formats/)."""
    lines = [f"# TYPE {PROBE_RTT} histogram"]
    for peer in PEERS[node]:
        zones = "same" if ZONES[peer] == ZONES[node] else "cross"
        per_bucket = {FAST: 997, SLOW: 3} if zones == "cross" else {FAST: 1000}
        pair = _labels(peer_node=peer, peer_zone=ZONES[peer], zones=zones)
        running = 0
        for index, bound in enumerate([*BOUNDS, float("inf")]):
            running += per_bucket.get(index, 0) * scrape
            le = "+Inf" if bound == float("inf") else f"{bound:g}"
            lines.append(f'{PROBE_RTT}_bucket{{{pair},le="{le}"}} {running}')
        lines += [f"{PROBE_RTT}_count{{{pair}}} {running}", f"{PROBE_RTT}_sum{{{pair}}} 0"]
    lines.append(f"# TYPE {PROBE_TAILS} counter")
    for (source, peer), (cause, side, per_scrape) in (TAILS | TAILS_AT_ZERO).items():
        if source == node:
            lines.append(f"{PROBE_TAILS}{{{_labels(peer_node=peer, cause=cause, side=side)}}} {per_scrape * scrape}")
    lines.append(f"# TYPE {SNAT_PORTS_IN_USE_BY_WORKLOAD} gauge")
    for (namespace, workload, kind), ports in WORKLOADS.get(node, {}).items():
        destination = "other" if workload == "other" else DESTINATION
        labels = _labels(namespace=namespace, workload=workload, kind=kind, destination=destination)
        lines.append(f"{SNAT_PORTS_IN_USE_BY_WORKLOAD}{{{labels}}} {ports}")
    return "\n".join(lines) + "\n"


class StandIn:
    """A stand-in for one node's agent ``/metrics`` (not the agent): answers :func:`exposition` and counts scrapes."""

    def __init__(self, node: str) -> None:
        self.node, self.scrapes = node, 0
        self._lock = threading.Lock()
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with stand_in._lock:
                    stand_in.scrapes += 1
                    body = exposition(stand_in.node, stand_in.scrapes).encode()
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


def query(url: str, expr: str) -> list[dict[str, Any]]:
    """An instant query at now; fails with Prometheus's error when the query does not run."""
    try:
        with urllib.request.urlopen(f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}), timeout=10) as r:
            data = json.load(r)  # loopback URL of this lab
    except urllib.error.HTTPError as error:
        pytest.fail(f"{expr}: {error.read().decode()}")
    assert data["status"] == "success", data
    result: list[dict[str, Any]] = data["data"]["result"]
    return result


def as_grafana_sends_it(expr: str, nodes: tuple[str, ...]) -> str:
    """Grafana's variables: the rate window it picks at the lab's scrape interval, Cluster the lab's, Node a choice
    of ``nodes`` as Grafana sends a multi-value to Prometheus, ``(a|b|c)`` with each value regex-escaped
    (grafana.com/docs/grafana/latest/dashboards/variables/variable-syntax/, "Formatting multi-value variables"; the
    lab's names need no escaping); Pool at its All (.*)."""
    assert all(re.fullmatch(r"[a-z0-9-]+", n) for n in nodes), nodes
    expr = expr.replace("$__rate_interval", RATE_INTERVAL).replace("$cluster", CLUSTER).replace("$pool", ".*")
    return expr.replace("$node", "(" + "|".join(nodes) + ")")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    stand_ins = [StandIn(node) for node in ZONES]
    targets = [(s.port, {"node": s.node, "cluster": CLUSTER}) for s in stand_ins]
    try:
        with running_prometheus(Path(tmp_path_factory.mktemp("prometheus")), targets, SCRAPE_INTERVAL_S) as url:
            deadline = time.monotonic() + 60
            while any(s.scrapes < SCRAPES for s in stand_ins):
                assert time.monotonic() < deadline, f"Prometheus did not scrape every stand-in {SCRAPES} times in 60 s"
                time.sleep(0.05)
            yield url
    finally:
        for stand_in in stand_ins:
            with contextlib.suppress(OSError):
                stand_in.server.shutdown()
                stand_in.server.server_close()


def panel(title: str) -> monitoring.PanelSpec:
    (spec,) = [p for p in monitoring.PANELS if p.title == title]
    return spec


def results(url: str, title: str, nodes: tuple[str, ...] = tuple(ZONES)) -> list[list[dict[str, Any]]]:
    """Each of the panel's queries' series, after checking each series has exactly the labels its legend reads."""
    answers = []
    for q in panel(title).queries:
        series = query(url, as_grafana_sends_it(q.expr, nodes))
        assert series, (title, q.expr)
        legend = set(re.findall(r"\{\{(\w+)\}\}", q.legend))
        for s in series:
            assert set(s["metric"]) == legend, (title, s["metric"], q.legend)
        answers.append(series)
    return answers


def test_the_stand_in_serves_the_agent_s_labels() -> None:
    exported = agent_series()
    for node in ZONES:
        for line in exposition(node, 1).splitlines():
            if line.startswith("#"):
                continue
            name, labels = re.fullmatch(r"(\w+)\{(.*)\} \S+", line).groups()  # type: ignore[union-attr]
            assert set(re.findall(r'(\w+)="', labels)) == exported[name], line
    assert not exported[PROBE_RTT + "_bucket"] & TARGET_LABELS


def test_the_node_filter_lists_every_agent_node_without_kube_state_metrics(lab: str) -> None:
    _, _, nodes_query, _ = next(f for f in monitoring._FILTERS if f[0] == "node")
    assert {s["metric"]["node"] for s in query(lab, as_grafana_sends_it(nodes_query, ()))} == set(ZONES)


def test_top_workloads_names_each_node_s_workloads_without_other(lab: str) -> None:
    (series,) = results(lab, "SNAT: top workloads by destination")
    got = {
        (s["metric"]["node"], s["metric"]["namespace"], s["metric"]["workload"], s["metric"]["kind"]): s["value"][1]
        for s in series
    }
    assert got == {
        ("aks-a", "checkout", "payments-api", "Deployment"): "1200",
        ("aks-a", "batch", "export", "CronJob"): "900",
        ("aks-b", "checkout", "payments-api", "Deployment"): "300",
    }
    assert {s["metric"]["destination"] for s in series} == {DESTINATION}


def _linear(quantile: float, below: float, share: float, bucket: int) -> float:
    """histogram_quantile's answer for a rank in ``bucket``, which holds ``share`` of the round trips with ``below``
    of them in lower buckets: linear inside the bucket (prometheus.io/docs/prometheus/latest/querying/functions/,
    histogram_quantile)."""
    lower, upper = BOUNDS[bucket - 1], BOUNDS[bucket]
    return lower + (upper - lower) * (quantile - below) / share


def test_percentiles_put_the_cross_zone_p99_9_in_the_retransmission_bucket(lab: str) -> None:
    got = [{s["metric"]["zones"]: float(s["value"][1]) for s in series} for series in results(lab, NEW_PANELS[1])]
    # Same zone: every round trip in (100, 316.2] us. Cross zone: 99.7% there, 0.3% in (199.5, 316.2] ms, so p99.9
    # is two thirds into the bucket of round trips that waited out an RTO: 277.3 ms.
    assert got == [
        {"same": pytest.approx(_linear(q, 0, 1, FAST)), "cross": pytest.approx(cross)}
        for q, cross in (
            (0.5, _linear(0.5, 0, 0.997, FAST)),
            (0.99, _linear(0.99, 0, 0.997, FAST)),
            (0.999, _linear(0.999, 0.997, 0.003, SLOW)),
        )
    ]
    assert got[2]["cross"] == pytest.approx(0.2773)
    # One node chosen: only its pairs, all cross-zone.
    (only_a, *_) = results(lab, NEW_PANELS[1], ("aks-a",))
    assert {s["metric"]["zones"] for s in only_a} == {"cross"}


def test_tails_by_cause_and_side(lab: str) -> None:
    (series,) = results(lab, "Probe: tails by cause and side")
    got = {(s["metric"]["cause"], s["metric"]["side"]): float(s["value"][1]) for s in series}
    assert set(got) == {("backlog", "peer"), ("unexplained", "local")}
    assert all(v > 0 for v in got.values()), got


def test_worst_pairs_rank_the_pairs_with_tails_and_leave_out_the_rest(lab: str) -> None:
    (series,) = results(lab, "Probe: worst node pairs")
    got = {(s["metric"]["node"], s["metric"]["peer_node"]): float(s["value"][1]) for s in series}
    assert set(got) == {("aks-a", "aks-b"), ("aks-b", "aks-c")}  # aks-c -> aks-b had none
    assert got[("aks-a", "aks-b")] > got[("aks-b", "aks-c")]
    (only_b,) = results(lab, "Probe: worst node pairs", ("aks-b",))
    assert [(s["metric"]["node"], s["metric"]["peer_node"]) for s in only_b] == [("aks-b", "aks-c")]


def test_every_new_panel_is_proven_here() -> None:
    # The panels this file runs are the dashboard's probe and per-workload panels, by the series they read.
    reads = {
        p.title
        for p in monitoring.PANELS
        if any(m in q.expr for q in p.queries for m in (PROBE_RTT, PROBE_TAILS, SNAT_PORTS_IN_USE_BY_WORKLOAD))
    }
    assert reads == set(NEW_PANELS)
