# ruff: noqa: F811  (the `engine` and `terraform` fixtures are imported and taken as parameters)
"""The agent's confinement is the same whichever way wirespeed is installed.

Three install paths, each run for real as far as it can run here: ``wirespeed render node-tuning`` (the console
script, YAML for ``kubectl apply`` and JSON for modules/node-tuning's objects_json), the ``NodeTuning`` Pulumi
component (the real SDKs under Pulumi's mocks: the Pulumi CLI and the kubernetes provider plugin cannot be obtained
here) and ``modules/node-tuning`` (the real terraform binary computing the objects main.tf hands to
kubernetes_manifest: the kubernetes provider plugin cannot be obtained either). For the same install all three give
the same ServiceAccount, RBAC and admission policy, and those are the agent's own files
(agent/internal/nodestatus/own-node-policy.yaml and rbac.yaml) with only names, labels and the subject's namespace
added. Every program that installs NodeTuning (the AKS cluster component, the root program, the examples; their
plans are the golden files tests/program/test_plan_program_golden.py regenerates) ships the same objects.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from clirun import WIRESPEED
from pulumi_engine import Recorder, engine, resolve  # noqa: F401 (engine is a fixture)
from test_terraform_node_tuning_apiserver import pure_harness, terraform, terraform_objects  # noqa: F401
from wirespeed.kubernetes import NodeTuning, NodeTuningArgs

ROOT = Path(__file__).resolve().parents[2]
AGENT_POLICY = ROOT / "agent" / "internal" / "nodestatus" / "own-node-policy.yaml"
AGENT_RBAC = ROOT / "agent" / "internal" / "nodestatus" / "rbac.yaml"
PLAN_GOLDEN = ROOT / "tests" / "golden" / "plan"
POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
ACCESS_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", *POLICY_KINDS)

Obj = dict[str, Any]

# (render flags, NodeTuningArgs keywords, modules/node-tuning inputs) for one install; the namespace the agent's
# ServiceAccount lives in.
CASES: dict[str, tuple[list[str], dict[str, Any], dict[str, Any], str]] = {
    "defaults": ([], {}, {}, "wirespeed-system"),
    "two-profiles-own-namespace": (
        ["--profile", "throughput", "--profile", "balanced", "--namespace", "net-tuning"],
        {"profiles": ["throughput", "balanced"], "namespace": "net-tuning"},
        {"profiles": ["throughput", "balanced"], "namespace": "net-tuning"},
        "net-tuning",
    ),
    "older-cluster-without-the-policy": (
        ["--no-admission-policy"],
        {"admission_policy": False},
        {"admission_policy": False},
        "wirespeed-system",
    ),
}


def access(objects: list[Obj]) -> dict[tuple[str, str], Obj]:
    """The agent's ServiceAccount, RBAC and admission policy among ``objects``, by kind and name."""
    return {(o["kind"], o["metadata"]["name"]): o for o in objects if o["kind"] in ACCESS_KINDS}


def rendered(flags: list[str], output: str) -> list[Obj]:
    assert WIRESPEED, "the wirespeed console script is not installed (pip install -e .)"
    done = subprocess.run(
        [WIRESPEED, "render", "node-tuning", *flags, "--output", output], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    if output == "json":
        objects: list[Obj] = json.loads(done.stdout)
        return objects
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def registered(recorder: Recorder, kwargs: dict[str, Any]) -> list[Obj]:
    resolve(NodeTuning("nt", NodeTuningArgs(**kwargs)).daemon_set_names)
    return [r.inputs for r in recorder.registered if r.type != "wirespeed:index:NodeTuning"]


def agent_documents(path: Path) -> dict[str, Obj]:
    return {doc["kind"]: doc for doc in yaml.safe_load_all(path.read_text()) if doc}


def assert_is_the_agents_own(objects: dict[tuple[str, str], Obj], namespace: str, with_policy: bool) -> None:
    """The objects are the agent's files: the policy's spec and the RBAC rules unchanged, bound to the agent's
    ServiceAccount in ``namespace``, Events in one namespace only."""
    policy, rbac = agent_documents(AGENT_POLICY), agent_documents(AGENT_RBAC)
    kinds = sorted(kind for kind, _ in objects)
    expected_kinds = ACCESS_KINDS if with_policy else tuple(k for k in ACCESS_KINDS if k not in POLICY_KINDS)
    assert kinds == sorted(expected_kinds)
    by_kind = {kind: obj for (kind, _), obj in objects.items()}
    for kind in POLICY_KINDS if with_policy else ():
        assert by_kind[kind]["apiVersion"] == "admissionregistration.k8s.io/v1"
        assert by_kind[kind]["metadata"]["name"] == policy[kind]["metadata"]["name"]
        assert by_kind[kind]["spec"] == policy[kind]["spec"]
    assert by_kind["ClusterRole"]["rules"] == rbac["ClusterRole"]["rules"]
    assert by_kind["Role"]["rules"] == rbac["Role"]["rules"]
    assert by_kind["Role"]["metadata"]["namespace"] == rbac["Role"]["metadata"]["namespace"] == "default"
    assert by_kind["RoleBinding"]["metadata"]["namespace"] == "default"
    # No Event verbs cluster-wide: the ClusterRole is the Node and the SNAT attribution's reads, nothing else.
    assert {res for rule in by_kind["ClusterRole"]["rules"] for res in rule["resources"]} == {
        "nodes",
        "nodes/status",
        "pods",
        "replicasets",
        "jobs",
    }
    # The attribution's grants are reads; the admission policy judges writes, and only Nodes' are granted.
    reads = {"get", "list", "watch"}
    for rule in by_kind["ClusterRole"]["rules"]:
        if not set(rule["resources"]) & {"nodes", "nodes/status"}:
            assert set(rule["verbs"]) <= reads, rule
    subject = {"kind": "ServiceAccount", "name": "wirespeed-agent", "namespace": namespace}
    assert by_kind["ClusterRoleBinding"]["subjects"] == by_kind["RoleBinding"]["subjects"] == [subject]
    assert by_kind["ServiceAccount"]["metadata"]["namespace"] == namespace
    if with_policy:
        (condition,) = by_kind["ValidatingAdmissionPolicy"]["spec"]["matchConditions"]
        assert '"system:serviceaccount:"' in condition["expression"]
        assert f'":{subject["name"]}"' in condition["expression"]


@pytest.mark.parametrize("case", CASES)
def test_render_pulumi_and_terraform_ship_the_same_confinement(
    engine: Recorder, terraform: str, tmp_path: Path, case: str
) -> None:
    flags, kwargs, inputs, namespace = CASES[case]
    with_policy = kwargs.get("admission_policy", True)
    as_json = json.dumps(rendered(flags, "json"))
    paths = {
        "wirespeed render node-tuning (YAML)": access(rendered(flags, "yaml")),
        "wirespeed render node-tuning --output json": access(rendered(flags, "json")),
        "NodeTuning": access(registered(engine, kwargs)),
        "modules/node-tuning": access(terraform_objects(terraform, pure_harness(tmp_path / "module"), inputs)),
        # The renderer's JSON handed to the module as objects_json, as the README tells a Terraform user to.
        "modules/node-tuning objects_json": access(
            terraform_objects(terraform, pure_harness(tmp_path / "objects-json"), {"objects_json": as_json})
        ),
    }
    reference = paths["wirespeed render node-tuning (YAML)"]
    assert_is_the_agents_own(reference, namespace, with_policy)
    for path, objects in paths.items():
        assert objects == reference, f"{path} ships a different confinement than wirespeed render node-tuning"


def plan_goldens_with_tuning() -> list[Path]:
    found = []
    for path in sorted(PLAN_GOLDEN.glob("*.json")):
        plan = json.loads(path.read_text())
        if any(r["type"] == "wirespeed:index:NodeTuning" for r in plan["resources"]):
            found.append(path)
    return found


def test_every_program_that_installs_node_tuning_is_planned() -> None:
    names = {p.stem for p in plan_goldens_with_tuning()}
    # The AKS cluster component (root, root-dev, aks-*), the root program's EKS branch, the EKS and existing-cluster
    # examples: every way the repository installs the agent.
    assert {"root", "root-dev", "root-aws", "aks-dsv6", "aks-natgw", "aks-nap", "aks-existing-cluster"} <= names
    assert {"eks-c6in", "eks-karpenter"} <= names


@pytest.mark.parametrize("golden", plan_goldens_with_tuning(), ids=lambda p: p.stem)
def test_every_planned_install_ships_the_same_confinement(golden: Path) -> None:
    plan = json.loads(golden.read_text())
    objects = [r["inputs"] for r in plan["resources"] if r["type"].startswith("kubernetes:") and "kind" in r["inputs"]]
    (service_account,) = [o for o in objects if o["kind"] == "ServiceAccount"]
    assert_is_the_agents_own(access(objects), service_account["metadata"]["namespace"], with_policy=True)
