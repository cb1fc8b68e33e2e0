"""modules/sizing against wirespeed.sizing: the generated files are current, and the real Terraform binary
gives the engine's numbers for every shared vector and refuses every invalid one naming the variable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from conftest import prerequisite_gate, require
from wirespeed.sizing import azure_lb, nat_gateway, terraform_facts

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "modules" / "sizing"
VECTORS = json.loads(terraform_facts.VECTORS_PATH.read_text())["cases"]
VALID = [c for c in VECTORS if "expected" in c]
INVALID = [c for c in VECTORS if "error" in c]
NAT_VECTORS = json.loads(terraform_facts.NAT_VECTORS_PATH.read_text())["cases"]
NAT_VALID = [c for c in NAT_VECTORS if "expected" in c]
NAT_INVALID = [c for c in NAT_VECTORS if "error" in c]
BACKLOG_VECTORS = json.loads(terraform_facts.BACKLOG_VECTORS_PATH.read_text())["cases"]
NAT_VALID += [c for c in BACKLOG_VECTORS if "expected" in c]
NAT_INVALID += [c for c in BACKLOG_VECTORS if "error" in c]
RINGS_VECTORS = json.loads(terraform_facts.RINGS_VECTORS_PATH.read_text())["cases"]
NAT_VALID += [c for c in RINGS_VECTORS if "expected" in c]
NAT_INVALID += [c for c in RINGS_VECTORS if "error" in c]


NO_TERRAFORM = "needs the terraform binary on PATH (>= 1.9) to apply modules/sizing"


def terraform_gate(found: str | None, ci: str | None) -> tuple[str, str] | None:
    """None to run the Terraform tests, else ("skip" | "fail", why): the suite's one prerequisite rule."""
    return prerequisite_gate(None if found else NO_TERRAFORM, ci)


def test_terraform_gate_fails_under_ci_and_skips_locally() -> None:
    assert terraform_gate("/usr/local/bin/terraform", "true") is None
    reason = "needs the terraform binary on PATH (>= 1.9) to apply modules/sizing"
    assert terraform_gate(None, "true") == ("fail", reason + "; CI=true, so this is a failure, not a skip")
    assert terraform_gate(None, None) == ("skip", reason)


@pytest.fixture(scope="module")
def terraform() -> str:
    found = shutil.which("terraform")
    require(None if found else NO_TERRAFORM)
    assert found is not None
    return found


def _run(terraform: str, workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = workdir / "terraformrc"
    config.write_text("")
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(config), "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    return subprocess.run(
        [terraform, f"-chdir={workdir}", *args, "-no-color"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


NAT_INPUTS = ("azure_nat_gateway_flows", "aws_nat_gateway_connections", "backlog", "rings")
LB_INPUTS = ("pools", "allocated_outbound_ports", "workload", "outbound_ips")


def _root(workdir: Path, cases: dict[str, Any]) -> None:
    """A root module instantiating modules/sizing once per case (one init and one apply for all)."""
    (workdir / "cases.json").write_text(json.dumps(cases))
    arguments = "\n".join(f"  {name} = try(each.value.{name}, null)" for name in (*LB_INPUTS, *NAT_INPUTS))
    (workdir / "main.tf").write_text(
        f"""
locals {{
  cases = jsondecode(file("${{path.module}}/cases.json"))
}}

module "case" {{
  source   = "{MODULE}"
  for_each = local.cases

{arguments}
}}

output "results" {{
  value = module.case
}}
"""
    )


def test_readme_usage_examples_apply(terraform: str, tmp_path: Path) -> None:
    readme = (MODULE / "README.md").read_text()
    examples = [block.partition("```")[0] for block in readme.split("```hcl\n")[1:]]
    assert len(examples) == 3
    (tmp_path / "main.tf").write_text(
        "\n".join(examples).replace('source = "./modules/sizing"', f'source = "{MODULE}"')
        + 'output "snat" {\n  value = module.snat\n}\noutput "eks_egress" {\n  value = module.eks_egress\n}\n'
    )
    for args in (("init", "-input=false"), ("apply", "-auto-approve", "-input=false")):
        done = _run(terraform, tmp_path, *args)
        assert done.returncode == 0, done.stderr + done.stdout
    snat = json.loads(_run(terraform, tmp_path, "output", "-json", "snat").stdout)
    engine = azure_lb.plan_load_balancer(
        [azure_lb.Pool(250, Decimal("10")), azure_lb.Pool(20, 2, surge_is_percent=False)],
        workload=azure_lb.Workload(Decimal("1.36"), 240, Decimal("1.25")),
    )
    assert (snat["nodes_at_max"], snat["allocated_outbound_ports"], snat["outbound_ips"]) == (
        engine.nodes_at_max,
        engine.allocated_outbound_ports,
        engine.outbound_ips,
    )
    egress = json.loads(_run(terraform, tmp_path, "output", "-json", "eks_egress").stdout)
    assert egress["aws_nat_gateway"]["ips"] == nat_gateway.plan_aws_nat_gateway(120_000).ips
    assert egress["allocated_outbound_ports"] is None


def test_vectors_cover_feasible_infeasible_and_invalid() -> None:
    assert any(c["expected"]["feasible"] for c in VALID)
    assert any(c["expected"]["feasible"] is False and c["expected"]["infeasible"] is None for c in VALID)
    assert {c["expected"]["infeasible"]["field"] for c in VALID if c["expected"]["infeasible"]} == {
        "ports per node",
        "outbound IPs",
    }
    assert {c["error"]["variable"] for c in INVALID} == {
        "allocated_outbound_ports",
        "outbound_ips",
        "pools",
        "workload",
    }


@pytest.fixture(scope="module")
def applied(terraform: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("tf-sizing")
    _root(workdir, {c["name"]: c["inputs"] for c in [*VALID, *NAT_VALID]})
    for args in (("init", "-input=false"), ("apply", "-auto-approve", "-input=false")):
        done = _run(terraform, workdir, *args)
        assert done.returncode == 0, done.stderr + done.stdout
    done = _run(terraform, workdir, "output", "-json", "results")
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout)
    return results


@pytest.mark.parametrize("case", VALID, ids=[c["name"] for c in VALID])
def test_terraform_gives_the_engines_numbers(applied: dict[str, Any], case: dict[str, Any]) -> None:
    got = applied[case["name"]]
    assert {key: got[key] for key in case["expected"]} == case["expected"]


@pytest.mark.parametrize("case", NAT_VALID, ids=[c["name"] for c in NAT_VALID])
def test_terraform_gives_the_engines_nat_gateway_ips_and_backlog(applied: dict[str, Any], case: dict[str, Any]) -> None:
    got = applied[case["name"]]
    assert {key: got[case["output"]][key] for key in case["expected"]} == case["expected"]
    assert got["allocated_outbound_ports"] is None  # no pools: no load balancer plan


@pytest.mark.parametrize("case", [*INVALID, *NAT_INVALID], ids=[c["name"] for c in [*INVALID, *NAT_INVALID]])
def test_terraform_refuses_invalid_input_naming_the_variable(
    terraform: str, tmp_path: Path, case: dict[str, Any]
) -> None:
    _root(tmp_path, {case["name"]: case["inputs"]})
    assert _run(terraform, tmp_path, "init", "-input=false").returncode == 0
    done = _run(terraform, tmp_path, "plan", "-input=false")
    assert done.returncode == 1
    output = " ".join(done.stderr.split())  # Terraform wraps long messages
    variable = case["error"]["variable"]
    assert "Error: Invalid value for variable" in output, output
    assert "checked by the validation rule at .terraform/modules/case/variables.tf" in output, output
    assert f"var.{variable}" in output, output
    assert case["error"]["field"].rpartition(".")[2] in output, output
    assert "is not allowed" in output, output
