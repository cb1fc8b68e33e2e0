# ruff: noqa: F811  (the `snatlab` fixture is imported from tests/snat_lab.py and taken as a parameter)
"""`wirespeed size ... --from-prometheus --by-workload` against the real agent: it counts real conntrack flows in the
lab's node namespace (tests/snat_lab.py), names their workloads from real Pod and ReplicaSet objects on a real
kube-apiserver (tests/apiserver.py), and a real Prometheus scrapes it.

The lab's pod namespace (10.244.1.10, masqueraded by the node) is a Pod of checkout/payments-api: a ReplicaSet
owned by a Deployment, as a Deployment's pods are. Its Pod object is written by the test (no kubelet here): on the
lab's node, Running, podIP the lab's pod address, hostIP the node's, started a minute ago. The node's own flows are
the node's (``kind="node"``: its address is a pod's hostIP). Flows: 10 from the pod and 2 from the node to
192.0.2.10:443, 3 from the node to 198.51.100.20:443.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from apiserver import ApiServer
from clirun import WIRESPEED
from conftest import require
from snat_lab import (
    NODE_IP,
    POD,
    PROMETHEUS,
    A,
    B,
    Lab,
    NetnsRelay,
    series,
    snatlab,  # noqa: F401 (the pytest fixture)
    wait_for,
)
from test_apiserver_snat import PROFILE, ZONE, kubeconfig_for_node

pytestmark = pytest.mark.netns

WORKLOAD_NS, DEPLOYMENT, REPLICASET, POD_NAME = (
    "checkout",
    "payments-api",
    "payments-api-7d9f8",
    "payments-api-7d9f8-x2k4q",
)
NODE = "snat-node-by-workload"  # not test_apiserver_snat's node: the API server is shared by the session
FROM_POD, FROM_NODE_A, FROM_NODE_B = 10, 2, 3
BY_WORKLOAD = "wirespeed_agent_snat_ports_in_use_by_workload"


def create_workload_pod(server: ApiServer) -> None:
    """The namespace, its default ServiceAccount (no controller-manager makes it), the ReplicaSet owned by the
    Deployment, and the Pod owned by the ReplicaSet, with the status a kubelet would write."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": WORKLOAD_NS}}
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": WORKLOAD_NS}}
    labels = {"app": DEPLOYMENT}
    template = {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "api", "image": "registry.example/api:1"}]},
    }
    replicaset = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": REPLICASET,
            "namespace": WORKLOAD_NS,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": DEPLOYMENT,
                                 "uid": "0f4c6d0e-0000-4000-8000-000000000001", "controller": True}],
        },
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": template},
    }  # fmt: skip
    for manifest in (namespace, account, replicaset):
        server.kubectl("create", "-f", "-", stdin=json.dumps(manifest))
    uid = json.loads(server.kubectl("get", "replicaset", REPLICASET, "-n", WORKLOAD_NS, "-o", "json").stdout)[
        "metadata"
    ]["uid"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": POD_NAME,
            "namespace": WORKLOAD_NS,
            "labels": labels,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": REPLICASET, "uid": uid,
                                 "controller": True}],
        },
        "spec": {"nodeName": NODE, **template["spec"]},
    }  # fmt: skip
    server.kubectl("create", "-f", "-", stdin=json.dumps(pod))
    started = datetime.fromtimestamp(time.time() - 60, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    status = {"status": {"phase": "Running", "podIP": POD, "podIPs": [{"ip": POD}], "hostIP": NODE_IP,
                         "hostIPs": [{"ip": NODE_IP}], "startTime": started}}  # fmt: skip
    server.kubectl("patch", "pod", POD_NAME, "-n", WORKLOAD_NS, "--subresource=status", "--type=merge", "-p",
                   json.dumps(status))  # fmt: skip


def size(lb: Lab, *args: str) -> dict[str, Any]:
    """`wirespeed size ... --by-workload --json` in the node namespace, against the Prometheus there."""
    assert WIRESPEED
    out = lb.exec(lb.node, WIRESPEED, "size", *args, "--from-prometheus", "http://127.0.0.1:9090", "--by-workload",
                  "--json", timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def rows(found: dict[str, Any]) -> list[tuple[str, str, str, str, int]]:
    return [(w["namespace"], w["workload"], w["kind"], w["destination"], w["ports"]) for w in found["workloads"]]


def test_by_workload_names_the_real_agent_s_workloads(apiserver: ApiServer, snatlab: Lab) -> None:
    if not PROMETHEUS.exists():
        require(f"{PROMETHEUS} is missing: ./scripts/install-system-deps.sh installs Debian's prometheus")
    lb = snatlab
    kubeconfig = kubeconfig_for_node(apiserver, lb.tmp, NODE)
    create_workload_pod(apiserver)
    relay = NetnsRelay(lb.node, apiserver.port)
    try:
        agent = lb.agent(PROFILE, f"--kubeconfig={kubeconfig}", f"--node-name={NODE}", "--snat-hold=600s")
        lb.client(lb.pod, "pod-client").do("tcp", A, 443, FROM_POD)
        node = lb.client(lb.node, "node-client")
        node.do("tcp", A, 443, FROM_NODE_A)
        node.do("tcp", B, 443, FROM_NODE_B)
        to_a, to_b = f"{A}:443/tcp", f"{B}:443/tcp"
        want = {
            series(BY_WORKLOAD, destination=to_a, kind="Deployment", namespace=WORKLOAD_NS,
                   workload=DEPLOYMENT): FROM_POD,
            series(BY_WORKLOAD, destination=to_a, kind="node", namespace="", workload=NODE): FROM_NODE_A,
            series(BY_WORKLOAD, destination=to_b, kind="node", namespace="", workload=NODE): FROM_NODE_B,
        }  # fmt: skip
        try:
            wait_for("the agent's per-workload counts", lambda: (m := lb.metrics()) and all(
                m.get(k) == v for k, v in want.items()) and m, timeout=120)  # fmt: skip
        except AssertionError as exc:  # say what the agent did export
            seen = {k: v for k, v in (lb.metrics() or {}).items() if BY_WORKLOAD in k}
            raise AssertionError(f"{exc}; the agent's rows: {seen}; its log: {agent.tail()}") from None
        lb.prometheus(["127.0.0.1:9808"])
        wait_for("Prometheus has the rows", lambda: len(lb.query(f"{BY_WORKLOAD} > 0")) == 3, timeout=60)
        lb.wait_scraped("wirespeed_agent_snat_ports_in_use")

        azure_lb = size(lb, "azure-lb", "--pool", "5")["measured_peak"]["prometheus"]
        assert (azure_lb["peak"]["value"], azure_lb["peak"]["destination"]) == (FROM_POD + FROM_NODE_A, to_a)
        found = azure_lb["by_workload"]
        assert rows(found) == [(WORKLOAD_NS, DEPLOYMENT, "Deployment", to_a, FROM_POD), ("", NODE, "node", to_a, 2)]
        assert (found["peak"], found["unnamed_ports"], found["allocation"]) == (12, 0, 1_024)

        nat = size(lb, "azure-natgw", "--step", "1s")["measured"]
        assert nat["binding"] == "ports"
        assert rows(nat["prometheus"]["by_workload"]) == [
            (WORKLOAD_NS, DEPLOYMENT, "Deployment", to_a, FROM_POD),
            ("", NODE, "node", to_b, FROM_NODE_B),
            ("", NODE, "node", to_a, FROM_NODE_A),
        ]

        aws = size(lb, "aws-natgw", "--step", "1s")["prometheus"]["by_workload"]
        assert sorted(aws) == [ZONE]  # the by-workload series joined to the Node's zone through ports_in_use
        assert rows(aws[ZONE]) == [(WORKLOAD_NS, DEPLOYMENT, "Deployment", to_a, FROM_POD), ("", NODE, "node", to_a, 2)]
    finally:
        relay.close()
