"""`wirespeed prove` against a real Prometheus that scraped the real agent's continuous probe, before and after the
agent applied the throughput profile (issue 30 item 4(c), its last part).

The kernel lab is agent/cmd/wirespeed-agent/probe_profile_lab_test.go's: two network namespaces as two nodes
joined by a veth pair, the server namespace's receive path slowed (RPS to CPU 1, 200 nftables prerouting rules) and
the host's net.core.netdev_max_backlog at 100, under the host-sysctl lock every tool of this repository that writes a
global sysctl takes (bench/benchlib.py HOST_SYSCTL_LOCK). Unlike it, the probe is the daemon's continuous one
(``--probe --probe-static-peers``, rounds of 6 s) and nothing reads its JSON: Prometheus, in the root namespace,
scrapes the daemon's /metrics every second through a third veth pair (root 10.214.1.1 -- client 10.214.1.2; the
namespaces' own /30 is not reachable from the root namespace), and `wirespeed prove` reads Prometheus.

- before: burstgen's 40 bursts of 8,000 64-byte frames 80 ms apart overflow the backlog of 100: tails, named
  backlog on the peer side (the probing node reads frozen counters, as the fleet lab's does: both namespaces share
  one kernel and so one softnet_stat, and without the copy the probing node would see the server's drops as its
  own, side "both").
- the agent (``--once``, in the server namespace, the receiving node) applies the built-in throughput profile:
  netdev_max_backlog 32,768, through a --proc-sys-root that bind-mounts the host's file (an init_net-only sysctl).
- after: the same bursts, no tail.

Windows: each edge is the timestamp of one of Prometheus' own scrapes, and Prometheus 2's range selector holds the
samples at both of its ends ([t - range, t]), so increase() over the window is the last sample minus the first, with
no extrapolation (its extrapolatedRate scales by (sampled + 0 + 0) / sampled): prove's numbers are exactly the
counters' differences, which the test reads from Prometheus directly. Tails are counted when a round ends, so each
window ends on a scrape after two rounds ended past the bursts, and the after window starts after a round ended past
the apply (its tails are those of rounds begun with the profile applied).

Grouping: prove groups by ``profile`` by default, a label the PodMonitor copies from the agent pod. Here the change
is the profile itself, so the two windows would be two groups with one window each; the scrape config gives the
target ``pool: probe-lab`` (as a cluster's relabelling of the node's pool label would: the --by help, "a pool label
of your scrape config") and prove runs ``--by pool``: the same nodes before and after.

Nothing is timed: the waits have generous limits that fail only a hung run. Needs root (the netns marker), Go (it
builds the agent and burstgen from this tree, or takes WIRESPEED_AGENT_BIN / WIRESPEED_BURSTGEN_BIN), prometheus,
nft, taskset and two CPUs; under CI=true a missing one fails (tests/conftest.py require).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest

from benchlib import host_sysctl_lock
from clirun import wirespeed
from conftest import require
from prometheus_lab import running_prometheus
from wirespeed.names import PROBE_CAUSES, PROBE_RETRANSMITS, PROBE_RTT, PROBE_SIDES, PROBE_TAILS

ROOT = Path(__file__).resolve().parents[2]
THROUGHPUT = ROOT / "components" / "wirespeed" / "data" / "profiles" / "throughput.json"
BACKLOG = Path("/proc/sys/net/core/netdev_max_backlog")
LAB_BACKLOG = 100  # the Go lab's labBacklog: the kernel default 1,000 (net/core/dev.c) overflows for a few ms only
CLIENT_ADDR, SERVER_ADDR = "10.214.0.1", "10.214.0.2"  # the Go probe lab's /30, inside the namespaces only
ROOT_ADDR, METRICS_ADDR = "10.214.1.1", "10.214.1.2"  # the root namespace's way to the client's /metrics
PROBE_PORT, METRICS_PORT = 9809, 9808
ROUND_S = 6  # --probe-round: the fleet lab's; tails are counted when a round ends
# The Go lab's burst pattern and probe (probe_profile_lab_test.go labBurst, runBursts: 8 streams x 200/s, the
# sender and the probe pinned to CPU 0): it fits a backlog of 32,768 and overflows one of 100 (its comment).
BURST = ["--bursts", "40", "--burst-size", "8000", "--gap", "80ms", "--frame", "64"]
WINDOW_S = 60  # prove's shortest window (wirespeed.measure.snat WINDOW_RANGE_S)
MIN_ROUND_TRIPS = 10_000  # prove's floor (MIN_ROUND_TRIPS_FLOOR); 8 x 200/s makes about 96,000 a minute
MIN_EXPECTED_TAILS = 10  # the Go lab's minExpectedTails: Poisson odds of 0 at that mean are e^-10
POOL = "probe-lab"
# The continuous daemon's own profile, the fleet lab's labProfile, with --dry-run: it reads, never writes, so the
# only writer of netdev_max_backlog between the arms is the --once apply of the throughput profile.
DAEMON_PROFILE = {
    "name": "lab",
    "interfaces": {"roles": ["virtual"], "include": ["wst*"]},
    "mtu": {"value": 1400},
    "sysctls": {"net.core.netdev_max_backlog": 32768},
}
T = TypeVar("T")


def sh(*args: str, **kwargs: Any) -> str:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False, **kwargs)
    assert proc.returncode == 0, f"{' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    out: str = proc.stdout
    return out


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 120.0) -> T:
    """Poll until ``probe`` answers; the limit only fails a hung run (nothing asserts how long it took)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (found := probe()) is not None:
            return found
        time.sleep(0.2)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s")


def build(package: str, env_var: str, out_dir: Path) -> Path:
    """This tree's ./cmd/<package> (the agent must be this tree's: its metrics are what prove reads)."""
    if given := os.environ.get(env_var):
        return Path(given)
    if shutil.which("go") is None:
        require(f"go missing: {package} is built from agent/cmd/{package} (or set {env_var})")
    out = out_dir / package
    env = dict(os.environ, CGO_ENABLED="0")
    proc = subprocess.run(
        ["go", "build", "-trimpath", "-o", str(out), f"./cmd/{package}"],
        cwd=ROOT / "agent",
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, f"go build ./cmd/{package}: {proc.stderr}"
    return out


def slow_receive_path() -> str:
    """The Go lab's slowReceivePath (bench/microburst-lab/lab.py nft_ruleset): 200 prerouting rules that never
    match (192.0.2.0/24 is TEST-NET-1, RFC 5737: no lab packet comes from there), then the bursts' port dropped."""
    rules = [f"    ip saddr 192.0.2.{i % 250 + 1} udp dport {10000 + i} counter drop" for i in range(200)]
    head = "table inet wsprobe_slow {\n  chain pre {\n    type filter hook prerouting priority 0; policy accept;\n"
    return head + "\n".join(rules) + "\n    udp dport 9000 drop\n  }\n}\n"


@dataclass
class Lab:
    client: str
    server: str
    tmp: Path
    agent: Path
    burstgen: Path
    stack: contextlib.ExitStack
    logs: list[Path] = field(default_factory=list)

    def ns(self, ns: str, *args: str, **kwargs: Any) -> str:
        return sh("ip", "netns", "exec", ns, *args, **kwargs)

    def spawn(self, name: str, ns: str, *args: str, ready: str) -> None:
        """Start ``args`` in ``ns`` until the test ends, once its log says ``ready``."""
        log = self.tmp / f"{name}.log"
        self.logs.append(log)
        out = self.stack.enter_context(log.open("w"))
        proc = subprocess.Popen(["ip", "netns", "exec", ns, *args], stdout=subprocess.DEVNULL, stderr=out)
        self.stack.callback(_stop, proc)
        wait_for(f"{name} says {ready!r} ({log})", lambda: True if ready in log.read_text() else None, 60)
        assert proc.poll() is None, log.read_text()

    def bursts(self) -> float:
        """The burst pattern from the client into the server's slow path; the time it ended."""
        self.ns(self.client, "taskset", "-c", "0", str(self.burstgen), "send", "--netns", self.client, "--dst",
                f"{SERVER_ADDR}:9000", *BURST)  # fmt: skip
        return time.time()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=20)


def _wire(lab: Lab) -> None:
    """The two namespaces, their veth, and the root namespace's veth into the client (for Prometheus)."""
    root_link = f"wspm{os.getpid() % 100000}"
    for ns in (lab.client, lab.server):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)  # a killed run's leftover
        sh("ip", "netns", "add", ns)
        lab.stack.callback(subprocess.run, ["ip", "netns", "del", ns], capture_output=True, check=False)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "-n", lab.client, "link", "add", "wspc", "type", "veth", "peer", "name", "wsps", "netns", lab.server)
    # Deleting the client namespace deletes this pair too, its root end included.
    sh("ip", "link", "add", root_link, "type", "veth", "peer", "name", "wspm", "netns", lab.client)
    links: list[tuple[str | None, str, str]] = [
        (lab.client, "wspc", CLIENT_ADDR),
        (lab.server, "wsps", SERVER_ADDR),
        (lab.client, "wspm", METRICS_ADDR),
        (None, root_link, ROOT_ADDR),
    ]
    for inside, dev, addr in links:
        where = ["-n", inside] if inside else []
        sh("ip", *where, "addr", "add", f"{addr}/30", "dev", dev)
        sh("ip", *where, "link", "set", dev, "up")


def _host_backlog(lab: Lab, value: int) -> None:
    """The host's netdev_max_backlog (global: a non-init namespace has none) at ``value``, restored at the end."""
    old = BACKLOG.read_text()
    lab.stack.callback(BACKLOG.write_text, old)
    BACKLOG.write_text(str(value))


def _frozen_proc(lab: Lab) -> Path:
    """The fleet lab's frozenProc: softnet_stat and the client's protocol counters copied once, for a probing node
    whose receive path the bursts do not hit."""
    root = lab.tmp / "frozen-proc"
    (root / "net").mkdir(parents=True)
    (root / "1" / "net").mkdir(parents=True)
    (root / "self").symlink_to("1")
    (root / "net" / "softnet_stat").write_text(Path("/proc/net/softnet_stat").read_text())
    for name in ("snmp", "netstat", "snmp6"):
        (root / "1" / "net" / name).write_text(lab.ns(lab.client, "cat", f"/proc/net/{name}"))
    return root


def _sysctl_root(lab: Lab, names: list[str]) -> Path:
    """The Go lab's labSysctlRoot: a --proc-sys-root for the server namespace. A per-namespace sysctl is a symlink
    resolved in the agent's namespace; an init_net-only one (netdev_max_backlog: net/core/sysctl_net_core.c
    registers it for init_net alone) is the host's file bind-mounted (a procfs sysctl inode keeps its table), the
    mount removed and the host's value restored at the end."""
    root = lab.tmp / "proc-sys"
    for name in names:
        rel = name.replace(".", "/")
        host, dst = Path("/proc/sys") / rel, root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if subprocess.run(["ip", "netns", "exec", lab.server, "test", "-e", str(host)], check=False).returncode == 0:
            dst.symlink_to(host)
            continue
        lab.stack.callback(host.write_text, host.read_text())
        dst.touch()
        sh("mount", "--bind", str(host), str(dst))
        lab.stack.callback(sh, "umount", str(dst))
    return root


def _apply_throughput(lab: Lab) -> dict[str, Any]:
    """The agent once (one reconcile, the report on stdout) with the built-in throughput profile, in the server
    namespace: the receiving node."""
    profile = json.loads(THROUGHPUT.read_text())
    root = _sysctl_root(lab, sorted(profile["sysctls"]))
    out = lab.ns(lab.server, str(lab.agent), "--once", "--profile", str(THROUGHPUT), "--proc-sys-root", str(root),
                 "--listen", "", "--kube=false", "--snat=false")  # fmt: skip
    report: dict[str, Any] = json.loads(out)
    return report


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    for tool in ("nft", "taskset", "mount"):
        if shutil.which(tool) is None:
            require(f"{tool} missing: scripts/install-system-deps.sh")
    if Path("/sys/devices/system/cpu/online").read_text().strip() == "0":
        require("needs two CPUs: the sender and the probe on one, the receive path steered to the other")
    agent = build("wirespeed-agent", "WIRESPEED_AGENT_BIN", tmp_path)
    burstgen = build("burstgen", "WIRESPEED_BURSTGEN_BIN", tmp_path)
    with contextlib.ExitStack() as stack:
        stack.enter_context(host_sysctl_lock(timeout=600))
        pid = os.getpid() % 100000
        lb = Lab(f"wspab-c{pid}", f"wspab-s{pid}", tmp_path, agent, burstgen, stack)
        _wire(lb)
        _host_backlog(lb, LAB_BACKLOG)
        lb.ns(lb.server, "sh", "-c", "echo 2 > /sys/class/net/wsps/queues/rx-0/rps_cpus")
        lb.ns(lb.server, "nft", "-f", "-", input=slow_receive_path())
        yield lb


def _start_probes(lab: Lab) -> None:
    """`probe --listen` answers in the server namespace (its counters the host's: it sees the backlog's drops); the
    daemon probes it from the client namespace, pinned to CPU 0 with the sender as the Go lab's probe is."""
    lab.spawn("server", lab.server, str(lab.agent), "probe", "--listen", f"{SERVER_ADDR}:{PROBE_PORT}",
              ready="probe serving")  # fmt: skip
    profile = lab.tmp / "daemon-profile.json"
    profile.write_text(json.dumps(DAEMON_PROFILE))
    lab.spawn(
        "daemon",
        lab.client,
        "taskset", "-c", "0", str(lab.agent), "--profile", str(profile), "--dry-run", "--kube=false", "--snat=false",
        "--listen", f"{METRICS_ADDR}:{METRICS_PORT}", "--node-name", "lab-client",
        "--probe", "--probe-static-peers", f"lab-server={SERVER_ADDR}@z2", "--probe-port", str(PROBE_PORT),
        "--probe-streams", "8", "--probe-rate", "200", "--probe-interval", "500ms", "--probe-round", f"{ROUND_S}s",
        "--probe-proc-root", str(_frozen_proc(lab)),
        ready="probe: continuous mode",
    )  # fmt: skip


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:  # the lab's own addresses
        return json.load(answer)


def query(prometheus: str, promql: str, at: str | None = None) -> list[dict[str, Any]]:
    """An instant query straight to Prometheus' API (at ``at``, unix seconds as Prometheus wrote them)."""
    form = {"query": promql} | ({"time": at} if at else {})
    result: list[dict[str, Any]] = _get(f"{prometheus}/api/v1/query?{urllib.parse.urlencode(form)}")["data"]["result"]
    return result


def last_round_ended() -> float | None:
    """When the daemon's last round ended (its /probe), None before the first."""
    last = _get(f"http://{METRICS_ADDR}:{METRICS_PORT}/probe")["last_round"]
    if not last:
        return None
    return datetime.fromisoformat(last["ended"]).timestamp()  # Go's RFC 3339 (nanoseconds: 3.11 keeps 6 digits)


def rounds_after(moment: float, rounds: int) -> float:
    """Wait until ``rounds`` of the daemon's rounds have ended after ``moment``; when that was seen. A round trip
    before ``moment`` belongs to a round in progress then, which is the first to end after it: by the second, every
    tail of round trips begun before ``moment`` is counted."""
    ends: set[float] = set()

    def seen() -> float | None:
        if (ended := last_round_ended()) is not None and ended > moment:
            ends.add(ended)
        return time.time() if len(ends) >= rounds else None

    return wait_for(f"{rounds} probe rounds ending after {moment}", seen, 60 + 4 * ROUND_S * rounds)


def scrape_after(prometheus: str, moment: float) -> str:
    """The timestamp, as Prometheus wrote it (unix seconds, to the millisecond), of a scrape of the daemon after
    ``moment`` that holds every probe series of its peer: the histogram, each cause x side of the tails (from 0, the
    round the peer was chosen: agent/internal/metrics/probe.go Peers) and the retransmits."""
    want = len(PROBE_CAUSES) * len(PROBE_SIDES)

    def found() -> str | None:
        stamps = query(prometheus, f'timestamp({PROBE_RTT}_count{{pool="{POOL}"}})')
        if len(stamps) != 1 or float(stamps[0]["value"][1]) <= moment:
            return None
        at: str = stamps[0]["value"][1]
        tails = query(prometheus, f'count(timestamp({PROBE_TAILS}{{pool="{POOL}"}}) == {at})', at)
        retransmits = query(prometheus, f'count(timestamp({PROBE_RETRANSMITS}{{pool="{POOL}"}}) == {at})', at)
        counts = [int(r[0]["value"][1]) if r else 0 for r in (tails, retransmits)]
        return at if counts == [want, 1] else None

    return wait_for(f"a scrape of every probe series after {moment}", found)


def arm(lab: Lab, prometheus: str, after: float) -> tuple[str, str]:
    """One window: from a scrape after ``after``, the bursts, then to a scrape at least WINDOW_S later and after
    the rounds that hold the bursts' round trips have ended and been counted."""
    start = scrape_after(prometheus, after)
    bursts_ended = lab.bursts()
    counted = rounds_after(bursts_ended, 2)
    return start, scrape_after(prometheus, max(counted, float(start) + WINDOW_S))


@dataclass
class Held:
    """What Prometheus holds for one window: each counter's last sample minus its first, summed as prove sums."""

    buckets: dict[str, float]
    tails: dict[tuple[str, str], float]
    retransmits: float


def held(prometheus: str, start: str, end: str) -> Held:
    def at(promql: str, moment: str) -> dict[frozenset[tuple[str, str]], float]:
        return {frozenset(s["metric"].items()): float(s["value"][1]) for s in query(prometheus, promql, moment)}

    def grown(name: str) -> list[tuple[dict[str, str], float]]:
        first, last = at(f'{name}{{pool="{POOL}"}}', start), at(f'{name}{{pool="{POOL}"}}', end)
        assert first.keys() == last.keys(), f"{name}: series born or gone inside the window"
        return [(dict(k), last[k] - first[k]) for k in last]

    buckets: dict[str, float] = {}
    for labels, n in grown(f"{PROBE_RTT}_bucket"):
        buckets[labels["le"]] = buckets.get(labels["le"], 0.0) + n
    tails: dict[tuple[str, str], float] = {}
    for labels, n in grown(PROBE_TAILS):
        tails[labels["cause"], labels["side"]] = tails.get((labels["cause"], labels["side"]), 0.0) + n
    return Held(buckets, tails, sum(n for _, n in grown(PROBE_RETRANSMITS)))


def prove(prometheus: str, windows: list[tuple[str, str]]) -> dict[str, Any]:
    (a, b), (c, d) = windows
    out = wirespeed("prove", "--from-prometheus", prometheus, "--before", f"{a}..{b}", "--after", f"{c}..{d}",
                    "--by", "pool", "--min-round-trips", str(MIN_ROUND_TRIPS), "--json")  # fmt: skip
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def check_exact(doc: dict[str, Any], prometheus: str, windows: list[tuple[str, str]]) -> None:
    """Prove's numbers are what Prometheus holds: each counter's difference between the window's two scrapes, read
    straight from the API; its percentiles are Prometheus' own histogram_quantile over the same increase()."""
    [group] = doc["groups"]
    for name, (start, end) in zip(("before", "after"), windows, strict=True):
        arm_, have = group[name], held(prometheus, start, end)
        assert arm_["round_trips"] == have.buckets["+Inf"], name
        assert arm_["tails"] == sum(have.tails.values()), name
        causes = sorted(((c, s, n) for (c, s), n in have.tails.items() if n > 0), key=lambda x: (-x[2], x[0], x[1]))
        assert arm_["causes"] == [
            {"cause": c, "side": s, "tails": n, "per_million": n / have.buckets["+Inf"] * 1e6} for c, s, n in causes
        ], name
        assert arm_["retransmits"] == have.retransmits, name
        window = f"{round((float(end) - float(start)) * 1000)}ms"
        increase = f'sum by (le) (increase({PROBE_RTT}_bucket{{pool="{POOL}"}}[{window}]))'
        assert {s["metric"]["le"]: float(s["value"][1]) for s in query(prometheus, increase, end)} == have.buckets
        for key, q in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999), ("p9999", 0.9999)):
            [theirs] = query(prometheus, f"histogram_quantile({q}, {increase})", end)
            assert arm_["percentiles_seconds"][key]["seconds"] == float(theirs["value"][1]), (name, key)


@pytest.mark.netns
def test_prove_reads_the_throughput_profile_clearing_backlog_tails(lab: Lab, tmp_path: Path) -> None:
    _start_probes(lab)
    (tmp_path / "prometheus").mkdir()
    targets = [(METRICS_PORT, {"pool": POOL, "node": "lab-client"})]
    with running_prometheus(tmp_path / "prometheus", targets, 1.0, host=METRICS_ADDR) as prometheus:
        before = arm(lab, prometheus, time.time())
        report = _apply_throughput(lab)
        key, want = (
            "net.core.netdev_max_backlog",
            json.loads(THROUGHPUT.read_text())["sysctls"]["net.core.netdev_max_backlog"],
        )
        assert report["state"] == "applied", report
        assert report["sysctls"][key]["current"] == want, report
        assert BACKLOG.read_text().strip() == str(want)
        after = arm(lab, prometheus, rounds_after(time.time(), 1))
        doc = prove(prometheus, [before, after])
        check_exact(doc, prometheus, [before, after])
    [group] = doc["groups"]
    b, a = group["before"], group["after"]
    print(f"windows {before} {after}: before {b}\nafter {a}")
    assert (doc["by"], group["group"], doc["enough"], group["enough"]) == ("pool", POOL, True, True)
    assert b["round_trips"] >= MIN_ROUND_TRIPS
    assert a["round_trips"] >= MIN_ROUND_TRIPS
    # Before: tails, most of them named backlog on the peer's side (the receiving node, whose backlog overflowed).
    assert b["causes"], b
    assert (b["causes"][0]["cause"], b["causes"][0]["side"]) == ("backlog", "peer"), b
    assert b["causes"][0]["tails"] >= MIN_EXPECTED_TAILS, b
    # After: none, no retransmission.
    assert (a["tails"], a["causes"], a["retransmits"]) == (0, [], 0), a
    # Not luck: at the rate before, the after window's round trips would have held MIN_EXPECTED_TAILS or more.
    expected = b["tails"] * a["round_trips"] / b["round_trips"]
    assert expected >= MIN_EXPECTED_TAILS, (b, a)
