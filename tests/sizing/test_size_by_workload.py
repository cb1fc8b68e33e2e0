"""`wirespeed size azure-lb|azure-natgw|aws-natgw --from-prometheus URL --by-workload` end to end through the CLI,
against a real Prometheus server (Debian's prometheus, tests/prometheus_lab.py) scraping stand-ins for three nodes'
agents that serve wirespeed_agent_snat_ports_in_use_by_workload beside the per-destination series.

The lab's fleet at its peak (phase 1; phases 0 and 2 are quiet), A = 52.1.2.3:443/tcp, B = 52.9.9.9:443/tcp,
C = 52.7.7.7:443/tcp; every node's workload rows sum to its destinations' total, as the agent's do:

- aks-apps-1 (z1): A 3,100, B 900, other 400; rows checkout/payments-api A 2,100, batch/export A 700, the node
  A 100, payments-api B 900, and the agent's other row 600 (200 of it to A, 400 to the other destinations);
- aks-apps-2 (z1): A 2,500, B 1,200; rows payments-api A 1,500, export A 1,000, web/frontend B 1,200;
- aks-apps-3 (z2): C 700; rows frontend C 400, unknown C 300.

The text output is compared with golden files (tests/golden/size/; UPDATE_GOLDEN=1 rewrites them), the lab's URL
and every timestamp replaced by placeholders.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clirun import wirespeed
from conftest import ROOT
from prometheus_lab import Lab, NodeState, prometheus_lab

A, B, C = "52.1.2.3:443/tcp", "52.9.9.9:443/tcp", "52.7.7.7:443/tcp"
NODES = {"aks-apps-1": "z1", "aks-apps-2": "z1", "aks-apps-3": "z2"}
STEP = "1s"  # the lab scrapes every 500 ms and holds each phase for 5 scrapes: a 1 s step sees every phase
GOLDEN = ROOT / "tests" / "golden" / "size"
REGEN = os.environ.get("UPDATE_GOLDEN") == "1"

PAYMENTS, EXPORT, FRONTEND = (
    ("checkout", "payments-api", "Deployment"),
    ("batch", "export", "CronJob"),
    ("web", "frontend", "StatefulSet"),
)
OTHER = ("", "other", "", "other")


def _rows(*rows: tuple[tuple[str, str, str], str, int]) -> dict[tuple[str, str, str, str], int]:
    return {(*who, destination): ports for who, destination, ports in rows}


PEAK = {
    "aks-apps-1": NodeState(
        {A: 3_100, B: 900, "other": 400},
        peak=3_100,
        allocated=4096,
        workloads=_rows(
            (PAYMENTS, A, 2_100), (EXPORT, A, 700), (("", "aks-apps-1", "node"), A, 100), (PAYMENTS, B, 900)
        )
        | {OTHER: 600},
    ),
    "aks-apps-2": NodeState(
        {A: 2_500, B: 1_200},
        peak=2_800,
        allocated=4096,
        workloads=_rows((PAYMENTS, A, 1_500), (EXPORT, A, 1_000), (FRONTEND, B, 1_200)),
    ),
    "aks-apps-3": NodeState(
        {C: 700},
        peak=700,
        allocated=4096,
        workloads=_rows((FRONTEND, C, 400), (("", "unknown", "unknown"), C, 300)),
    ),
}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with prometheus_lab(tmp_path_factory.mktemp("prometheus"), NODES) as running:
        running.phase(
            {
                "aks-apps-1": NodeState({A: 100}, peak=100, allocated=4096, workloads=_rows((PAYMENTS, A, 100))),
                "aks-apps-2": NodeState({A: 80}, peak=80, allocated=4096, workloads=_rows((EXPORT, A, 80))),
            }
        )
        running.phase(PEAK)
        running.phase(
            {
                "aks-apps-1": NodeState({A: 200}, peak=3_100, allocated=4096, workloads=_rows((PAYMENTS, A, 200))),
                "aks-apps-2": NodeState({A: 150}, peak=2_800, allocated=4096, workloads=_rows((EXPORT, A, 150))),
                "aks-apps-3": NodeState({C: 100}, peak=700, allocated=4096, workloads=_rows((FRONTEND, C, 100))),
            }
        )
        yield running


def _size(*args: str) -> tuple[int, str, str]:
    out = wirespeed("size", *args)
    return out.returncode, out.stdout, out.stderr


def _in_peak_phase(lab: Lab, stamp: str) -> bool:
    from datetime import datetime

    seconds = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return lab.phase_times[1] - 0.1 <= seconds <= lab.phase_times[2] + 1


def _rows_of(by_workload: dict[str, Any]) -> list[tuple[str, str, str, str, int]]:
    return [(w["namespace"], w["workload"], w["kind"], w["destination"], w["ports"]) for w in by_workload["workloads"]]


def _normalised(text: str, lab: Lab) -> str:
    text = text.replace(lab.url, "http://prometheus.lab:9090")
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", text)  # the stand-ins' scrape targets (instance)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>", text)


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} missing: UPDATE_GOLDEN=1 .venv/bin/pytest {Path(__file__).name}"
    assert text == path.read_text(), f"differs from {path}: UPDATE_GOLDEN=1 rewrites it (then read the diff)"


def test_azure_lb_names_the_workloads_of_the_busiest_node_at_its_peak(lab: Lab) -> None:
    code, out, err = _size("azure-lb", "--pool", "20", "--from-prometheus", lab.url, "--by-workload", "--json")
    assert code == 0, err
    prometheus = json.loads(out)["measured_peak"]["prometheus"]
    found = prometheus["by_workload"]
    # aks-apps-1's rows to A at the moment it held 3,100 ports to A; 200 of them are in its "other" row.
    assert _rows_of(found) == [
        ("checkout", "payments-api", "Deployment", A, 2_100),
        ("batch", "export", "CronJob", A, 700),
        ("", "aks-apps-1", "node", A, 100),
    ]
    assert (found["peak"], found["unnamed_ports"], found["allocation"]) == (3_100, 200, 3_880)
    assert found["time"] == prometheus["peak"]["time"]
    assert _in_peak_phase(lab, found["time"])
    # 2,100 of the peak's 3,100 and of the 3,880 allocatedOutboundPorts.
    top = found["workloads"][0]
    assert (top["share_of_peak_percent"], top["share_of_allocation_percent"]) == (67.7, 54.1)
    assert found["query"] in prometheus["queries"]
    assert found["query"].startswith("topk(20, sum by (namespace, workload, kind, destination) ")


def test_azure_lb_sized_from_a_burst_names_the_scraped_peak_s_workloads_and_says_so(lab: Lab) -> None:
    args = ["azure-lb", "--pool", "20", "--from-prometheus", lab.url, "--selector", 'node="aks-apps-2"']
    code, out, err = _size(*args, "--by-workload", "--json")
    assert code == 0, err
    data = json.loads(out)
    found = data["measured_peak"]["prometheus"]["by_workload"]
    # Sized from aks-apps-2's own peak gauge (2,800: 3,504 ports); its rows are those of the scraped 2,500.
    assert data["allocated_outbound_ports"] == found["allocation"] == 3_504
    assert _rows_of(found) == [
        ("checkout", "payments-api", "Deployment", A, 1_500),
        ("batch", "export", "CronJob", A, 1_000),
    ]
    assert (found["peak"], found["unnamed_ports"]) == (2_500, 0)
    assert found["note"] == (
        "Sized from the agent's between-scrape peak, which names no workloads: these held the scraped peak."
    )


def test_azure_lb_text_output(lab: Lab) -> None:
    code, out, err = _size("azure-lb", "--pool", "20", "--from-prometheus", lab.url, "--by-workload")
    assert code == 0, err
    _golden("azure-lb-by-workload.txt", _normalised(out, lab))


def test_azure_natgw_names_every_flow_s_workloads_when_the_port_total_decides(lab: Lab) -> None:
    args = ["azure-natgw", "--from-prometheus", lab.url, "--step", STEP, "--by-workload", "--json"]
    code, out, err = _size(*args)
    assert code == 0, err
    data = json.loads(out)
    assert data["measured"]["binding"] == "ports"  # 8,800 + 25% of 64,512 ports; 7,000 of 50,000 to A
    found = data["measured"]["prometheus"]["by_workload"]
    assert _rows_of(found) == [
        ("checkout", "payments-api", "Deployment", A, 3_600),
        ("batch", "export", "CronJob", A, 1_700),
        ("web", "frontend", "StatefulSet", B, 1_200),
        ("checkout", "payments-api", "Deployment", B, 900),
        ("", "other", "", "other", 600),
        ("web", "frontend", "StatefulSet", C, 400),
        ("", "unknown", "unknown", C, 300),
        ("", "aks-apps-1", "node", A, 100),
    ]
    # The rows are the whole peak: every node's rows sum to its destinations', as the agent's do.
    assert (found["peak"], found["unnamed_ports"], found["allocation"]) == (8_800, 0, 64_512)
    assert _in_peak_phase(lab, found["time"])


def test_azure_natgw_text_output(lab: Lab) -> None:
    code, out, err = _size("azure-natgw", "--from-prometheus", lab.url, "--step", STEP, "--by-workload")
    assert code == 0, err
    _golden("azure-natgw-by-workload.txt", _normalised(out, lab))


def test_aws_natgw_names_each_az_s_workloads_at_its_peak(lab: Lab) -> None:
    args = ["aws-natgw", "--from-prometheus", lab.url, "--step", STEP, "--by-workload", "--json"]
    code, out, err = _size(*args)
    assert code == 0, err
    by_zone = json.loads(out)["prometheus"]["by_workload"]
    assert sorted(by_zone) == ["z1", "z2"]
    # z1: A summed over aks-apps-1 and aks-apps-2 (5,600); aks-apps-3's C is z2's alone.
    assert _rows_of(by_zone["z1"]) == [
        ("checkout", "payments-api", "Deployment", A, 3_600),
        ("batch", "export", "CronJob", A, 1_700),
        ("", "aks-apps-1", "node", A, 100),
    ]
    assert (by_zone["z1"]["peak"], by_zone["z1"]["unnamed_ports"], by_zone["z1"]["allocation"]) == (5_600, 200, 55_000)
    assert _rows_of(by_zone["z2"]) == [("web", "frontend", "StatefulSet", C, 400), ("", "unknown", "unknown", C, 300)]
    assert (by_zone["z2"]["peak"], by_zone["z2"]["unnamed_ports"]) == (700, 0)


def test_a_zone_matcher_in_the_selector_picks_targets_by_their_ports_in_use_zone(lab: Lab) -> None:
    """The by-workload series carry no zone label: a zone matcher applied to them as is would match nothing."""
    args = ["--from-prometheus", lab.url, "--step", STEP, "--selector", 'zone=~"z.*"', "--by-workload", "--json"]
    code, out, err = _size("aws-natgw", *args)
    assert code == 0, err
    by_zone = json.loads(out)["prometheus"]["by_workload"]
    assert [r[4] for r in _rows_of(by_zone["z1"])] == [3_600, 1_700, 100]
    assert [r[4] for r in _rows_of(by_zone["z2"])] == [400, 300]
    code, out, err = _size("azure-natgw", *args)
    assert code == 0, err
    # Only z2's targets: every flow there is aks-apps-3's.
    code, out, err = _size("azure-natgw", *args[:5], 'zone="z2"', *args[6:])
    assert code == 0, err
    found = json.loads(out)["measured"]["prometheus"]["by_workload"]
    assert _rows_of(found) == [("web", "frontend", "StatefulSet", C, 400), ("", "unknown", "unknown", C, 300)]
    assert 'wirespeed_agent_snat_ports_in_use{zone="z2"}' in found["query"]


def test_aws_natgw_text_output(lab: Lab) -> None:
    code, out, err = _size("aws-natgw", "--from-prometheus", lab.url, "--step", STEP, "--by-workload")
    assert code == 0, err
    _golden("aws-natgw-by-workload.txt", _normalised(out, lab))


def test_the_plot_draws_each_top_workload_over_the_window(lab: Lab, tmp_path: Path) -> None:
    from wirespeed.cli import measured
    from wirespeed.measure.workloads import at_peak, destination_scope, over_window
    from wirespeed.plot import draw_workload_panels

    png = tmp_path / "workloads.png"
    args = ["azure-natgw", "--from-prometheus", lab.url, "--step", STEP, "--window", "10m", "--by-workload"]
    code, out, err = _size(*args, "--plot", str(png))
    assert code == 0, err
    assert out.endswith(f"Plot written to {png}\n")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # What the plot draws: each top workload's series over the window reaches the ports it held at the peak.
    measurement = measured.source(lab.url, "10m", 30, None, STEP)
    busiest = measurement.destination_peaks()[0]
    found = at_peak(measurement, busiest, destination_scope(busiest))
    lines = over_window(measurement, found)
    assert [(t.row.workload, max(v for _, v in t.points)) for t in lines] == [
        ("payments-api", 3_600),
        ("export", 1_700),
        ("aks-apps-1", 100),
    ]
    # Before the peak phase payments-api held 100 (phase 0), after it 200 (phase 2): the slices show both.
    values = {v for _, v in lines[0].points}
    assert {100, 3_600, 200} <= values
    from wirespeed.measure.workloads import Attribution

    fig = draw_workload_panels([Attribution("to A", found, 50_000, "1 IP(s) x 50,000", lines)])
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels[:3] == [
        f"checkout/payments-api (Deployment) to {A}",
        f"batch/export (CronJob) to {A}",
        f"aks-apps-1 (node) to {A}",
    ]


def test_azure_lb_plot_gains_the_workloads_panel(lab: Lab, tmp_path: Path) -> None:
    png = tmp_path / "lb.png"
    args = ["azure-lb", "--pool", "20", "--from-prometheus", lab.url, "--window", "10m", "--by-workload"]
    code, out, err = _size(*args, "--plot", str(png), "--json")
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    queries = json.loads(out)["measured_peak"]["prometheus"]["queries"]
    # One series per top workload on the peak's node, read raw (no subquery step: no scrape is skipped).
    raw = [q for q in queries if q.startswith("max_over_time(wirespeed_agent_snat_ports_in_use_by_workload{")]
    assert len(raw) == 3
    assert all(q.endswith("[2s])[10m:2s]") for q in raw)


def test_azure_lb_plot_with_a_zone_matcher_reads_the_joined_rows_through_a_subquery(lab: Lab, tmp_path: Path) -> None:
    png = tmp_path / "lb.png"
    args = ["azure-lb", "--pool", "20", "--from-prometheus", lab.url, "--window", "10m", "--selector", 'zone="z1"']
    code, out, err = _size(*args, "--by-workload", "--plot", str(png), "--json")
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    prometheus = json.loads(out)["measured_peak"]["prometheus"]
    assert [r[4] for r in _rows_of(prometheus["by_workload"])] == [2_100, 700, 100]
    # A join is an expression, which a range cannot follow: the plot's reads are subqueries at the step.
    plotted = [q for q in prometheus["queries"] if q.startswith("max_over_time(sum by (namespace")]
    assert len(plotted) == 3
    assert all(q.endswith("[30s:30s])[10m:30s]") for q in plotted)


def test_plot_of_a_nat_gateway_needs_by_workload(tmp_path: Path) -> None:
    code, out, err = _size("azure-natgw", "--from-prometheus", "http://127.0.0.1:9", "--plot", str(tmp_path / "p.png"))
    assert (code, out) == (2, "")
    assert err == (
        f"error: --plot {tmp_path / 'p.png'}: only with --from-prometheus URL --by-workload (it draws the top "
        "workloads over the window); add them, or leave --plot out\n"
    )


def test_by_workload_needs_from_prometheus() -> None:
    code, _, err = _size("azure-natgw", "--flows", "1000", "--by-workload")
    assert code == 2
    assert err.startswith("error: --by-workload: only with --from-prometheus"), err


# ------------------------------------------------------------------ a server that answers the peaks, then this
class _Scripted(http.server.BaseHTTPRequestHandler):
    """A Prometheus stand-in: the peak queries get one series each; the by-workload query gets ``workloads``."""

    workloads: bytes = b""
    window_has_series = False

    def do_POST(self) -> None:
        import urllib.parse

        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode())
        query = form["query"][0]
        labels = {"destination": A, "node": "n1", "instance": "10.0.0.1:9808", "job": "agent"}
        vector = {
            "status": "success",
            "data": {"resultType": "vector", "result": [{"metric": labels, "value": [1_790_000_000, "3100"]}]},
        }
        if "by_workload" in query and query.startswith("topk(20"):
            body = self.workloads
        elif "by_workload" in query:  # the count of any by-workload series over the window
            count = [{"metric": {}, "value": [1_790_000_000, "3"]}] if self.window_has_series else []
            body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": count}}).encode()
        elif query.startswith("wirespeed_agent_snat_ports_"):  # a peak's raw samples, for its time
            body = json.dumps(
                {
                    "status": "success",
                    "data": {
                        "resultType": "matrix",
                        "result": [{"metric": labels, "values": [[1_790_000_000, "3100"]]}],
                    },
                }
            ).encode()
        else:
            body = json.dumps(vector).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@contextlib.contextmanager
def _scripted(workloads: bytes, window_has_series: bool = False) -> Iterator[str]:
    handler = type("H", (_Scripted,), {"workloads": workloads, "window_has_series": window_has_series})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _vector(*rows: tuple[dict[str, str], str]) -> bytes:
    result = [{"metric": labels, "value": [1_790_000_000, value]} for labels, value in rows]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()


def test_no_by_workload_series_is_an_error_naming_the_agent_flag_and_version() -> None:
    with _scripted(_vector()) as url:
        code, out, err = _size("azure-lb", "--pool", "5", "--from-prometheus", url, "--by-workload")
    assert (code, out) == (2, "")
    assert err == (
        f"error: --by-workload: --from-prometheus {url} has no wirespeed_agent_snat_ports_in_use_by_workload series "
        "in the last 7d: run the wirespeed-agent of wirespeed 0.1.0 or later with --snat-by-workload on (its "
        "default; it needs the agent's Kubernetes report and its list/watch grant on pods, docs/node-tuning.md), or "
        "leave --by-workload out\n"
    )


def test_series_elsewhere_in_the_window_but_none_at_the_peak_is_said_not_refused() -> None:
    """The count over the window finds series (attribution was turned on after the peak): the plan stands."""
    with _scripted(_vector(), window_has_series=True) as url:
        code, out, err = _size("azure-lb", "--pool", "5", "--from-prometheus", url, "--by-workload")
    assert code == 0, err
    assert "  none: the agents exported no by-workload series at that moment (attribution was off then" in out
    assert "pulumi config set wirespeed:measuredPeakPortsPerNode 3100" in out


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param(_vector(({"workload": "w"}, "1.5")), "gave 1.5, not a whole number of ports", id="fractional"),
        pytest.param(_vector(({"workload": "w"}, "-3")), "gave -3.0, not a whole number of ports", id="negative"),
        pytest.param(
            b'{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {"a": 1}}]}}',
            "a series in the answer is malformed",
            id="malformed",
        ),
        pytest.param(b"<html>", "the answer is not JSON", id="not-json"),
    ],
)
def test_a_wrong_by_workload_answer_is_one_error_line(answer: bytes, message: str) -> None:
    with _scripted(answer) as url:
        code, out, err = _size("azure-lb", "--pool", "5", "--from-prometheus", url, "--by-workload")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: --from-prometheus {url}"), err
    assert message in err, err
    assert err.count("\n") == 1


def test_labels_are_printed_escaped_and_capped() -> None:
    hostile = {"namespace": "ns", "workload": "evil\x1b[2J" + "x" * 400, "kind": "Deployment", "destination": A}
    with _scripted(_vector((hostile, "3100"))) as url:
        code, out, err = _size("azure-lb", "--pool", "5", "--from-prometheus", url, "--by-workload", "--json")
    assert code == 0, err
    workload = json.loads(out)["measured_peak"]["prometheus"]["by_workload"]["workloads"][0]["workload"]
    assert "\x1b" not in workload
    assert workload.startswith("evil\\x1b[2J")
    assert len(workload) == 253 + 3
