"""The node agent, run as a process on this machine, reporting to a real kube-apiserver (tests/apiserver.py) with
a real ServiceAccount token: exactly the RBAC its ServiceAccount gets from the rendered manifests.

The agent tunes something real: a veth pair created for the test (MTU, through netlink) and
net.core.netdev_max_backlog in a /proc/sys-shaped temporary tree (--proc-sys-root), so the host's own sysctls are
never touched. Needs root for the veth (the `netns` marker's rule: skipped locally without it, failed under CI).

The install is the whole of what `wirespeed render node-tuning` prints, applied as kubectl would; the agent's token
is the one the kubelet would mount, bound to its Pod on node-a through the TokenRequest API.

Own node only: RBAC cannot name "your own Node" (agent/internal/nodestatus/rbac.yaml says so), so the test proves
both halves: the ClusterRole alone lets any holder patch any Node, and with the ValidatingAdmissionPolicy every install
ships (agent/internal/nodestatus/own-node-policy.yaml: the Node's name must equal the node name bound into the pod's
ServiceAccount token, and only the agent's annotation and conditions may change) the agent reports on its own Node
and is refused on another. Every other refusal the policy makes: tests/agent/test_apiserver_confinement.py.

The agent runs with the continuous probe on (`--probe`), so it also lists every Node with its token, as a fleet's
agents do, and chooses its probe's peers from that list.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from apiserver import KUBECTL, ROOT, ApiServer, free_port
from clirun import WIRESPEED
from conftest import require

pytestmark = pytest.mark.netns

AGENT = ROOT / "agent" / "bin" / "wirespeed-agent"
NAMESPACE = "ws-agent"
PROFILE = "apitest"
BACKLOG = 32768
MTU = 9000
T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 60.0) -> T:
    """Poll until ``probe`` returns something truthy; the failure says what never happened and the last value."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {timeout:.0f} s (last: {last!r})")


@dataclass
class Agent:
    server: ApiServer
    proc: subprocess.Popen[bytes]
    kubeconfig: Path
    sysctl: Path
    link: str
    node: str
    log: Path
    listen: str  # the agent's --listen, as a URL

    def last_probe_round(self) -> dict[str, Any] | None:
        """The continuous probe's last finished round (/probe), None before the first."""
        try:
            with urllib.request.urlopen(self.listen + "/probe", timeout=5) as response:
                last: dict[str, Any] | None = json.load(response)["last_round"]
                return last
        except OSError:
            return None

    def node_object(self, name: str | None = None) -> dict[str, Any]:
        return json.loads(self.server.kubectl("get", "node", name or self.node, "-o", "json").stdout)

    def report(self) -> dict[str, Any] | None:
        raw = self.node_object()["metadata"].get("annotations", {}).get("wirespeed.io/tuning-status")
        return json.loads(raw) if raw else None

    def condition(self) -> dict[str, Any] | None:
        conditions = self.node_object().get("status", {}).get("conditions", [])
        return next((c for c in conditions if c["type"] == "NetworkTuningDegraded"), None)

    def events(self) -> list[dict[str, Any]]:
        out = self.server.kubectl(
            "get", "events", "-n", "default", f"--field-selector=involvedObject.name={self.node}", "-o", "json"
        )
        return sorted(json.loads(out.stdout)["items"], key=lambda e: e["metadata"]["creationTimestamp"])

    def mtu(self) -> int:
        return int(Path(f"/sys/class/net/{self.link}/mtu").read_text())

    def patch_as_agent(self, path: str, patch: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A strategic merge patch with the agent's token, straight to the API (kubectl would GET first)."""
        token = yaml.safe_load(self.kubeconfig.read_text())["users"][0]["user"]["token"]
        return self.server.request(
            "PATCH", path, patch, token=token, content_type="application/strategic-merge-patch+json"
        )

    def as_agent(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """kubectl with the agent's own kubeconfig (its ServiceAccount token)."""
        return subprocess.run(
            [str(KUBECTL), f"--kubeconfig={self.kubeconfig}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )


def profile_document(link: str) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "name": PROFILE,
        "description": "the API server tests: one veth, the backlog in a temporary tree",
        "interfaces": {"roles": ["virtual"], "drivers": [], "include": [link], "exclude": []},
        "rings": {},
        "sysctls": {"net.core.netdev_max_backlog": BACKLOG},
        "mtu": {"value": MTU, "drivers": ["veth"]},
    }


# The Nodes the probe lists and chooses its peers among: one per pool label (nodestatus.PoolLabels: AKS, EKS,
# Karpenter), each in its own zone; node-b's InternalIP is its second address, node-c has none (a Node the cloud
# provider has not addressed yet). InternalIPs are loopback addresses, which the agent's own probe server (bound to
# every address of this host) answers: the probe's peers are reachable without a second agent.
NODES: dict[str, dict[str, Any]] = {
    "node-a": {
        "labels": {"topology.kubernetes.io/zone": "zone-1", "kubernetes.azure.com/agentpool": "net"},
        "addresses": [{"type": "InternalIP", "address": "127.0.0.2"}, {"type": "Hostname", "address": "node-a"}],
    },
    "node-b": {
        "labels": {"topology.kubernetes.io/zone": "zone-2", "eks.amazonaws.com/nodegroup": "ng"},
        "addresses": [{"type": "ExternalIP", "address": "192.0.2.7"}, {"type": "InternalIP", "address": "127.0.0.3"}],
    },
    "node-c": {
        "labels": {"topology.kubernetes.io/zone": "zone-3", "karpenter.sh/nodepool": "kp"},
        "addresses": [{"type": "Hostname", "address": "node-c"}],
    },
}


def node(name: str) -> dict[str, Any]:
    """A Node as the tests create it; the API server keeps a Node's status as given on create (no kubelet here)."""
    labels = {"wirespeed.io/profile": PROFILE, "kubernetes.io/os": "linux", **NODES[name]["labels"]}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"addresses": NODES[name]["addresses"]},
    }


def bound_pod(name: str, node_name: str) -> dict[str, Any]:
    """A Pod of the agent's ServiceAccount on ``node_name`` (never run: no kubelet), for a token bound to it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "serviceAccountName": "wirespeed-agent",
            "nodeName": node_name,
            "containers": [{"name": "agent", "image": "registry.example/wirespeed-agent:test"}],
        },
    }


@pytest.fixture(scope="module")
def agent(apiserver: ApiServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    if not AGENT.exists():
        require(f"{AGENT.relative_to(ROOT)} is missing: `make -C agent build` (make test builds it)")
    tmp = tmp_path_factory.mktemp("agent")
    suffix = secrets.token_hex(3)
    link, peer = f"wsa{suffix}a", f"wsa{suffix}b"
    profile = tmp / "profile.json"
    profile.write_text(json.dumps(profile_document(link)))

    # The rendered install (Namespace, ServiceAccount, RBAC, the admission policy, the profile's ConfigMap and
    # DaemonSet), two Nodes and the agent's Pod on node-a (the DaemonSet controller and kubelet would make those).
    assert WIRESPEED
    rendered = subprocess.run(
        [WIRESPEED, "render", "node-tuning", "--profile", str(profile), "--namespace", NAMESPACE],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    kinds = {doc["kind"] for doc in yaml.safe_load_all(rendered)}
    assert {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "Role", "RoleBinding"} <= kinds
    apiserver.apply(rendered)
    apiserver.apply(yaml.safe_dump_all([node(name) for name in NODES]))
    apiserver.kubectl("create", "-f", "-", stdin=json.dumps(bound_pod("wirespeed-agent-a", "node-a")))
    token = apiserver.token_request(NAMESPACE, "wirespeed-agent", pod="wirespeed-agent-a")
    kubeconfig = apiserver.write_kubeconfig(tmp / "agent.kubeconfig", "wirespeed-agent", token)
    # A new ValidatingAdmissionPolicy is enforced once the API server's policy informer has it, a moment after the
    # apply returns: wait for a server-side dry run (admission runs, nothing is stored) to be refused.
    wait_for(
        "the own-node policy in force",
        lambda: subprocess.run(
            [str(KUBECTL), f"--kubeconfig={kubeconfig}", "annotate", "node", "node-b", "probe=1", "--dry-run=server"],
            capture_output=True, text=True, timeout=60,
        ).returncode != 0,
    )  # fmt: skip

    sysctl = tmp / "proc-sys" / "net" / "core" / "netdev_max_backlog"
    sysctl.parent.mkdir(parents=True)
    sysctl.write_text("1000\n")
    subprocess.run(["ip", "link", "add", link, "type", "veth", "peer", "name", peer], check=True)
    log = tmp / "agent.log"
    listen_port = free_port()
    proc = None
    try:
        subprocess.run(["ip", "link", "set", link, "up"], check=True)
        proc = subprocess.Popen(
            [
                str(AGENT),
                f"--profile={profile}",
                f"--proc-sys-root={tmp / 'proc-sys'}",
                f"--listen=127.0.0.1:{listen_port}",
                "--node-name=node-a",
                f"--kubeconfig={kubeconfig}",
                "--resync=1s",
                # The continuous probe lists the Nodes with the agent's own token, its rounds as short as allowed.
                "--probe",
                f"--probe-port={free_port()}",
                "--probe-round=5s",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log.open("wb"),
        )
        yield Agent(apiserver, proc, kubeconfig, sysctl, link, "node-a", log, f"http://127.0.0.1:{listen_port}")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        subprocess.run(["ip", "link", "del", link], check=False)


def test_the_agent_tunes_and_reports_on_its_own_node(agent):
    report = wait_for("the agent's first report on node-a", agent.report)
    assert (report["profile"], report["state"], report["reason"]) == (PROFILE, "applied", "all settings applied")
    assert report["sysctls"] == {"net.core.netdev_max_backlog": {"desired": BACKLOG, "current": BACKLOG}}
    (link,) = report["interfaces"]
    assert (link["name"], link["driver"], link["role"], link["selected"]) == (agent.link, "veth", "virtual", True)
    assert link["mtu"] == {"desired": MTU, "current": MTU}
    assert agent.mtu() == MTU
    assert int(agent.sysctl.read_text()) == BACKLOG
    condition = wait_for("the NetworkTuningDegraded condition", agent.condition)
    assert (condition["status"], condition["reason"]) == ("False", "TuningApplied")
    assert condition["message"] == f'profile "{PROFILE}": all settings applied'
    # Only the agent's own Node carries its report.
    assert "wirespeed.io/tuning-status" not in agent.node_object("node-b")["metadata"].get("annotations", {})


def _forbidden(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode != 0, out.stdout
    return out.stderr.strip()


def test_the_probe_lists_the_nodes_with_the_agents_token(agent):
    """The Node list through a real API server (JSON from its watch cache, decoded one Node at a time,
    agent/internal/nodestatus/nodes.go) gives the probe each Node's name, zone, pool and first InternalIP."""
    last = wait_for("the probe's first round", agent.last_probe_round, timeout=90)
    assert last["self"] == {"name": "node-a", "zone": "zone-1", "pool": "net", "addr": "127.0.0.2"}
    # node-c, listed without an InternalIP, cannot be dialed and is never a peer (probe.SelectPeers).
    assert last["peers"] == [{"name": "node-b", "zone": "zone-2", "pool": "ng", "addr": "127.0.0.3"}]
    assert last["report"]["round_trips"] > 0, last["report"]
    log = [json.loads(line) for line in agent.log.read_text().splitlines() if line.startswith("{")]
    assert not [entry for entry in log if "list nodes" in json.dumps(entry)], "a Node list failed"


def test_the_agents_token_has_exactly_its_service_accounts_rbac(agent):
    who = agent.as_agent("auth", "whoami", "-o", "json")
    user = json.loads(who.stdout)["status"]["userInfo"]
    assert user["username"] == f"system:serviceaccount:{NAMESPACE}:wirespeed-agent"
    assert user["extra"]["authentication.kubernetes.io/node-name"] == ["node-a"]
    assert agent.as_agent("get", "node", "node-a", "-o", "name").stdout.strip() == "node/node-a"
    # Reading Pods is granted for the SNAT attribution (the agent's informer asks for its own node's only).
    assert agent.as_agent("get", "pods", "-n", NAMESPACE, "-o", "name").returncode == 0
    # Listing Nodes is granted for the probe, which chooses its peers among them (agent/internal/nodestatus/rbac.yaml).
    assert {"node/node-a", "node/node-b"} <= set(agent.as_agent("get", "nodes", "-o", "name").stdout.split())
    user = f'User "system:serviceaccount:{NAMESPACE}:wirespeed-agent"'
    for args, message in [
        (
            ["delete", "node", "node-b"],
            f'nodes "node-b" is forbidden: {user} cannot delete resource "nodes" in API group "" at the cluster scope',
        ),
        (
            ["delete", "pod", "x", "-n", NAMESPACE],
            f'pods "x" is forbidden: {user} cannot delete resource "pods" in API group "" in the namespace '
            f'"{NAMESPACE}"',
        ),
        (
            ["get", "configmaps", "-n", NAMESPACE],
            f'configmaps is forbidden: {user} cannot list resource "configmaps" in API group "" in the namespace '
            f'"{NAMESPACE}"',
        ),
        (
            ["get", "secrets", "-n", "default"],
            f'secrets is forbidden: {user} cannot list resource "secrets" in API group "" in the namespace "default"',
        ),
    ]:
        assert _forbidden(agent.as_agent(*args)) == f"Error from server (Forbidden): {message}", args


def test_the_agent_is_refused_on_another_node(agent):
    out = agent.as_agent("annotate", "node", "node-b", "wirespeed.io/tuning-status={}")
    assert _forbidden(out) == (
        'Error from server (Forbidden): nodes "node-b" is forbidden: ValidatingAdmissionPolicy '
        "'wirespeed-agent-own-node' with binding 'wirespeed-agent-own-node' denied request: "
        "the wirespeed agent on node-a may write only Node node-a, not node-b"
    )
    condition = {"type": "NetworkTuningDegraded", "status": "True", "reason": "TuningDegraded"}
    code, status = agent.patch_as_agent("/api/v1/nodes/node-b/status", {"status": {"conditions": [condition]}})
    assert (code, status["reason"]) == (403, "Forbidden")
    assert status["message"].endswith(
        "denied request: the wirespeed agent on node-a may write only Node node-a, not node-b"
    )
    assert "NetworkTuningDegraded" not in json.dumps(agent.node_object("node-b").get("status", {}))


def test_the_agents_token_writes_events_only_in_default(agent):
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "node-a.probe"},
        "involvedObject": {"kind": "Node", "name": "node-a"},
        "reason": "Probe",
        "message": "written by the test with the agent's token",
    }
    for namespace in (NAMESPACE, "kube-system"):
        out = agent.as_agent("create", "-n", namespace, "-f", "-", stdin=json.dumps(event))
        assert _forbidden(out).endswith(
            f'events is forbidden: User "system:serviceaccount:{NAMESPACE}:wirespeed-agent" cannot create resource '
            f'"events" in API group "" in the namespace "{namespace}"'
        ), namespace


def test_rbac_alone_would_let_the_agents_role_patch_any_node(agent):
    """Why the policy exists: the same ClusterRole, held by a ServiceAccount the policy does not cover."""
    server = agent.server
    server.kubectl("create", "serviceaccount", "rbac-only", "-n", NAMESPACE)
    server.kubectl(
        "create", "clusterrolebinding", "rbac-only", "--clusterrole=wirespeed-agent",
        f"--serviceaccount={NAMESPACE}:rbac-only",
    )  # fmt: skip
    token = server.service_account_token(NAMESPACE, "rbac-only")
    kubeconfig = server.write_kubeconfig(agent.kubeconfig.with_name("rbac-only.kubeconfig"), "rbac-only", token)
    out = subprocess.run(
        [str(KUBECTL), f"--kubeconfig={kubeconfig}", "annotate", "node", "node-b", "example.com/touched=yes"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    server.kubectl("annotate", "node", "node-b", "example.com/touched-")


def _events_with(agent: Agent, reason: str) -> list[dict[str, Any]]:
    return [e for e in agent.events() if e["reason"] == reason]


def test_degraded_then_recovered_shows_on_the_node_and_as_events(agent):
    wait_for("applied", lambda: (agent.report() or {}).get("state") == "applied")
    applied_since = agent.condition()["lastTransitionTime"]  # type: ignore[index]

    agent.sysctl.write_text("not a number\n")  # what a broken host mount would show the agent
    degraded = wait_for("degraded on the node", lambda: (r := agent.report()) and r["state"] == "degraded" and r)
    assert degraded["reason"].endswith('holds "not a number": not a single integer'), degraded["reason"]
    condition = wait_for("condition True", lambda: (c := agent.condition()) and c["status"] == "True" and c)
    assert condition["reason"] == "TuningDegraded"
    assert condition["lastTransitionTime"] >= applied_since
    (event,) = wait_for("a TuningDegraded Event", lambda: _events_with(agent, "TuningDegraded"))
    assert (event["type"], event["source"]["component"], event["involvedObject"]["kind"]) == (
        "Warning", "wirespeed-agent", "Node",
    )  # fmt: skip

    agent.sysctl.write_text("1000\n")  # repaired, at the kernel default: the agent re-applies the profile
    wait_for("recovered on the node", lambda: (agent.report() or {}).get("state") == "applied")
    condition = wait_for("condition False", lambda: (c := agent.condition()) and c["status"] == "False" and c)
    assert condition["reason"] == "TuningApplied"
    (event,) = wait_for("a TuningRecovered Event", lambda: _events_with(agent, "TuningRecovered"))
    assert event["type"] == "Normal"
    assert int(agent.sysctl.read_text()) == BACKLOG


def test_api_server_restart_under_a_running_agent(agent):
    wait_for("applied", lambda: (agent.report() or {}).get("state") == "applied")
    degraded_events = len(_events_with(agent, "TuningDegraded"))
    agent.server.stop_apiserver()
    try:
        # Tuning never stops: both settings are reverted by hand while the API server is down, and re-applied.
        subprocess.run(["ip", "link", "set", agent.link, "mtu", "1500"], check=True)
        agent.sysctl.write_text("1000\n")
        wait_for("MTU re-applied with the API server down", lambda: agent.mtu() == MTU)
        # The stand-in sysctl is a regular file, which the agent's write truncates first (a /proc/sys file is
        # written whole): a read between the two sees "", which is "not yet", as any other value is.
        wait_for(
            "backlog re-applied with the API server down",
            lambda: agent.sysctl.read_text().strip() == str(BACKLOG),
        )
        # A change the API server has not heard about yet: the report after the restart must carry it.
        agent.sysctl.write_text("garbage\n")
        time.sleep(2)  # at least one resync fails to report
        assert agent.proc.poll() is None, agent.log.read_text()[-2000:]
    finally:
        agent.server.start_apiserver()
        agent.server.wait_ready()
    wait_for("reporting resumed: degraded", lambda: (agent.report() or {}).get("state") == "degraded", timeout=120)
    wait_for(
        "the new TuningDegraded Event",
        lambda: len(_events_with(agent, "TuningDegraded")) > degraded_events,
        timeout=120,
    )
    agent.sysctl.write_text("1000\n")
    wait_for("recovered after the restart", lambda: (agent.report() or {}).get("state") == "applied")
    log = [json.loads(line) for line in agent.log.read_text().splitlines() if line.startswith("{")]
    assert any("unreachable" in json.dumps(entry) for entry in log), "the outage was logged"
    assert os.path.exists(f"/sys/class/net/{agent.link}")
