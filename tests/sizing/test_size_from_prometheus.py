"""`wirespeed size azure-lb|azure-natgw --from-prometheus` end to end through the CLI, against a real Prometheus server
(Debian's prometheus, started on loopback by tests/prometheus_lab.py) scraping stand-ins for three nodes' agents.

The lab's fleet (README, "Size from what your fleet does"), each phase held for at least five scrapes:

| phase | aks-apps-1 (zone z1) | aks-apps-2 (z1) | aks-apps-3 (z2) |
|---|---|---|---|
| 0 quiet | A 100, other 20 | A 80 | - |
| 1 peak | A 3,100, B 900, other 400 (peak gauge 3,100) | A 2,500, B 1,200 (peak gauge 2,800) | C 700 |
| 2 after | A 200 | A 150 | C 100 |

with A = 52.1.2.3:443/tcp, B = 52.9.9.9:443/tcp, C = 52.7.7.7:443/tcp. Hostile or broken servers (refused
connections, HTML, malformed or oversized answers, silence) are small loopback servers that answer exactly that.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clirun import wirespeed
from prometheus_lab import Lab, NodeState, free_port, prometheus_lab

A, B, C = "52.1.2.3:443/tcp", "52.9.9.9:443/tcp", "52.7.7.7:443/tcp"
NODES = {"aks-apps-1": "z1", "aks-apps-2": "z1", "aks-apps-3": "z2"}
STEP = "1s"  # the lab scrapes every 500 ms and holds each phase for 5 scrapes: a 1 s step sees every phase


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with prometheus_lab(tmp_path_factory.mktemp("prometheus"), NODES) as running:
        running.phase(
            {
                "aks-apps-1": NodeState({A: 100, "other": 20}, peak=100, allocated=4096),
                "aks-apps-2": NodeState({A: 80}, peak=80, allocated=4096),
            }
        )
        running.phase(
            {
                "aks-apps-1": NodeState({A: 3_100, B: 900, "other": 400}, peak=3_100, allocated=4096),
                "aks-apps-2": NodeState({A: 2_500, B: 1_200}, peak=2_800, allocated=4096),
                "aks-apps-3": NodeState({C: 700}, peak=700, allocated=4096),
            }
        )
        running.phase(
            {
                "aks-apps-1": NodeState({A: 200}, peak=3_100, allocated=4096),
                "aks-apps-2": NodeState({A: 150}, peak=2_800, allocated=4096),
                "aks-apps-3": NodeState({C: 100}, peak=700, allocated=4096),
            }
        )
        yield running


def _size(*args: str) -> tuple[int, str, str]:
    out = wirespeed("size", *args)
    return out.returncode, out.stdout, out.stderr


def _iso_seconds(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _in_peak_phase(lab: Lab, stamp: float) -> bool:
    """Whether ``stamp`` falls in phase 1 (a scrape's timestamp is its start, a step's time its own)."""
    return lab.phase_times[1] - 0.1 <= stamp <= lab.phase_times[2] + 1


def test_azure_lb_sizes_ports_from_the_busiest_node_s_busiest_destination(lab: Lab) -> None:
    code, out, err = _size("azure-lb", "--pool", "20", "--from-prometheus", lab.url, "--json")
    assert code == 0, err
    data = json.loads(out)
    # 3,100 + 25% = 3,875, rounded up to a multiple of 8.
    assert data["allocated_outbound_ports"] == 3_880
    measured = data["measured_peak"]
    assert (measured["ports_in_use"], measured["headroom_percent"]) == (3_100, 25)
    peak = measured["prometheus"]["peak"]
    assert (peak["value"], peak["node"], peak["destination"], peak["zone"]) == (3_100, "aks-apps-1", A, "z1")
    assert _in_peak_phase(lab, _iso_seconds(peak["time"]))
    # The agents' between-scrape gauge peaked no higher (3,100 on aks-apps-1): the scraped peak stands.
    assert measured["prometheus"]["between_scrapes"]["value"] == 3_100
    assert measured["prometheus"]["queries"][0] == (
        'topk(1, max_over_time(wirespeed_agent_snat_ports_in_use{destination!="other"}[7d]))'
    )
    assert measured["source"].startswith(f"prometheus {lab.url}, max of wirespeed_agent_snat_ports_in_use over 7d to ")
    assert measured["source"].endswith(f": 3,100 to {A} on aks-apps-1 in z1 at {peak['time']}")


def test_azure_lb_prints_the_query_the_peak_the_plan_and_the_keys_to_pin(lab: Lab) -> None:
    code, out, err = _size("azure-lb", "--pool", "20", "--from-prometheus", lab.url, "--window", "1h")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"Measured by prometheus {lab.url} over 1h to ")
    assert '  query: topk(1, max_over_time(wirespeed_agent_snat_ports_in_use{destination!="other"}[1h]))' in lines
    peak = next(line for line in lines if line.startswith("Peak: "))
    assert peak.startswith(f"Peak: 3,100 ports in use to {A} on node aks-apps-1 in zone z1 at ")
    assert "Ports per node: 3,880 (from a measured peak of 3,100 (prometheus " in out
    assert "  pulumi config set wirespeed:measuredPeakPortsPerNode 3100" in lines
    source = next(line for line in lines if "wirespeed:measuredPeakSource" in line)
    assert source.startswith(f"  pulumi config set wirespeed:measuredPeakSource 'prometheus {lab.url}, max of ")


def test_a_burst_between_scrapes_outweighs_the_scraped_peak(lab: Lab) -> None:
    code, out, err = _size(
        "azure-lb", "--pool", "20", "--from-prometheus", lab.url, "--selector", 'node="aks-apps-2"', "--json"
    )
    assert code == 0, err
    measured = json.loads(out)["measured_peak"]
    assert measured["prometheus"]["peak"]["value"] == 2_500
    assert measured["prometheus"]["between_scrapes"]["value"] == 2_800
    # Sized from the agent's own peak gauge: 2,800 + 25% = 3,500, rounded up to 3,504.
    assert measured["ports_in_use"] == 2_800
    assert json.loads(out)["allocated_outbound_ports"] == 3_504
    assert "max of wirespeed_agent_snat_ports_peak over 7d" in measured["source"]


def test_headroom_as_a_percent_or_a_multiplier(lab: Lab) -> None:
    for headroom in ("50%", "1.5"):
        args = ["--pool", "5", "--from-prometheus", lab.url, "--headroom", headroom, "--json"]
        code, out, err = _size("azure-lb", *args)
        assert code == 0, err
        assert json.loads(out)["allocated_outbound_ports"] == 4_656  # 3,100 x 1.5 = 4,650 -> 4,656


def test_azure_natgw_sums_every_node_behind_the_gateway(lab: Lab) -> None:
    code, out, err = _size("azure-natgw", "--from-prometheus", lab.url, "--step", STEP, "--json")
    assert code == 0, err
    data = json.loads(out)
    measured = data["measured"]
    # Every flow at phase 1: 3,100 + 900 + 400 + 2,500 + 1,200 + 700; the busiest destination A: 3,100 + 2,500.
    assert (measured["flows"], measured["busiest_destination"], measured["destination_flows"]) == (8_800, A, 5_600)
    assert (data["ips"], measured["binding"], data["demand"], data["per_ip"]) == (1, "ports", 11_000, 64_512)
    prometheus = measured["prometheus"]
    assert _in_peak_phase(lab, _iso_seconds(prometheus["total"]["time"]))
    assert _in_peak_phase(lab, _iso_seconds(prometheus["busiest_destination"]["time"]))
    assert prometheus["queries"][0] == "max_over_time(sum (wirespeed_agent_snat_ports_in_use)[7d:1s])"


def test_azure_natgw_prose_names_both_limits_and_what_to_pin(lab: Lab) -> None:
    code, out, err = _size("azure-natgw", "--from-prometheus", lab.url, "--step", STEP)
    assert code == 0, err
    assert "Peak to one destination: 5,600 flows to 52.1.2.3:443/tcp at " in out
    assert "All flows: a measured peak of 8,800 + 25% headroom = 11,000 / 64,512 ports per IP -> 1 IP(s)." in out
    assert "  pulumi config set wirespeed:natGatewayIpCount 1" in out


def test_azure_natgw_standard_v2_from_the_measured_peak_sizes_the_same_and_names_its_sku(lab: Lab) -> None:
    code, out, err = _size("azure-natgw", "--from-prometheus", lab.url, "--step", STEP, "--sku", "StandardV2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["ips"], data["demand"], data["per_ip"]) == (1, 11_000, 64_512)  # the same ports per IP as Standard
    assert (data["sku"]["name"], data["sku"]["zone_redundant"], data["sku"]["public_ip_sku"]) == (
        "StandardV2", True, "StandardV2")  # fmt: skip
    code, out, err = _size("azure-natgw", "--from-prometheus", lab.url, "--step", STEP, "--sku", "StandardV2")
    assert code == 0, err
    assert "StandardV2 NAT gateway: zone-redundant, up to 100 Gbps" in out
    assert "wirespeed:natGatewaySku" not in out  # the root program creates Standard only: nothing to pin


def test_a_selector_matching_nothing_is_an_error_naming_the_window(lab: Lab) -> None:
    code, out, err = _size("azure-lb", "--pool", "5", "--from-prometheus", lab.url, "--selector", 'cluster="none"')
    assert (code, out) == (2, "")
    assert err.startswith(
        f'error: --from-prometheus {lab.url}: no wirespeed_agent_snat_ports_in_use series matching cluster="none" in '
        "the last 7d: does this Prometheus scrape the wirespeed agent"
    )
    assert err.count("\n") == 1


def test_by_workload_from_agents_without_attribution_names_the_agent_flag(lab: Lab) -> None:
    """This lab's stand-ins serve no wirespeed_agent_snat_ports_in_use_by_workload (agents without attribution)."""
    code, out, err = _size("azure-natgw", "--from-prometheus", lab.url, "--step", STEP, "--by-workload")
    assert (code, out) == (2, "")
    assert err.startswith(
        f"error: --by-workload: --from-prometheus {lab.url} has no wirespeed_agent_snat_ports_in_use_by_workload "
        "series in the last 7d: run the wirespeed-agent of wirespeed 0.1.0 or later with --snat-by-workload on"
    ), err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--window", "7 days"], "error: --window: '7 days' is not allowed: a Prometheus duration from 1m to 366d"),
        (["--window", "10s"], "error: --window: '10s' is not allowed: a Prometheus duration from 1m to 366d"),
        (["--timeout", "0"], "error: --timeout: 0 is not allowed: seconds from 1 to 600"),
        (["--selector", "cluster=prod"], "error: --selector: 'cluster=prod' is not allowed: PromQL label matchers"),
        (["--headroom", "2000%"], "error: --headroom: '2000%' is not allowed: a percent from 0% to 900%"),
        (["--ports", "1024"], "error: --ports 1024: not allowed with --from-prometheus"),
    ],
)
def test_bad_measurement_flags_name_the_flag(args: list[str], message: str) -> None:
    code, out, err = _size("azure-lb", "--pool", "5", "--from-prometheus", "http://127.0.0.1:9", *args)
    assert (code, out) == (2, "")
    assert err.startswith(message), err
    assert err.count("\n") == 1


class _Answer(http.server.BaseHTTPRequestHandler):
    """A server answering every request with what the test configured (status, type, body, delay)."""

    status = 200
    content_type = "application/json"
    body = b""
    delay = 0.0
    headers_extra: dict[str, str] = {}  # noqa: RUF012  # set per test on a subclass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(self.delay)
        self.send_response(self.status)
        if self.content_type:
            self.send_header("Content-Type", self.content_type)
        for key, value in self.headers_extra.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def answering() -> Iterator[Callable[..., str]]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(**answer: object) -> str:
        handler = type("Handler", (_Answer,), answer)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


BIG = json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}, "pad": "x" * (33 << 20)})


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param(
            {"content_type": "text/html", "body": b"<html><body>Sign in</body></html>"},
            "answered text/html, not the Prometheus HTTP API (is it the server's base URL, the one serving "
            "/api/v1/query?): '<html><body>Sign in</body></html>'",
            id="html-login-page",
        ),
        pytest.param(
            {"body": b'{"status": "success", "data": '},
            "the answer is not JSON (Expecting value: line 1 column 31 (char 30))",
            id="truncated-json",
        ),
        pytest.param({"body": b'{"hello": "world"}'}, "the answer is not a Prometheus API response", id="other-json"),
        pytest.param(
            {"body": b'{"status": "success", "data": {"resultType": "vector", "result": [{"metric": 1}]}}'},
            "a series in the answer is malformed",
            id="malformed-series",
        ),
        pytest.param(
            {"status": 400, "body": b'{"status": "error", "errorType": "bad_data", "error": "parse error"}'},
            "Prometheus refused the query: bad_data: parse error",
            id="refused-query",
        ),
        pytest.param(
            {"status": 401, "body": b'{"status": "error", "error": "unauthorized"}'},
            "answered HTTP 401: the server wants credentials (--bearer-token-file",
            id="unauthorized",
        ),
        pytest.param(
            {"status": 302, "content_type": "", "headers_extra": {"Location": "/login"}},
            "answered HTTP 302, a redirect to /login: give the server's base URL itself",
            id="redirect",
        ),
        pytest.param(
            {"body": BIG.encode()}, "the answer is larger than 32 MiB; narrow --selector or --window", id="big"
        ),
        pytest.param(
            {"body": b'{"status": "success", "data": {"resultType": "vector", "result": []}}', "delay": 5},
            "no answer within 1 s (--timeout)",
            id="silent",
        ),
    ],
)
def test_a_wrong_answer_is_one_error_line_naming_the_url(
    answering: Callable[..., str], answer: dict[str, object], message: str
) -> None:
    url = answering(**answer)
    started = time.monotonic()
    code, out, err = _size("azure-lb", "--pool", "5", "--from-prometheus", url, "--timeout", "1")
    assert time.monotonic() - started < 20  # the deadline holds (generous: process start-up on a loaded machine)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: --from-prometheus {url}"), err
    assert message in err, err
    assert err.count("\n") == 1


def test_an_unreachable_server_is_one_error_line() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, out, err = _size("azure-natgw", "--from-prometheus", url)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: --from-prometheus {url}: cannot reach the server: "), err
    assert "Connection refused" in err


def test_credentials_in_the_url_are_sent_but_never_printed(answering: Callable[..., str]) -> None:
    url = answering(content_type="text/html", body=b"<html/>")
    with_password = url.replace("http://", "http://alice:s3cret@")
    code, _, err = _size("azure-lb", "--pool", "5", "--from-prometheus", with_password)
    assert code == 2
    assert "s3cret" not in err
    assert "alice" not in err
    assert err.startswith(f"error: --from-prometheus {url}: answered text/html")


def test_a_bearer_token_file_must_be_a_small_regular_file(tmp_path: Path) -> None:
    code, _, err = _size("azure-lb", "--pool", "5", "--from-prometheus", "http://127.0.0.1:9", "--bearer-token-file",
                         str(tmp_path))  # fmt: skip
    assert code == 2
    assert err == f"error: --bearer-token-file {tmp_path}: not a regular file\n"
    big = tmp_path / "token"
    big.write_text("t" * 20_000)
    code, _, err = _size("azure-lb", "--pool", "5", "--from-prometheus", "http://127.0.0.1:9", "--bearer-token-file",
                         str(big))  # fmt: skip
    assert err == (
        f"error: --bearer-token-file {big}: 20,000 bytes is not allowed: a token file of at most 16,384 bytes\n"
    )


def test_flows_and_from_prometheus_are_one_or_the_other() -> None:
    code, _, err = _size("azure-natgw", "--flows", "100", "--from-prometheus", "http://127.0.0.1:9")
    assert code == 2
    assert err == (
        "error: --flows: give --flows N (the subnet's peak concurrent flows) or --from-prometheus URL, one of the two\n"
    )
