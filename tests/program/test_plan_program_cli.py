"""`wirespeed plan` through the installed console script: program mode, workload fallback, errors, --compare.

Programs run under the Pulumi SDK's mocks inside the CLI process (no engine, no cloud account).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

WIRESPEED = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or shutil.which("wirespeed")
FIXTURES = ROOT / "tests" / "fixtures" / "programs"
BASIC = FIXTURES / "aks-basic"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    assert WIRESPEED, "the wirespeed console script is not installed (pip install -e .)"
    return subprocess.run([WIRESPEED, *args], capture_output=True, text=True, timeout=300, check=False, cwd=cwd)


def test_plan_dir_json_is_one_document_under_pulumi_mocks():
    out = run("plan", str(BASIC), "--json")
    # The fixture is a bare cluster (no tuning DaemonSet, backlog unset): the plan is printed, then the policy
    # rules' mandatory violations make it exit 2 (tests/check/test_check_plan_cli.py covers the verdicts).
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith(f"error: {BASIC}: policy: "), out.stderr
    doc = json.loads(out.stdout)
    assert (doc["mode"], doc["project"], doc["stack"]) == ("program", "aks-basic", None)
    assert [p["name"] for p in doc["pools"]] == ["system", "ingest"]


def test_plan_without_dir_plans_the_project_here_and_says_so_under_pulumi_mocks():
    out = run("plan", cwd=BASIC)
    assert out.returncode == 2, out.stderr  # the plan, then the fixture's policy violations
    assert out.stderr.startswith("error: .: policy: "), out.stderr
    first, second = out.stdout.splitlines()[:2]
    assert first == "Planning the Pulumi project in the current directory (Pulumi.yaml found)."
    assert second.startswith("# Pulumi project aks-basic in ., Pulumi.yaml defaults: 8 resources")


def test_plan_outside_a_project_falls_back_to_the_bundled_workload_and_says_so(tmp_path):
    out = run("plan", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == (
        "No Pulumi.yaml here: planning the bundled example workload (give DIR for a Pulumi project, "
        "--workload FILE for your own workload)."
    )
    as_json = run("plan", "--json", cwd=tmp_path)
    assert json.loads(as_json.stdout)["workload"] == "checkout-api (bundled example)"
    assert as_json.stderr.startswith("No Pulumi.yaml here")


def test_workload_mode_is_unchanged():
    out = run("plan", "--workload", "examples/workloads/ingest-eks.json", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["workload"] == "log-ingest on EKS"


def test_input_properties_error_exits_2_listing_every_problem_under_pulumi_mocks():
    out = run("plan", str(FIXTURES / "invalid-inputs"))
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == (
        f"error: {FIXTURES / 'invalid-inputs' / '__main__.py'}: the program refused its inputs: invalid "
        "NetworkOptimizedNodePool arguments:\n"
        "  vm_size: 'Standard_D4s_v3' is not network-optimised: give allow_reason\n"
        "  max_surge: '40' is larger than the pool (max_count 20)\n"
    )


def test_a_component_refusal_is_one_heading_and_a_line_per_problem_under_pulumi_mocks(tmp_path):
    """wirespeed's own components put every problem in the message and the details: shown once, no literal
    newline escapes; a malformed pool string is reported with the other pools' problems."""
    project = tmp_path / "bad"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        (project / name).write_text((ROOT / name).read_text())
    (project / "Pulumi.bad.yaml").write_text(
        "config:\n  wirespeed:pools:\n"
        '    - "apps:Standard_D16s_v6:3:20:10%:throughput"\n    - "broken"\n'
        '    - "web:Standard_D16s_v6:30:20:10%:nosuch"\n'
    )
    out = run("plan", str(project), "--stack", "bad")
    assert out.returncode == 2
    assert out.stderr == (
        f"error: {project / '__main__.py'}: the program refused its inputs: invalid stack config:\n"
        "  wirespeed:pools[1]: 'broken' is not allowed: NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]], e.g. "
        "apps:Standard_D16s_v6:3:20:10%:throughput\n"
        "  wirespeed:pools[2] (MIN): 30 is not allowed: must be at most MAX (20) (autoscaler range min..max)\n"
        "  wirespeed:pools[2] (PROFILE): 'nosuch' is not allowed: 'nosuch' is not a built-in profile: balanced, "
        "throughput\n"
    )
    assert "\\n" not in out.stderr


def test_outbound_that_does_not_fit_prints_the_plan_then_exits_2_under_pulumi_mocks():
    out = run("plan", str(BASIC), "--stack", "prod")
    assert out.returncode == 2
    assert "Does NOT fit: short by 64,000 ports." in _unwrapped(out.stdout)
    assert out.stderr == (
        "error: cluster aks-plan: 192,000 SNAT ports required but 128,000 available; to fit, give it at least 3 "
        "outbound IPs (managedOutboundIPs.count), lower allocatedOutboundPorts to at most 2,664 or keep the pools to "
        "at most 32 nodes at maxCount plus surge in all (it stops fitting at 33)\n"
    )


def test_one_line_errors_for_bad_projects(tmp_path):
    cases = {
        ("plan", str(tmp_path)): f"error: {tmp_path}: no Pulumi.yaml (not a Pulumi project)\n",
        ("plan", str(BASIC), "--stack", "staging"): (
            f"error: --stack: 'staging' has no Pulumi.staging.yaml in {BASIC}; stacks here: prod\n"
        ),
        ("plan", str(BASIC), "--workload", "x.json"): (
            "error: --workload plans a workload file: give it alone, without DIR, --stack or --compare\n"
        ),
    }
    for args, stderr in cases.items():
        out = run(*args)
        assert (out.returncode, out.stderr) == (2, stderr), args


def _unwrapped(text: str) -> str:
    """The plan's text with its 100-column wrapping undone (every run of whitespace one space), for a phrase."""
    return " ".join(text.split())


def test_compare_marks_the_replaced_pool_under_pulumi_mocks(tmp_path):
    previous = tmp_path / "previous.json"
    previous.write_text(run("plan", str(BASIC), "--json").stdout)
    out = run("plan", str(BASIC), "--stack", "prod", "--compare", str(previous))
    assert '- ingest (cluster aks-plan) REPLACES THE POOL: vmSize "Standard_D16s_v6" -> "Standard_D32s_v6"' in (
        _unwrapped(out.stdout)
    )
    missing = run("plan", str(BASIC), "--compare", str(tmp_path / "none.json"))
    assert (missing.returncode, missing.stderr) == (
        2,
        f"error: --compare {tmp_path / 'none.json'}: cannot be read: No such file or directory; give a readable "
        "`wirespeed plan --json` file\n",
    )


def test_a_component_output_holding_a_resource_settles_under_pulumi_mocks(tmp_path):
    # Regression: rebuilding the resource reference in a registered output off the event loop created outputs
    # no loop ran, and the plan waited forever. A subprocess with a timeout so a regression fails, not hangs.
    (tmp_path / "Pulumi.yaml").write_text("name: ref\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "from pulumi_azure_native import containerservice as cs\n"
        "from wirespeed.azure import NetworkOptimizedNodePool, NetworkOptimizedNodePoolArgs\n"
        "c = cs.ManagedCluster('aks', resource_group_name='rg', dns_prefix='a', agent_pool_profiles=[\n"
        "    cs.ManagedClusterAgentPoolProfileArgs(name='sys', mode='System', vm_size='Standard_D4ds_v6', count=3)])\n"
        "NetworkOptimizedNodePool('p', NetworkOptimizedNodePoolArgs(name='p', vm_size='Standard_D16s_v6',\n"
        "    resource_group_name='rg', cluster_name=c.name))\n"
    )
    out = run("plan", str(tmp_path), "--json")
    assert out.returncode == 2, out.stderr  # settled and printed; a bare cluster then fails the policy rules
    assert out.stderr.startswith(f"error: {tmp_path}: policy: "), out.stderr
    component = next(r for r in json.loads(out.stdout)["resources"] if r["type"].endswith("NetworkOptimizedNodePool"))
    assert component["outputs"]["agent_pool"] == (
        "urn:pulumi:plan::ref::wirespeed:index:NetworkOptimizedNodePool$azure-native:containerservice:AgentPool::p-pool"
    )


def test_compare_with_a_plan_of_the_wrong_shape_is_one_error_under_pulumi_mocks(tmp_path):
    header = {"mode": "program", "schema_version": 1, "project": "aks-basic"}
    cases = {
        "pools-not-a-list": ({**header, "pools": 7}, "`pools` of the previous plan is not a list of pool objects"),
        "pool-not-an-object": ({**header, "pools": [3]}, "`pools` of the previous plan is not a list of pool objects"),
        "create-only-not-an-object": (
            {**header, "pools": [{"cluster": "aks-plan", "name": "ingest", "create_only": 5}]},
            "pool ingest: `create_only` of the previous plan is not an object",
        ),
        "nested-too-deep": ("[" * 100_000, "not a `wirespeed plan --json` document (too deep or too large)"),
    }
    for name, (document, message) in cases.items():
        previous = tmp_path / f"{name}.json"
        previous.write_text(document if isinstance(document, str) else json.dumps(document))
        out = run("plan", str(BASIC), "--compare", str(previous))
        assert (out.returncode, out.stderr) == (
            2,
            f"error: --compare: {previous}: {message}\n"
            if name == "nested-too-deep"
            else f"error: --compare: {message}\n",
        ), name


def test_an_aks_plan_flags_the_vf_rings_of_a_200_gbps_pool_never_enas_under_pulumi_mocks(tmp_path):
    """The root program's AKS cluster at 200 Gb/s with the balanced profile: every Azure driver's rings are below
    the minimum and flagged with the Azure field evidence, but not rings.ena (no Azure VM has an ENA NIC), and no
    verdict cites AWS's ENA Express guidance."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    pools = '["big:Standard_E192is_v6:1:2:1:balanced"]'
    (tmp_path / "Pulumi.test.yaml").write_text(f"config:\n  wirespeed:pools: {pools}\n")
    out = run("plan", ".", "--stack", "test", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    # The verdicts in full close the plan (## Policy), each wrapped to 100 columns under a 4-space indent.
    policy = out.stdout.split("## Policy\n", 1)[1].replace("\n    ", " ")
    rings = [line for line in policy.splitlines() if "mandatory nic-ring-minimum" in line]
    assert [line.split("): rings.")[1].split(" ")[0] for line in rings] == [
        f"{driver}.{direction}" for driver in ("mana", "mlx4_en", "mlx5_core") for direction in ("rx", "tx")
    ]
    assert "Azure's Mellanox VF" in rings[0]
    assert "ena-express" not in out.stdout
    assert "ENA Express" not in out.stdout
