# ruff: noqa: F811  (the `snatlab` fixture is imported from tests/snat_lab.py and taken as a parameter)
"""SNATPortPressure against a real kube-apiserver (tests/apiserver.py): the agent, counting real conntrack flows in
the lab's node namespace (tests/snat_lab.py), sets the condition and its Event when one destination passes the
profile's threshold, clears it when the flows are gone, and writes the annotation's ``snat`` object, all with
exactly the RBAC its ServiceAccount gets from the rendered manifests and under the own-node admission policy.

The API server listens on the host's loopback; the agent runs in the lab's node namespace (conntrack is per
namespace) and reaches it through a relay listening on the same address inside that namespace.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver import ApiServer
from clirun import WIRESPEED
from snat_lab import (
    A,
    Lab,
    NetnsRelay,
    series,
    snatlab,  # noqa: F401 (the pytest fixture)
    wait_for,
)
from test_apiserver_agent import NAMESPACE, bound_pod

pytestmark = pytest.mark.netns

NODE = "snat-node"
ZONE = "lab-zone-1"
PORTS, PERCENT = 16, 50  # pressure from 8 flows to one destination
PROFILE: dict[str, Any] = {
    "name": "snat-pressure",
    "interfaces": {"roles": ["virtual"], "include": ["no-such-link*"], "exclude": []},
    "outbound": {"kind": "azure-load-balancer", "allocated_ports_per_node": PORTS, "pressure_percent": PERCENT},
}


def kubeconfig_for_node(server: ApiServer, tmp: Path, node_name: str = NODE) -> Path:
    """The rendered install for this profile, the own-node policy, the Node ``node_name`` (with its zone) and a token
    bound to a Pod of the agent's ServiceAccount on it: what the DaemonSet's pod would hold."""
    profile = tmp / "profile.json"
    profile.write_text(json.dumps(PROFILE))
    assert WIRESPEED
    rendered = subprocess.run(
        [WIRESPEED, "render", "node-tuning", "--profile", str(profile), "--namespace", NAMESPACE],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    server.apply(rendered)  # the install carries the admission policy that confines the agent to its own Node
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node_name, "labels": {"topology.kubernetes.io/zone": ZONE}}}  # fmt: skip
    server.apply(yaml.safe_dump(node))
    pod = f"wirespeed-agent-{node_name}"
    server.kubectl("create", "-f", "-", stdin=json.dumps(bound_pod(pod, node_name)))
    token = server.token_request(NAMESPACE, "wirespeed-agent", pod=pod)
    return server.write_kubeconfig(tmp / "agent.kubeconfig", "wirespeed-agent", token)


def snat_condition(server: ApiServer) -> dict[str, Any] | None:
    node = json.loads(server.kubectl("get", "node", NODE, "-o", "json").stdout)
    return next((c for c in node.get("status", {}).get("conditions", []) if c["type"] == "SNATPortPressure"), None)


def annotation(server: ApiServer) -> dict[str, Any] | None:
    node = json.loads(server.kubectl("get", "node", NODE, "-o", "json").stdout)
    raw = node["metadata"].get("annotations", {}).get("wirespeed.io/tuning-status")
    return json.loads(raw) if raw else None


def events(server: ApiServer, reason: str) -> list[dict[str, Any]]:
    out = server.kubectl("get", "events", "-n", "default", f"--field-selector=involvedObject.name={NODE}", "-o", "json")
    return [e for e in json.loads(out.stdout)["items"] if e["reason"] == reason]


def test_snat_port_pressure_is_set_and_cleared_on_the_node(apiserver: ApiServer, snatlab: Lab) -> None:
    lb = snatlab
    kubeconfig = kubeconfig_for_node(apiserver, lb.tmp)
    relay = NetnsRelay(lb.node, apiserver.port)
    try:
        lb.agent(
            PROFILE, f"--kubeconfig={kubeconfig}", f"--node-name={NODE}", "--snat-hold=1s",
            "--snat-pressure-clear-after=1s",
        )  # fmt: skip
        quiet = wait_for("SNATPortPressure False", lambda: snat_condition(apiserver), timeout=120)
        assert (quiet["status"], quiet["reason"]) == ("False", "PortsWithinCapacity")
        assert quiet["message"] == (
            f"no outbound flows to destinations outside the cluster (capacity {PORTS} ports per destination, "
            f"threshold {PERCENT}%)"
        )

        pod = lb.client(lb.pod, "pod-client")
        pod.do("tcp", A, 443, 10)
        busy = wait_for(
            "SNATPortPressure True", lambda: (c := snat_condition(apiserver)) and c["status"] == "True" and c
        )
        assert busy["reason"] == "PortsNearCapacity"
        # Written the second the 8th flow (50 % of 16) was counted; the numbers in it are not rewritten until the
        # heartbeat, so it says 8, 9 or 10 depending on how far the connects had got.
        # The flows come from a namespace no Pod object holds, so the spender is named as unknown, with its count.
        pattern = (
            rf"{re.escape(A)}:443/tcp uses (\d+) of {PORTS} ports \((\d+)%, threshold {PERCENT}%\); "
            rf"unknown \(no pod on this node held the address\) holds \1 of {PORTS} ports to {re.escape(A)}:443/tcp"
        )
        used = re.fullmatch(pattern, busy["message"])
        assert used, busy["message"]
        n = int(used[1])
        assert 8 <= n <= 10
        assert int(used[2]) == -(-n * 100 // PORTS)  # rounded up at or above the threshold
        (event,) = wait_for("a SNATPortPressure Event", lambda: events(apiserver, "SNATPortPressure"))
        assert (event["type"], event["message"], event["source"]["component"]) == (
            "Warning", busy["message"], "wirespeed-agent",
        )  # fmt: skip
        snat = wait_for("the annotation's snat object", lambda: (a := annotation(apiserver)) and a.get("snat"))
        assert snat["pressure"] is True
        assert (snat["kind"], snat["capacity"], snat["threshold_percent"]) == ("azure-load-balancer", PORTS, PERCENT)
        assert snat["max"] == n  # written with the condition, in the same attempt
        assert snat["top"] == [{"destination": f"{A}:443/tcp", "ports_in_use": n}]
        assert snat["message"] == busy["message"]
        # The zone label came from the Node, read with the agent's own token.
        metrics = wait_for("zone on the metrics", lambda: (m := lb.metrics()) and series(
            "wirespeed_agent_snat_ports_peak", zone=ZONE) in m and m)  # fmt: skip
        assert metrics[series("wirespeed_agent_snat_ports_in_use", destination=f"{A}:443/tcp", zone=ZONE)] == 10
        assert metrics[series("wirespeed_agent_snat_allocated_ports", kind="azure-load-balancer", zone=ZONE)] == PORTS

        pod.do("close", A, 443, 10)
        clear = wait_for(
            "SNATPortPressure False again",
            lambda: (lb.dump(), c := snat_condition(apiserver)) and c and c["status"] == "False" and c,  # type: ignore[func-returns-value]
            timeout=120,
        )
        assert clear["reason"] == "PortsWithinCapacity"
        (relieved,) = wait_for(
            "a SNATPortPressureRelieved Event", lambda: events(apiserver, "SNATPortPressureRelieved")
        )
        assert relieved["type"] == "Normal"
        assert len(events(apiserver, "SNATPortPressure")) == 1  # one transition, one Warning
    finally:
        relay.close()
