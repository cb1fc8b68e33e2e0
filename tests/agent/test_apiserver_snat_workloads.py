# ruff: noqa: F811  (the `snatlab` fixture is imported from tests/snat_lab.py and taken as a parameter)
"""Attribution on a real kernel and a real API server with two pods: the lab (tests/snat_lab.py) with a second pod
namespace on the same node namespace (10.244.1.10 and 10.244.2.10, each its own veth, both masqueraded), and
Pod objects for them on a real kube-apiserver (tests/apiserver.py), written by the test as a kubelet would (no
kubelet here): shop/cart's pod owned by a ReplicaSet owned by a Deployment, batch/export's owned by a Job owned by
a CronJob. The agent watches them with its own token and names each flow's workload from its source address.

What is checked, each exactly: the per-workload series of both pods and the node to shared and distinct
destinations; the SNATPortPressure condition, its Event and the annotation naming the workloads; a deleted pod's
series going once its flows' hold passed; an address reused by a new pod attributed by the agent's rule
(agent/README.md, "A reused address": a flow belongs to the pod that held the address when it was first seen,
none if the address was free then); and each protocol held for its own time (the profile's tcp_hold_seconds
after the close, udp_hold_seconds after the last packet) in the per-workload series.
"""

from __future__ import annotations

import json
import math
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from apiserver import ApiServer
from snat_lab import (
    NODE_IP,
    POD,
    A,
    B,
    Lab,
    NetnsRelay,
    series,
    snatlab,  # noqa: F401 (the pytest fixture)
    wait_for,
)
from test_apiserver_snat import PERCENT, PORTS, PROFILE, kubeconfig_for_node

pytestmark = pytest.mark.netns

BY_WORKLOAD = "wirespeed_agent_snat_ports_in_use_by_workload"
TCP_HOLD, UDP_HOLD = 2, 6  # seconds, the test profile's tcp_hold_seconds / udp_hold_seconds: apart, and quick
# The accounting ticks at 1 Hz and rounds a flow's end up to a whole second (table.go secCeil): a port is released
# in the second after its hold ends, and the metric shows it at the next tick (as tests/agent/test_snat_conntrack.py).
EARLY, LATE = 0.5, 2.5
OTHER_PORT = 8443  # a TCP server on A of this test's own: a destination only batch/export's pod calls
OTHER_SERVER = f"""
import socket, threading, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(({A!r}, {OTHER_PORT})); s.listen(64)
def serve():
    while True:
        c, _ = s.accept()
        threading.Thread(target=lambda c=c: (c.recv(1), c.close()), daemon=True).start()
threading.Thread(target=serve, daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
"""


@dataclass(frozen=True)
class Workload:
    """A workload as the agent's series name it, and the controller object its pods' owner is owned by."""

    namespace: str
    name: str
    kind: str  # the top owner's kind: what the agent's series say

    def labels(self, destination: str) -> str:
        return series(BY_WORKLOAD, destination=destination, kind=self.kind, namespace=self.namespace,
                      workload=self.name)  # fmt: skip

    def said(self) -> str:
        """How the agent's messages name it (snat.Workload.String)."""
        return f"{self.namespace}/{self.name} ({self.kind})"


CART = Workload("shop", "cart", "Deployment")  # pod -> ReplicaSet -> Deployment
EXPORT = Workload("batch", "export", "CronJob")  # pod -> Job -> CronJob
REPORT = Workload("batch", "adhoc-report", "Pod")  # a bare pod: itself
# The owner between the pod and its workload: (kind, apiVersion) of the pod's owner and of its owner.
MIDDLE = {"Deployment": ("ReplicaSet", "apps/v1"), "CronJob": ("Job", "batch/v1")}


def rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def namespaces(server: ApiServer) -> None:
    """The workloads' namespaces and their default ServiceAccounts (no controller-manager makes them)."""
    for ns in sorted({w.namespace for w in (CART, EXPORT, REPORT)}):
        server.apply(json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
        server.apply(json.dumps({"apiVersion": "v1", "kind": "ServiceAccount",
                                 "metadata": {"name": "default", "namespace": ns}}))  # fmt: skip


def owner_of(server: ApiServer, w: Workload, node: str) -> list[dict[str, Any]]:
    """The pod's ownerReferences: for a Deployment or CronJob its ReplicaSet or Job (created here, owned by the
    workload, named per node so that each test has its own), none for a bare pod."""
    if w.kind not in MIDDLE:
        return []
    kind, api = MIDDLE[w.kind]
    name = f"{w.name}-{node}"
    labels = {"app": w.name}
    template: dict[str, Any] = {
        "metadata": {"labels": labels},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "registry.example/c:1"}]},
    }
    spec: dict[str, Any] = {"template": template}
    if kind == "ReplicaSet":
        template["spec"]["restartPolicy"] = "Always"
        spec |= {"replicas": 1, "selector": {"matchLabels": labels}}
    else:
        spec["manualSelector"] = True
        spec["selector"] = {"matchLabels": labels}
    owner = {
        "apiVersion": "apps/v1" if w.kind == "Deployment" else "batch/v1",
        "kind": w.kind,
        "name": w.name,
        "uid": str(uuid.uuid4()),
        "controller": True,
    }
    obj = {"apiVersion": api, "kind": kind, "spec": spec,
           "metadata": {"name": name, "namespace": w.namespace, "ownerReferences": [owner]}}  # fmt: skip
    server.kubectl("create", "-f", "-", stdin=json.dumps(obj))
    uid = json.loads(server.kubectl("get", kind.lower(), name, "-n", w.namespace, "-o", "json").stdout)["metadata"][
        "uid"
    ]
    return [{"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": True}]


def create_pod(server: ApiServer, w: Workload, node: str, address: str, started: float) -> str:
    """A Running pod of ``w`` on ``node`` holding ``address`` since ``started`` (its status as a kubelet writes
    it); returns its name."""
    name = w.name if w.kind == "Pod" else f"{w.name}-{node}-{int(started) % 100000}"  # a bare pod is its workload
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": w.namespace, "ownerReferences": owner_of(server, w, node)},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "registry.example/c:1"}]},
    }
    server.kubectl("create", "-f", "-", stdin=json.dumps(pod))
    status = {"status": {"phase": "Running", "podIP": address, "podIPs": [{"ip": address}], "hostIP": NODE_IP,
                         "hostIPs": [{"ip": NODE_IP}], "startTime": rfc3339(started)}}  # fmt: skip
    server.kubectl("patch", "pod", name, "-n", w.namespace, "--subresource=status", "--type=merge", "-p",
                   json.dumps(status))  # fmt: skip
    return name


# The sum past the top K pairs is always exported, 0 when there is none (agent/internal/metrics/README.md).
OTHER = series(BY_WORKLOAD, destination="other", kind="", namespace="", workload="other")


def by_workload(m: dict[str, float]) -> dict[str, float]:
    """The agent's per-workload series but the always-present "other" row, which must be 0 here (top K is 20)."""
    assert m.get(OTHER) == 0, m.get(OTHER)
    return {k: v for k, v in m.items() if k.startswith(BY_WORKLOAD + "{") and k != OTHER}


def exactly(lb: Lab, want: dict[str, float], what: str, timeout: float = 120, reap: bool = False) -> None:
    """Wait until the agent's per-workload series are exactly ``want`` (no other series), and say what they were
    when they never were; with ``reap``, conntrack's expired entries are reaped before each look (Lab.dump)."""

    def same() -> bool:
        if reap:
            lb.dump()
        m = lb.metrics()
        return m is not None and by_workload(m) == want

    try:
        wait_for(what, same, timeout=timeout)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; want {want}; the agent's rows: {by_workload(lb.metrics() or {})}") from None


def node_condition(server: ApiServer, node: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    obj = json.loads(server.kubectl("get", "node", node, "-o", "json").stdout)
    condition = next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == "SNATPortPressure"),
                     None)  # fmt: skip
    raw = obj["metadata"].get("annotations", {}).get("wirespeed.io/tuning-status")
    return condition, json.loads(raw) if raw else {}


def node_events(server: ApiServer, node: str, reason: str) -> list[dict[str, Any]]:
    out = server.kubectl("get", "events", "-n", "default", f"--field-selector=involvedObject.name={node}", "-o", "json")
    return [e for e in json.loads(out.stdout)["items"] if e["reason"] == reason]


def profile(tcp_hold: int, udp_hold: int) -> dict[str, Any]:
    return {**PROFILE, "outbound": {**PROFILE["outbound"], "tcp_hold_seconds": tcp_hold, "udp_hold_seconds": udp_hold}}


def test_two_pods_workloads_pressure_deletion_and_a_reused_address(apiserver: ApiServer, snatlab: Lab) -> None:
    lb, node = snatlab, "snat-node-workloads"
    other = lb.spawn(lb.dst, [sys.executable, "-u", "-c", OTHER_SERVER], "other-server")
    assert other.proc.stdout is not None
    assert other.proc.stdout.readline().strip() == "ready", other.tail()
    pod2_ns, pod2 = lb.add_pod(2)
    kubeconfig = kubeconfig_for_node(apiserver, lb.tmp, node)
    namespaces(apiserver)
    started = time.time() - 60
    create_pod(apiserver, CART, node, POD, started)
    export_pod = create_pod(apiserver, EXPORT, node, pod2, started)
    relay = NetnsRelay(lb.node, apiserver.port)
    try:
        agent = lb.agent(profile(TCP_HOLD, TCP_HOLD), f"--kubeconfig={kubeconfig}", f"--node-name={node}")
        to_a, to_b, to_other = f"{A}:443/tcp", f"{B}:443/tcp", f"{A}:{OTHER_PORT}/tcp"
        cart, export, host = lb.client(lb.pod, "cart"), lb.client(pod2_ns, "export"), lb.client(lb.node, "host")
        # Shared A:443 (cart 6, export 1: 7, under the pressure threshold of 8), distinct B:443 (cart 2 and the
        # node's own 3) and A:8443 (export 3).
        cart.do("tcp", A, 443, 6)
        cart.do("tcp", B, 443, 2)
        export.do("tcp", A, 443, 1)
        export.do("tcp", A, OTHER_PORT, 3)
        host.do("tcp", B, 443, 3)
        node_self = Workload("", node, "node")
        want: dict[str, float] = {CART.labels(to_a): 6, CART.labels(to_b): 2, EXPORT.labels(to_a): 1,
                                  EXPORT.labels(to_other): 3, node_self.labels(to_b): 3}  # fmt: skip
        exactly(lb, want, "each pod's and the node's flows under their own workload")
        quiet = wait_for("SNATPortPressure False", lambda: node_condition(apiserver, node)[0], timeout=60)
        assert quiet["status"] == "False", (quiet, agent.tail())

        # One more flow of export's to A:443 makes 8 of 16: pressure, written as that flow is counted, so every
        # number in the message is final.
        export.do("tcp", A, 443, 1)
        want[EXPORT.labels(to_a)] = 2
        exactly(lb, want, "export's second flow to A")
        condition = wait_for("SNATPortPressure True", lambda: (c := node_condition(apiserver, node)[0]) and
                             c["status"] == "True" and c)  # fmt: skip
        message = (f"{to_a} uses 8 of {PORTS} ports (50%, threshold {PERCENT}%); {CART.said()} holds 6 of {PORTS} "
                   f"ports to {to_a}; {EXPORT.said()} 2")  # fmt: skip
        assert condition["message"] == message
        (event,) = wait_for("the SNATPortPressure Event", lambda: node_events(apiserver, node, "SNATPortPressure"))
        assert (event["type"], event["message"]) == ("Warning", message)
        snat = node_condition(apiserver, node)[1]["snat"]
        assert snat["workloads"] == [
            {"namespace": CART.namespace, "workload": CART.name, "kind": CART.kind, "destination": to_a,
             "ports_in_use": 6},
            {"namespace": EXPORT.namespace, "workload": EXPORT.name, "kind": EXPORT.kind, "destination": to_a,
             "ports_in_use": 2},
        ]  # fmt: skip

        # export's pod is deleted (its sandbox with it: its flows close): its series go once their hold passed.
        apiserver.kubectl("delete", "pod", export_pod, "-n", EXPORT.namespace, "--grace-period=0", "--force")
        export.do("close", A, 443, 2)
        export.do("close", A, OTHER_PORT, 3)
        del want[EXPORT.labels(to_a)], want[EXPORT.labels(to_other)]
        exactly(lb, want, "export's series gone", timeout=60, reap=True)

        # The address is free: a flow from it now is no pod's. A new pod (a bare one) then starts on it; flows
        # first seen after its start are its, the free-time flow stays unknown (it was first seen before the new
        # pod's hold began), attributed again at every tick with the same answer.
        export.do("tcp", A, 443, 1)
        unknown = series(BY_WORKLOAD, destination=to_a, kind="unknown", namespace="", workload="unknown")
        want[unknown] = 1
        exactly(lb, want, "a flow from the free address is unknown")
        reused_at = math.ceil(time.time()) + 1  # a whole second (startTime's resolution), after that flow
        create_pod(apiserver, REPORT, node, pod2, reused_at)
        time.sleep(max(0.0, reused_at - time.time()) + 1)
        export.do("tcp", A, 443, 2)
        want[REPORT.labels(to_a)] = 2
        exactly(lb, want, "the new pod's flows are the new pod's; the free-time flow stays unknown")
        time.sleep(3)  # several ticks later, attributed again: the same
        assert by_workload(lb.metrics() or {}) == want
    finally:
        relay.close()


def test_each_protocol_is_held_for_its_own_time_in_the_workload_series(apiserver: ApiServer, snatlab: Lab) -> None:
    """cart's TCP flows hold their ports tcp_hold_seconds after their close, export's UDP flows udp_hold_seconds
    after their last packet, each exactly (to the accounting's second), in the per-workload series. conntrack
    removes a UDP entry its UDP timeout (1 s here) after the last packet; the agent dates the hold back to it."""
    lb, node = snatlab, "snat-node-holds"
    lb.sysctl(lb.node, "net.netfilter.nf_conntrack_udp_timeout", 1)
    lb.sysctl(lb.node, "net.netfilter.nf_conntrack_udp_timeout_stream", 1)
    pod2_ns, pod2 = lb.add_pod(2)
    kubeconfig = kubeconfig_for_node(apiserver, lb.tmp, node)
    namespaces(apiserver)
    started = time.time() - 60
    create_pod(apiserver, CART, node, POD, started)
    create_pod(apiserver, EXPORT, node, pod2, started)
    relay = NetnsRelay(lb.node, apiserver.port)
    try:
        lb.agent(profile(TCP_HOLD, UDP_HOLD), f"--kubeconfig={kubeconfig}", f"--node-name={node}")
        to_a, udp = f"{A}:443/tcp", "*:*/udp"  # an Azure load balancer's UDP is one pool (the lab's profile)
        cart, export = lb.client(lb.pod, "cart"), lb.client(pod2_ns, "export")
        n, k, u = 6, 4, 3
        cart.do("tcp", A, 443, n)
        exactly(lb, {CART.labels(to_a): n}, "cart's TCP flows")
        udp_last = time.monotonic()
        export.do("udp", A, 53, u)  # one datagram and its answer each: the flows' last packets
        wait_for("export's UDP flows", lambda: (m := lb.metrics()) and m.get(EXPORT.labels(udp)) == u and m,
                 timeout=UDP_HOLD - 2)  # fmt: skip
        closed_at = time.monotonic()
        cart.do("close", A, 443, k)
        samples: list[tuple[float, float, float]] = []  # a pair with no port in use has no series: 0
        while time.monotonic() < udp_last + UDP_HOLD + LATE + 1:
            lb.dump()  # reap expired entries at once (TIME_WAIT 1 s, UDP 1 s), so the hold is what keeps them
            m = lb.metrics() or {}
            samples.append((time.monotonic(), m.get(CART.labels(to_a), 0), m.get(EXPORT.labels(udp), 0)))

        def expect(start: float, hold: float, index: int, held: float, after: float) -> None:
            during = [s[index] for s in samples if s[0] < start + hold - EARLY]
            later = [s[index] for s in samples if s[0] > start + hold + LATE]
            assert during, samples
            assert later, samples
            assert all(v == held for v in during), (hold, during)
            assert all(v == after for v in later), (hold, later)

        expect(closed_at, TCP_HOLD, 1, n, n - k)
        expect(udp_last, UDP_HOLD, 2, u, 0)
        assert by_workload(lb.metrics() or {}) == {CART.labels(to_a): n - k}  # export's series went with its flows
    finally:
        relay.close()
