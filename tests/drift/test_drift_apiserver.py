"""`wirespeed drift` against a real kube-apiserver (tests/apiserver.py): Nodes in every state, the profile
ConfigMaps from the rendered manifests, through the installed console script as users run it.

The annotations here are written by the test in the agent's exact format (agent/internal/nodestatus, the JSON
its annotation_test.go pins); tests/agent/test_apiserver_agent.py has the real agent write them.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from apiserver import ApiServer, free_port, kubeconfig
from builtin_profiles import THROUGHPUT_BACKLOG, THROUGHPUT_RX
from clirun import WIRESPEED, invoke
from test_cli_json_keys import DOCUMENTED
from wirespeed.drift import cluster

NAMESPACE = "ws-drift"
SELECTOR = "wirespeed-test=drift"


RX = THROUGHPUT_RX["mlx5_core"]


def status(when: datetime, rx_current: int = RX, backlog: int = THROUGHPUT_BACKLOG, state: str = "applied") -> str:
    return json.dumps(
        {
            "profile": "throughput",
            "state": state,
            "reason": "all settings applied" if state == "applied" else "1 problem(s): eth1: operation not permitted",
            "interfaces": [
                {"name": "enP1s1", "index": 7, "driver": "mlx5_core", "role": "sriov-vf", "selected": True,
                 "reason": "enslaved to eth0", "rx": {"desired": RX, "current": rx_current, "max": 8192}},
            ],
            "sysctls": {"net.core.netdev_max_backlog": {"desired": THROUGHPUT_BACKLOG, "current": backlog}},
            "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        separators=(",", ":"),
    )  # fmt: skip


def node(name: str, profile: str | None, annotation: str | None) -> dict[str, Any]:
    labels = {"wirespeed-test": "drift"}
    if profile is not None:
        labels["wirespeed.io/profile"] = profile
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if annotation is not None:
        meta["annotations"] = {"wirespeed.io/tuning-status": annotation}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta}


# name -> (state, finding kinds) that `wirespeed drift` must report.
EXPECTED = {
    "drift-tuned": ("tuned", []),
    "drift-ring-reverted": ("drifted", ["ring-reverted"]),
    "drift-backlog-changed": ("drifted", ["backlog-changed"]),
    "drift-no-status": ("drifted", ["agent-missing"]),
    "drift-stale": ("drifted", ["stale"]),
    "drift-degraded": ("drifted", ["degraded"]),
    "drift-no-profile": ("drifted", ["unknown-profile", "other-profile"]),
    "drift-unmanaged": ("unmanaged", []),
}


@pytest.fixture(scope="module")
def cluster_with_nodes(apiserver: ApiServer) -> ApiServer:
    assert WIRESPEED
    rendered = subprocess.run(
        [WIRESPEED, "render", "node-tuning", "--profile", "throughput", "--namespace", NAMESPACE],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    apiserver.apply(rendered)
    now = datetime.now(UTC)
    nodes = [
        node("drift-tuned", "throughput", status(now)),
        node("drift-ring-reverted", "throughput", status(now, rx_current=1024)),
        node("drift-backlog-changed", "throughput", status(now, backlog=1000)),
        node("drift-no-status", "throughput", None),
        node("drift-stale", "throughput", status(now - timedelta(hours=2))),
        node("drift-degraded", "throughput", status(now)),
        node("drift-no-profile", "latency", status(now)),
        node("drift-unmanaged", None, None),
    ]
    apiserver.apply(yaml.safe_dump_all(nodes))
    condition = {"type": "NetworkTuningDegraded", "status": "True", "reason": "TuningDegraded",
                 "message": 'profile "throughput": 1 problem(s): eth1: operation not permitted'}  # fmt: skip
    apiserver.kubectl(
        "patch", "node", "drift-degraded", "--subresource=status", "--type=strategic",
        "-p", json.dumps({"status": {"conditions": [condition]}}),
    )  # fmt: skip
    return apiserver


def drift(*args: str) -> subprocess.CompletedProcess[str]:
    assert WIRESPEED
    return subprocess.run([WIRESPEED, "drift", *args], capture_output=True, text=True, timeout=120, check=False)


def test_drift_lists_every_drifted_node_with_its_findings(cluster_with_nodes):
    out = drift("--kubeconfig", str(cluster_with_nodes.admin_kubeconfig), "--selector", SELECTOR, "--json")
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    found = {n["name"]: (n["state"], [f["kind"] for f in n["findings"]]) for n in data["nodes"]}
    assert found == EXPECTED
    assert (data["total"], data["tuned"], data["drifted"], data["pressure"], data["unmanaged"]) == (8, 1, 6, 0, 1)
    stale = next(n for n in data["nodes"] if n["name"] == "drift-stale")
    assert stale["findings"][0]["message"].endswith("(120 min ago)")


def test_drift_prose_names_the_drifted_nodes_and_a_summary(cluster_with_nodes):
    out = drift("--kubeconfig", str(cluster_with_nodes.admin_kubeconfig), "--selector", SELECTOR)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert "drift-ring-reverted (profile throughput): drifted" in lines
    assert f"  ring-reverted: enP1s1 (mlx5_core) rx ring is 1024, the profile needs {RX}" in lines
    assert f"  backlog-changed: net.core.netdev_max_backlog is 1000, the profile sets {THROUGHPUT_BACKLOG}" in lines
    assert "  unknown-profile: label wirespeed.io/profile=latency names no profile ConfigMap" in lines
    assert '  degraded: profile "throughput": 1 problem(s): eth1: operation not permitted' in lines
    assert "drift-tuned (profile throughput): drifted" not in lines
    assert lines[-1] == (
        "8 nodes: 1 tuned, 6 drifted, 1 without a wirespeed.io/profile label (unknown-profile 1, agent-missing 1, "
        "stale 1, other-profile 1, degraded 1, ring-reverted 1, backlog-changed 1)"
    )


def test_drift_exits_0_when_every_selected_node_is_tuned(cluster_with_nodes):
    out = drift(
        "--kubeconfig", str(cluster_with_nodes.admin_kubeconfig), "--selector", f"{SELECTOR},!wirespeed.io/profile"
    )
    assert (out.returncode, out.stdout) == (0, "1 nodes: 0 tuned, 0 drifted, 1 without a wirespeed.io/profile label\n")
    ok = drift("--kubeconfig", str(cluster_with_nodes.admin_kubeconfig), "--selector", "kubernetes.io/hostname=none")
    assert ok.returncode == 0


def test_drift_reads_every_page_of_a_paginated_list(cluster_with_nodes, monkeypatch):
    """Three nodes a page: the same answer as one page, so the continue token is followed to the end."""
    monkeypatch.setattr(cluster, "PAGE_SIZE", 3)
    seen: list[str] = []
    real = cluster._get_pages

    def counting(api, target, path, query):
        for item in real(api, target, path, query):
            seen.append(path)
            yield item

    monkeypatch.setattr(cluster, "_get_pages", counting)
    out = invoke("drift", "--kubeconfig", str(cluster_with_nodes.admin_kubeconfig), "--selector", SELECTOR, "--json")
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert {n["name"]: (n["state"], [f["kind"] for f in n["findings"]]) for n in data["nodes"]} == EXPECTED
    assert seen.count("/api/v1/nodes") == 8


SNAT_NAMESPACE = "ws-drift-snat"
SNAT_SELECTOR = "wirespeed-test=drift-snat"
PRESSURE_MESSAGE = "52.1.2.3:443/tcp uses 3,300 of 4,096 ports (81%, threshold 80%)"


def snat_status(when: datetime, snat: dict[str, Any] | None) -> str:
    doc = json.loads(status(when))
    doc["profile"] = "egress"
    if snat is not None:
        doc["snat"] = snat
    return json.dumps(doc, separators=(",", ":"))


# The pressed destination's top workloads as the agent's annotation names them (status.SNATWorkload).
SPENDERS = [
    {"namespace": "checkout", "workload": "payments-api", "kind": "Deployment", "destination": "52.1.2.3:443/tcp",
     "ports_in_use": 2410},
    {"namespace": "batch", "workload": "export", "kind": "CronJob", "destination": "52.1.2.3:443/tcp",
     "ports_in_use": 890},
]  # fmt: skip


def snat(max_ports: int, pressure: bool) -> dict[str, Any]:
    return {"top": [{"destination": "52.1.2.3:443/tcp", "ports_in_use": max_ports}], "max": max_ports,
            "peak": max_ports, "capacity": 4096, "pressure": pressure, "conntrack_entries": max_ports + 40}  # fmt: skip


@pytest.fixture(scope="module")
def cluster_with_snat(apiserver: ApiServer, tmp_path_factory: pytest.TempPathFactory) -> ApiServer:
    """Nodes labelled with a profile whose outbound section the agent watches (4,096 ports per node behind an AKS
    load balancer), with the SNATPortPressure condition and the report's `snat` object as the agent writes them."""
    assert WIRESPEED
    profile = tmp_path_factory.mktemp("egress") / "egress.json"
    profile.write_text(json.dumps({"name": "egress", "sysctls": {"net.core.netdev_max_backlog": 32768}}))
    rendered = subprocess.run(
        [WIRESPEED, "render", "node-tuning", "--profile", str(profile), "--namespace", SNAT_NAMESPACE,
         "--outbound", "azure-load-balancer", "--allocated-ports", "4096"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    apiserver.apply(rendered)
    now = datetime.now(UTC)
    nodes = [
        node("snat-pressure", "egress", snat_status(now, snat(3300, True) | {"workloads": SPENDERS})),
        node("snat-relieved", "egress", snat_status(now, snat(1200, False))),
        node("snat-unmeasured", "egress", snat_status(now, None)),
    ]
    for n in nodes:
        n["metadata"]["labels"]["wirespeed-test"] = "drift-snat"
    apiserver.apply(yaml.safe_dump_all(nodes))
    conditions = {
        "snat-pressure": {"type": "SNATPortPressure", "status": "True", "reason": "PortsNearCapacity",
                          "message": PRESSURE_MESSAGE},
        "snat-relieved": {"type": "SNATPortPressure", "status": "False", "reason": "PortsWithinCapacity",
                          "message": "52.1.2.3:443/tcp uses 1,200 of 4,096 ports (29%, threshold 80%)"},
    }  # fmt: skip
    for name, condition in conditions.items():
        apiserver.kubectl(
            "patch", "node", name, "--subresource=status", "--type=strategic",
            "-p", json.dumps({"status": {"conditions": [condition]}}),
        )  # fmt: skip
    return apiserver


def test_drift_reports_snat_port_pressure_with_destination_and_numbers(cluster_with_snat):
    out = drift("--kubeconfig", str(cluster_with_snat.admin_kubeconfig), "--selector", SNAT_SELECTOR, "--json")
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    found = {n["name"]: (n["state"], [(f["kind"], f["message"]) for f in n["findings"]]) for n in data["nodes"]}
    assert found["snat-pressure"] == ("pressure", [("snat-pressure", PRESSURE_MESSAGE)])
    assert found["snat-relieved"] == ("tuned", [])
    assert found["snat-unmeasured"][0] == "drifted"
    assert [kind for kind, _ in found["snat-unmeasured"][1]] == ["snat-unmeasured"]
    assert (data["tuned"], data["drifted"], data["pressure"]) == (1, 1, 1)
    pressed = next(n for n in data["nodes"] if n["name"] == "snat-pressure")
    assert pressed["snat"] == snat(3300, True) | {"workloads": SPENDERS}


def test_drift_prose_names_the_node_under_pressure(cluster_with_snat):
    out = drift("--kubeconfig", str(cluster_with_snat.admin_kubeconfig), "--selector", SNAT_SELECTOR)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert "snat-pressure (profile egress): under SNAT port pressure" in lines
    assert f"  snat-pressure: {PRESSURE_MESSAGE}" in lines
    assert (
        "  top workloads to 52.1.2.3:443/tcp: checkout/payments-api (Deployment) 2,410 ports, "
        "batch/export (CronJob) 890" in lines
    )
    assert lines[-1] == (
        "3 nodes: 1 tuned, 1 drifted, 1 under SNAT port pressure, 0 without a wirespeed.io/profile label "
        "(snat-unmeasured 1, snat-pressure 1)"
    )


def test_drift_exits_0_when_no_node_is_under_pressure(cluster_with_snat):
    out = drift("--kubeconfig", str(cluster_with_snat.admin_kubeconfig), "--selector", SNAT_SELECTOR, "--json")
    names = [n["name"] for n in json.loads(out.stdout)["nodes"]]
    assert "snat-relieved" in names
    cluster_with_snat.kubectl("label", "node", "snat-relieved", "wirespeed-test-calm=yes")
    calm = drift("--kubeconfig", str(cluster_with_snat.admin_kubeconfig), "--selector", "wirespeed-test-calm=yes")
    assert (calm.returncode, calm.stdout) == (
        0,
        "1 nodes: 1 tuned, 0 drifted, 0 without a wirespeed.io/profile label\n",
    )


def test_drift_json_keys_are_the_documented_ones(cluster_with_nodes):
    """docs/cli-json.md's `wirespeed drift --json` section (tests/cli/test_cli_json_keys.py parses it; drift needs a
    cluster, so its sample runs here)."""
    keys, nested = DOCUMENTED["drift"]
    out = drift("--kubeconfig", str(cluster_with_nodes.admin_kubeconfig), "--selector", SELECTOR, "--json")
    data = json.loads(out.stdout)
    assert set(data) == keys
    assert nested == {"nodes": frozenset({"name", "profile", "state", "findings", "snat"})}
    assert all(set(n) == nested["nodes"] for n in data["nodes"])
    assert all(set(f) == {"kind", "message"} for n in data["nodes"] for f in n["findings"])


def test_an_unreachable_cluster_is_exit_2_in_one_line(tmp_path, apiserver):
    port = free_port()  # nothing listens there
    path = tmp_path / "closed.kubeconfig"
    path.write_text(json.dumps(kubeconfig(f"https://127.0.0.1:{port}", apiserver.ca_pem, "u", "t")))
    out = drift("--kubeconfig", str(path))
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.startswith(
        f"error: --kubeconfig {path}: cannot reach the cluster at https://127.0.0.1:{port}: "
    ), out.stderr
    assert "Connection refused" in out.stderr
    assert out.stderr.count("\n") == 1


def test_a_token_without_rbac_is_exit_2_naming_what_was_refused(tmp_path, apiserver):
    apiserver.kubectl("create", "serviceaccount", "no-rights", "-n", "default", check=False)
    path = apiserver.write_kubeconfig(
        tmp_path / "no-rights.kubeconfig", "no-rights", apiserver.service_account_token("default", "no-rights")
    )
    out = drift("--kubeconfig", str(path), "--context", "wirespeed-test")
    assert out.returncode == 2
    assert out.stderr == (
        f"error: --kubeconfig {path} --context wirespeed-test: GET /api/v1/configmaps: 403 configmaps is forbidden: "
        'User "system:serviceaccount:default:no-rights" cannot list resource "configmaps" in API group "" at the '
        "cluster scope\n"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("{", "not a usable kubeconfig: ", id="not-yaml"),
        pytest.param(
            "{}", "not a usable kubeconfig: Invalid kube-config file. Expected key current-context", id="empty"
        ),
        pytest.param(
            json.dumps(kubeconfig("https://127.0.0.1:1", b"", "u", "t")).replace('"wirespeed-test"', '"other"', 1),
            "not a usable kubeconfig: ",
            id="context-points-nowhere",
        ),
    ],
)
def test_a_bad_kubeconfig_is_exit_2_in_one_line(tmp_path, content, message):
    path = tmp_path / "bad.kubeconfig"
    path.write_text(content)
    out = invoke("drift", "--kubeconfig", str(path))
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: --kubeconfig {path}: {message}"), out.stderr
    assert out.stderr.count("\n") == 1


def test_an_unknown_context_is_exit_2_naming_it(tmp_path, apiserver):
    out = invoke("drift", "--kubeconfig", str(apiserver.admin_kubeconfig), "--context", "nope")
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: --kubeconfig {apiserver.admin_kubeconfig} --context nope: "), out.stderr


def exec_kubeconfig(apiserver: ApiServer, command: str, args: list[str]) -> dict[str, Any]:
    """A kubeconfig whose user gets its token from an exec credential plugin, as kubelogin and
    `aws eks get-token` users have."""
    doc = kubeconfig(apiserver.url, apiserver.ca_pem, "exec-user", "unused")
    doc["users"] = [
        {
            "name": "exec-user",
            "user": {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": command,
                    "args": args,
                    "interactiveMode": "Never",
                }
            },
        }
    ]
    return doc


def test_drift_gets_its_token_from_an_exec_credential_plugin(cluster_with_nodes, tmp_path):
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": cluster_with_nodes.admin_token},
    }
    plugin = tmp_path / "credential.json"
    plugin.write_text(json.dumps(credential))
    path = tmp_path / "exec.kubeconfig"
    path.write_text(json.dumps(exec_kubeconfig(cluster_with_nodes, "cat", [str(plugin)])))
    out = drift("--kubeconfig", str(path), "--selector", SELECTOR, "--json")
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout)["total"] == len(EXPECTED)


def test_a_failing_exec_credential_plugin_is_exit_2_in_one_line(apiserver, tmp_path):
    path = tmp_path / "exec.kubeconfig"
    path.write_text(json.dumps(exec_kubeconfig(apiserver, "false", [])))
    out = drift("--kubeconfig", str(path))
    assert (out.returncode, out.stderr) == (
        2,
        f"error: --kubeconfig {path}: the credential plugin failed: exec: process returned 1\n",
    )


def test_a_kubeconfig_nested_past_the_recursion_limit_is_exit_2(tmp_path):
    from wirespeed.yaml_input import YAML_DEPTH_LIMIT

    path = tmp_path / "deep.kubeconfig"
    path.write_text("[" * 100_000)
    out = invoke("drift", "--kubeconfig", str(path))
    assert (out.returncode, out.stderr) == (
        2,
        f"error: --kubeconfig {path}: not a usable kubeconfig: {path}: line 1: nests deeper than the "
        f"{YAML_DEPTH_LIMIT} levels a YAML file may have; flatten it\n",
    )
