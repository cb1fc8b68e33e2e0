"""A node that masquerades pods to the internet, in network namespaces, for the SNAT accounting tests.

Three namespaces of the test's own, joined by veth pairs:

    pod   10.244.1.10 --veth-- 10.244.1.1   node   10.240.0.4 --veth-- 10.240.0.1   dst
                                (nftables masquerade of 10.244.0.0/16                 192.0.2.10   (A, TEST-NET-1)
                                 leaving through its "eth0", like a CNI)               198.51.100.20 (B, TEST-NET-2)

``dst`` plays the internet and the VNet: two "external" servers A and B (RFC 5737 documentation addresses, which
no default exclusion covers) with TCP on 443 and UDP on 53 (and 5353 on A), and an "internal" server on its own
10.240.0.1. The agent runs in ``node``, where the masquerade happens and where conntrack sees every flow
(conntrack is per network namespace). Every address, sysctl and rule lives inside these namespaces and goes with them.

Processes in the namespaces (servers, a client that holds connections open, the agent, Prometheus) are started
with ``ip netns exec``; HTTP inside ``node`` (the agent's /metrics, Prometheus' API) is read by a Python child in
that namespace. :class:`NetnsRelay` lets a process in ``node`` reach a TCP port on the host's loopback (the API
server of tests/apiserver.py) at the same address, so TLS names still match.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

import pytest

from conftest import require

ROOT = Path(__file__).resolve().parent.parent
AGENT = ROOT / "agent" / "bin" / "wirespeed-agent"
PROMETHEUS = Path("/usr/bin/prometheus")

POD = "10.244.1.10"
A = "192.0.2.10"
B = "198.51.100.20"
INTERNAL = "10.240.0.1"
NODE_IP = "10.240.0.4"
T = TypeVar("T")

# Servers in dst: TCP that closes when the client does (so closed flows go through TIME_WAIT), UDP that answers.
SERVERS = (
    f"A_, B_, INTERNAL_ = {A!r}, {B!r}, {INTERNAL!r}\n"
    + r"""
import socket, threading, sys
def tcp(addr):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(addr); s.listen(4096)
    while True:
        c, _ = s.accept()
        threading.Thread(target=lambda c=c: (c.recv(1), c.close()), daemon=True).start()
def udp(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(addr)
    while True:
        data, peer = s.recvfrom(64); s.sendto(data, peer)
for addr in [(A_, 443), (B_, 443), (INTERNAL_, 8443)]:
    threading.Thread(target=tcp, args=(addr,), daemon=True).start()
for addr in [(A_, 53), (A_, 5353), (B_, 53)]:
    threading.Thread(target=udp, args=(addr,), daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
"""
)

# A client that holds flows open and takes commands on stdin, one per line, answering "ok <n>" with the number of
# flows it holds to that address and port:
#   tcp HOST PORT N     open N connections           udp HOST PORT N   open N UDP flows (one socket each, answered)
#   close HOST PORT K   close K of them (FIN)        burst HOST PORT N  N UDP flows, sockets closed at once
# A burst binds each socket to a source port of its own (from 20000 up, below the ephemeral range): left to the
# kernel, a closed socket's random port is drawn again within a few thousand flows and the datagram joins the
# earlier conntrack entry instead of making a new one (3,000 draws from 28,232 ports repeat ~150 times).
CLIENT = r"""
import socket, sys
held, next_port = {}, 20000
for line in sys.stdin:
    verb, host, port, n = line.split(); port, n = int(port), int(n); key = (host, port)
    socks = held.setdefault(key, [])
    if verb == "tcp":
        for _ in range(n):
            socks.append(socket.create_connection(key, timeout=10))
    elif verb in ("udp", "burst"):
        for _ in range(n):
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(10)
            if verb == "burst":
                u.bind(("", next_port)); next_port += 1
            u.sendto(b"x", key)
            if verb == "udp":
                u.recv(8); socks.append(u)
            else:
                u.close()
    elif verb == "close":
        for s in socks[:n]:
            s.close()
        del socks[:n]
    print("ok", len(socks), flush=True)
"""

# GET a URL from inside a namespace: prints the status and body as JSON.
HTTP_GET = r"""
import json, sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
        print(json.dumps([r.status, r.read().decode()]))
except urllib.error.HTTPError as e:
    print(json.dumps([e.code, e.read().decode()]))
except OSError as e:
    print(json.dumps([0, str(e)]))
"""


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 60.0, every: float = 0.2) -> T:
    """Poll until ``probe`` returns something truthy; the failure says what never happened and the last value."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout:.0f} s (last: {last!r})")


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@dataclass
class Process:
    proc: subprocess.Popen[str]
    log: Path | None = None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def tail(self) -> str:
        return self.log.read_text()[-3000:] if self.log and self.log.exists() else ""


@dataclass
class Client:
    """The pod's (or the node's) client: flows it holds open until told to close them."""

    process: Process

    def do(self, verb: str, host: str, port: int, n: int) -> int:
        stdin, stdout = self.process.proc.stdin, self.process.proc.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(f"{verb} {host} {port} {n}\n")
        stdin.flush()
        line = stdout.readline()
        assert line.startswith("ok "), f"client: {line!r} {self.process.tail()}"
        return int(line.split()[1])


@dataclass
class Lab:
    prefix: str
    tmp: Path
    processes: list[Process] = field(default_factory=list)
    more_pods: list[str] = field(default_factory=list)  # namespaces add_pod made, removed with the lab

    @property
    def pod(self) -> str:
        return f"{self.prefix}-pod"

    @property
    def node(self) -> str:
        return f"{self.prefix}-node"

    @property
    def dst(self) -> str:
        return f"{self.prefix}-dst"

    def add_pod(self, subnet: int) -> tuple[str, str]:
        """Another pod namespace on the node: 10.244.<subnet>.10 behind the node's 10.244.<subnet>.1 (its own
        veth, as a CNI gives each pod), masqueraded like the first. Returns (namespace, pod address)."""
        assert 2 <= subnet <= 254, subnet  # 10.244.1.0/24 is the lab's first pod
        ns, address = f"{self.prefix}-pod{subnet}", f"10.244.{subnet}.10"
        ip("netns", "add", ns)
        self.more_pods.append(ns)
        ip("-n", ns, "link", "set", "lo", "up")
        ip("link", "add", f"{self.prefix}q", "netns", ns, "type", "veth", "peer", "name", f"pod{subnet}", "netns",
           self.node)  # fmt: skip
        ip("-n", ns, "link", "set", f"{self.prefix}q", "name", "eth0")
        for where, dev, addr in [(ns, "eth0", f"{address}/24"), (self.node, f"pod{subnet}", f"10.244.{subnet}.1/24")]:
            ip("-n", where, "addr", "add", addr, "dev", dev)
            ip("-n", where, "link", "set", dev, "up")
        ip("-n", ns, "route", "add", "default", "via", f"10.244.{subnet}.1")
        return ns, address

    def exec(self, ns: str, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ip", "netns", "exec", ns, *args], capture_output=True, text=True, **kwargs)

    def sysctl(self, ns: str, name: str, value: int) -> None:
        self.exec(ns, "sysctl", "-qw", f"{name}={value}", check=True, timeout=30)

    def spawn(self, ns: str, args: list[str], name: str, stdin: int | IO[str] | None = subprocess.PIPE) -> Process:
        log = self.tmp / f"{name}.log"
        proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, *args],
            stdin=stdin, stdout=subprocess.PIPE, stderr=log.open("w"), text=True,
        )  # fmt: skip
        p = Process(proc, log)
        self.processes.append(p)
        return p

    def client(self, ns: str, name: str) -> Client:
        return Client(self.spawn(ns, [sys.executable, "-u", "-c", CLIENT], name))

    def http_get(self, ns: str, url: str) -> tuple[int, str]:
        out = self.exec(ns, sys.executable, "-c", HTTP_GET, url, check=True, timeout=60)
        status, body = json.loads(out.stdout)
        return int(status), str(body)

    def agent(self, profile: dict[str, Any], *flags: str, name: str = "agent", port: int = 9808) -> Process:
        path = self.tmp / f"{name}-profile.json"
        path.write_text(json.dumps(profile))
        args = [str(AGENT), f"--profile={path}", f"--listen=127.0.0.1:{port}", "--resync=60s", *flags]
        p = self.spawn(self.node, args, name, stdin=subprocess.DEVNULL)
        # Ready once the SNAT accounting has subscribed to conntrack's events (it does before its first dump, which
        # the resync counter counts): flows made from now on are new connections to it, not part of that dump.
        started = series("wirespeed_agent_snat_resyncs_total", reason="start")
        wait_for(
            f"{name} following conntrack",
            lambda: p.proc.poll() is not None or (self.metrics(port) or {}).get(started, 0) >= 1,
        )
        assert p.proc.poll() is None, p.tail()
        return p

    def metrics(self, port: int = 9808) -> dict[str, float] | None:
        """The agent's metrics as {"name{label="v",...}": value} (labels sorted), None until it answers."""
        status, body = self.http_get(self.node, f"http://127.0.0.1:{port}/metrics")
        return parse_metrics(body) if status == 200 else None

    def kernel_outbound(self, udp_one_pool: bool = False) -> Counter[str]:
        """The kernel's own count of the node's flows to the lab's external servers, per destination in the agent's
        label format: the entries of ``node``'s conntrack table (/proc/net/nf_conntrack read in that namespace,
        which leaves out entries whose timeout has passed) whose reply comes from A or B. An independent view of
        what the agent should report: it shares no code with the agent's ctnetlink reader."""
        table = self.exec(self.node, "cat", "/proc/net/nf_conntrack", check=True, timeout=30).stdout
        return conntrack_destinations(table, {A, B}, udp_one_pool)

    def dump(self) -> None:
        """A conntrack dump in ``node`` (the agent's `diagnose` makes one): besides reading the table it reaps entries
        whose timeout has passed at once, where conntrack's garbage collector can take up to a minute."""
        self.exec(self.node, str(AGENT), "diagnose", "--interval", "1ms", "--json", timeout=60)

    def prometheus(self, targets: list[str], port: int = 9090) -> Process:
        config = self.tmp / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            f"  - job_name: wirespeed-agent\n    static_configs: [{{targets: {json.dumps(targets)}}}]\n"
        )
        args = [
            str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={self.tmp / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ]  # fmt: skip
        p = self.spawn(self.node, args, "prometheus", stdin=subprocess.DEVNULL)
        wait_for("Prometheus ready", lambda: self.http_get(self.node, f"http://127.0.0.1:{port}/-/ready")[0] == 200)
        return p

    def wait_scraped(self, metric: str, scrapes: int = 3, port: int = 9090) -> None:
        """Until Prometheus holds ``scrapes`` samples of every ``metric`` series. `size` reads peaks with subqueries
        (``max_over_time(...[window:step])``), whose steps Prometheus aligns to multiples of the step: right after
        the first scrape every step precedes the one sample, and the peak finds no series. Three scrapes at 1 s put a
        sample before the last 1 s step."""

        def enough() -> bool:
            counts = self.query(f"count_over_time({metric}[1h])", port)
            return bool(counts) and all(float(c["value"][1]) >= scrapes for c in counts)

        wait_for(f"Prometheus has scraped {metric} {scrapes} times", enough, timeout=60)

    def query(self, promql: str, port: int = 9090) -> list[dict[str, Any]]:
        url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        status, body = self.http_get(self.node, url)
        assert status == 200, body
        data = json.loads(body)
        assert data["status"] == "success", data
        return data["data"]["result"]  # type: ignore[no-any-return]


def parse_metrics(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        name, brace, labels = series.partition("{")
        if brace:  # labels sorted by name, as series() writes them; an empty value stays ""
            pairs = sorted(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"', labels))
            series = name + "{" + ",".join(f'{k}="{v}"' for k, v in pairs) + "}"
        out[series] = float(value)
    return out


def conntrack_destinations(table: str, external: set[str], udp_one_pool: bool = False) -> Counter[str]:
    """Count /proc/net/nf_conntrack lines per destination ``IP:PORT/PROTO`` (every UDP one as ``*:*/udp`` with
    ``udp_one_pool``)
    whose reply tuple's source (the second ``src=``) is in ``external``. A line reads, e.g.
    ``ipv4 2 tcp 6 431999 ESTABLISHED src=10.244.1.10 dst=192.0.2.10 sport=40000 dport=443 src=192.0.2.10
    dst=10.240.0.4 sport=443 dport=40000 [ASSURED] mark=0 zone=0 use=2``."""
    out: Counter[str] = Counter()
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[2] not in ("tcp", "udp"):
            continue
        proto = fields[2]
        srcs = [f[4:] for f in fields if f.startswith("src=")]
        sports = [f[6:] for f in fields if f.startswith("sport=")]
        if len(srcs) != 2 or len(sports) != 2 or srcs[1] not in external:
            continue
        if proto == "udp" and udp_one_pool:
            out["*:*/udp"] += 1
        else:
            out[f"{srcs[1]}:{sports[1]}/{proto}"] += 1
    return out


def series(name: str, **labels: str) -> str:
    if not labels:
        return name
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


@contextlib.contextmanager
def lab(tmp: Path) -> Iterator[Lab]:
    """Build the three namespaces; everything is removed on exit."""
    lb = Lab(prefix=f"wss{os.getpid() % 10000}{secrets.token_hex(2)}", tmp=tmp)
    made: list[str] = []
    try:
        for ns in (lb.pod, lb.node, lb.dst):
            ip("netns", "add", ns)
            made.append(ns)
            ip("-n", ns, "link", "set", "lo", "up")
        _wire(lb)
        servers = lb.spawn(lb.dst, [sys.executable, "-u", "-c", SERVERS], "servers")
        assert servers.proc.stdout is not None
        assert servers.proc.stdout.readline().strip() == "ready", servers.tail()
        yield lb
    finally:
        for p in reversed(lb.processes):
            p.stop()
        for ns in made + lb.more_pods:
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


@pytest.fixture
def snatlab(tmp_path: Path) -> Iterator[Lab]:
    """A lab for a test that runs the built agent in it (import this fixture into the test module)."""
    if not AGENT.exists():
        require(f"{AGENT} is missing: `make -C agent build` (make test builds it)")
    with lab(tmp_path) as lb:
        yield lb


def _wire(lb: Lab) -> None:
    ip("link", "add", f"{lb.prefix}p", "netns", lb.pod, "type", "veth", "peer", "name", "pod0", "netns", lb.node)
    ip("link", "add", f"{lb.prefix}e", "netns", lb.node, "type", "veth", "peer", "name", "eth0", "netns", lb.dst)
    ip("-n", lb.pod, "link", "set", f"{lb.prefix}p", "name", "eth0")
    ip("-n", lb.node, "link", "set", f"{lb.prefix}e", "name", "eth0")
    for ns, dev, addr in [
        (lb.pod, "eth0", f"{POD}/24"),
        (lb.node, "pod0", "10.244.1.1/24"),
        (lb.node, "eth0", f"{NODE_IP}/24"),
        (lb.dst, "eth0", f"{INTERNAL}/24"),
        (lb.dst, "lo", f"{A}/32"),
        (lb.dst, "lo", f"{B}/32"),
    ]:
        ip("-n", ns, "addr", "add", addr, "dev", dev)
        ip("-n", ns, "link", "set", dev, "up")
    ip("-n", lb.pod, "route", "add", "default", "via", "10.244.1.1")
    ip("-n", lb.node, "route", "add", "default", "via", INTERNAL)
    ip("-n", lb.dst, "route", "add", "10.244.0.0/16", "via", NODE_IP)  # only un-masqueraded pod traffic uses it
    lb.sysctl(lb.node, "net.ipv4.ip_forward", 1)
    rules = (
        "table ip wsnat {\n chain post {\n  type nat hook postrouting priority srcnat; policy accept;\n"
        '  ip saddr 10.244.0.0/16 oifname "eth0" masquerade\n }\n}\n'
    )
    lb.exec(lb.node, "nft", "-f", "-", input=rules, check=True, timeout=30)
    # Closed TCP flows leave conntrack 1 s after their FIN (not 120 s), UDP flows stay for the test's length.
    lb.sysctl(lb.node, "net.netfilter.nf_conntrack_tcp_timeout_time_wait", 1)
    lb.sysctl(lb.node, "net.netfilter.nf_conntrack_udp_timeout", 600)
    lb.sysctl(lb.node, "net.netfilter.nf_conntrack_udp_timeout_stream", 600)


# setns(2) and CLONE_NEWNET (include/uapi/linux/sched.h).
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class NetnsRelay:
    """Listens on 127.0.0.1:port inside a namespace and forwards each connection to 127.0.0.1:port on the host, so
    a process in the namespace reaches a host-loopback server at the address its certificate names."""

    def __init__(self, ns: str, port: int):
        self.port = port
        self.listener = self._listen_in(ns)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _listen_in(self, ns: str) -> socket.socket:
        result: list[socket.socket | BaseException] = []

        def bind() -> None:
            host = os.open("/proc/self/ns/net", os.O_RDONLY)
            target = os.open(f"/run/netns/{ns}", os.O_RDONLY)
            try:
                _setns(target)  # this thread only
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", self.port))
                s.listen(64)
                result.append(s)
            except BaseException as exc:  # handed to the caller
                result.append(exc)
            finally:
                _setns(host)
                os.close(host)
                os.close(target)

        t = threading.Thread(target=bind)
        t.start()
        t.join()
        if isinstance(result[0], BaseException):
            raise result[0]
        return result[0]

    def _serve(self) -> None:
        while True:
            try:
                inside, _ = self.listener.accept()
            except OSError:
                return
            try:
                outside = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            except OSError:
                inside.close()
                continue
            for a, b in ((inside, outside), (outside, inside)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    def close(self) -> None:
        self.listener.close()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    src.settimeout(None)
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
