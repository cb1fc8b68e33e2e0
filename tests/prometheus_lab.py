"""A real Prometheus server (Debian's ``prometheus``, /usr/bin/prometheus) scraping stand-ins for the node agent on
loopback, for `wirespeed size ... --from-prometheus` end to end.

``StandInAgent`` is a stand-in for the wirespeed agent's ``/metrics`` endpoint, not the agent: a small HTTP server
that serves the agent's SNAT series (the names and labels of the issue 19 contract, wirespeed.names) in Prometheus'
text exposition format, with values the test sets phase by phase, and counts the scrapes it answers so the test
knows when Prometheus has seen a phase. The numbers are the lab's (docs/sizing.md, "Size from what your fleet does").

Prometheus runs with its own temporary TSDB, on 127.0.0.1 with a free port, scraping every 500 ms so a phase is a
few seconds long, and is stopped (SIGTERM, then SIGKILL) when the context exits.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from wirespeed.names import (
    SNAT_ALLOCATED_PORTS,
    SNAT_CONNTRACK_ENTRIES,
    SNAT_PORTS_IN_USE,
    SNAT_PORTS_IN_USE_BY_WORKLOAD,
    SNAT_PORTS_IN_USE_MAX,
    SNAT_PORTS_PEAK,
)

PROMETHEUS = shutil.which("prometheus")
SCRAPE_INTERVAL_S = 0.5


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class NodeState:
    """What one stand-in serves: ports in use per destination, its peak gauge and its capacity, and with attribution
    on the ports per (namespace, workload, kind, destination), the agent's ``("", "other", "", "other")`` row
    included (None: an agent without attribution, which exports no such series)."""

    in_use: dict[str, int] = field(default_factory=dict)
    peak: int | None = None
    allocated: int | None = None
    kind: str = "azure-load-balancer"
    workloads: dict[tuple[str, str, str, str], int] | None = None


class StandInAgent:
    """A stand-in for one node's wirespeed agent ``/metrics`` (not the agent itself)."""

    def __init__(self, node: str, zone: str) -> None:
        self.node, self.zone = node, zone
        self.state = NodeState()
        self.scrapes = 0
        self.scrape_times: list[float] = []
        self._lock = threading.Lock()
        agent = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = agent.exposition().encode()
                with agent._lock:
                    agent.scrapes += 1
                    agent.scrape_times.append(time.time())
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def set(self, state: NodeState) -> None:
        with self._lock:
            self.state = state
            self.phase_start = self.scrapes

    def scrapes_in_phase(self) -> int:
        with self._lock:
            return self.scrapes - self.phase_start

    def exposition(self) -> str:
        """The agent's SNAT series as the text format (prometheus.io/docs/instrumenting/exposition_formats/)."""
        with self._lock:
            state = self.state
        zone = f'zone="{self.zone}"'
        lines = [f"# HELP {SNAT_PORTS_IN_USE} Ports in use per destination.", f"# TYPE {SNAT_PORTS_IN_USE} gauge"]
        lines += [f'{SNAT_PORTS_IN_USE}{{destination="{d}",{zone}}} {v}' for d, v in sorted(state.in_use.items())]
        top = max((v for d, v in state.in_use.items() if d != "other"), default=0)
        lines += [f"# TYPE {SNAT_PORTS_IN_USE_MAX} gauge", f"{SNAT_PORTS_IN_USE_MAX} {top}"]
        if state.peak is not None:
            lines += [f"# TYPE {SNAT_PORTS_PEAK} gauge", f"{SNAT_PORTS_PEAK}{{{zone}}} {state.peak}"]
        if state.allocated is not None:
            lines += [
                f"# TYPE {SNAT_ALLOCATED_PORTS} gauge",
                f'{SNAT_ALLOCATED_PORTS}{{kind="{state.kind}",{zone}}} {state.allocated}',
            ]
        lines += [f"# TYPE {SNAT_CONNTRACK_ENTRIES} gauge", f"{SNAT_CONNTRACK_ENTRIES} {sum(state.in_use.values())}"]
        if state.workloads is not None:
            lines.append(f"# TYPE {SNAT_PORTS_IN_USE_BY_WORKLOAD} gauge")
            lines += [
                f'{SNAT_PORTS_IN_USE_BY_WORKLOAD}{{namespace="{ns}",workload="{name}",kind="{kind}",'
                f'destination="{d}"}} {v}'
                for (ns, name, kind, d), v in sorted(state.workloads.items())
            ]
        return "\n".join(lines) + "\n"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Lab:
    url: str
    agents: list[StandInAgent]
    phase_times: list[float] = field(default_factory=list)

    def phase(self, states: Mapping[str, NodeState], scrapes: int = 5, timeout_s: float = 60) -> None:
        """Serve ``states`` (node -> state) until Prometheus has scraped every stand-in ``scrapes`` times."""
        self.phase_times.append(time.time())
        for agent in self.agents:
            agent.set(states.get(agent.node, NodeState()))
        deadline = time.monotonic() + timeout_s
        while any(a.scrapes_in_phase() < scrapes for a in self.agents):
            if time.monotonic() > deadline:
                raise TimeoutError(f"Prometheus did not scrape every stand-in {scrapes} times in {timeout_s} s")
            time.sleep(0.05)

    def ingested(self, query: str) -> list[dict[str, object]]:
        """An instant query straight to the API (to wait until the last scrapes are queryable)."""
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": query})
        with urllib.request.urlopen(url, timeout=10) as answer:  # loopback URL of this lab
            data = json.load(answer)
        result: list[dict[str, object]] = data["data"]["result"]
        return result


@contextlib.contextmanager
def prometheus_lab(tmp_path: Path, nodes: Mapping[str, str]) -> Iterator[Lab]:
    """Stand-ins for the agents of ``nodes`` (name -> zone) and a Prometheus scraping them; yields the lab."""
    agents = [StandInAgent(node, zone) for node, zone in nodes.items()]
    try:
        targets = [(a.port, {"node": a.node}) for a in agents]
        with running_prometheus(tmp_path, targets, SCRAPE_INTERVAL_S) as url:
            yield Lab(url, agents)
    finally:
        for agent in agents:
            agent.close()


@contextlib.contextmanager
def running_prometheus(
    tmp_path: Path, targets: list[tuple[int, dict[str, str]]], scrape_interval_s: float, host: str = "127.0.0.1"
) -> Iterator[str]:
    """A Prometheus scraping each (port on ``host``, target labels) every ``scrape_interval_s``; yields its URL (on
    loopback whatever ``host`` is)."""
    assert PROMETHEUS, "prometheus missing: run scripts/install-system-deps.sh (Debian package prometheus)"
    port = free_port()
    interval_ms = int(scrape_interval_s * 1000)
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "400ms"},
        "scrape_configs": [
            {
                "job_name": "wirespeed-system/wirespeed-agent",
                "scrape_interval": f"{interval_ms}ms",
                "scrape_timeout": f"{min(400, interval_ms)}ms",
                "static_configs": [{"targets": [f"{host}:{p}"], "labels": labels} for p, labels in targets],
            }
        ],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = (tmp_path / "prometheus.log").open("w")
    process = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, process, tmp_path / "prometheus.log")
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)
        log.close()


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"prometheus exited {process.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as answer:  # loopback
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"prometheus not ready in {timeout_s} s: {log.read_text()[-2000:]}")
