"""The policy pack's files and the adapter from wirespeed.rules to pulumi_policy policies (in-process: building a
PolicyPack would start the gRPC server and block; tests/rules/test_policy_pack_process.py runs that for real)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, Severity, StackValidationPolicy
from pulumi_policy.proxy import UNKNOWN_OBJECT_VALUE, UNKNOWN_STRING_VALUE

from clirun import invoke
from fixtures.rules.engine import stack_resource, urn, validate, validate_stack
from pins import EXTRAS, exact_pins, requirement_lines
from wirespeed import __version__, rule_catalog, rules
from wirespeed.policy_pack import PACK_NAME, policies
from wirespeed.rules._docs import markdown_table
from wirespeed.values import BLINDED_SECRET, SIG_KEY

ROOT = Path(__file__).resolve().parents[2]
PACK = ROOT / "policies" / "wirespeed"
BEGIN, END = "<!-- rules:begin -->\n", "<!-- rules:end -->"


def test_one_policy_per_rule_in_order():
    assert [p.name for p in policies()] == [r.id for r in rules.RULES]


@pytest.mark.parametrize("rule", rules.RULES, ids=lambda r: r.id)
def test_each_policy_carries_the_rules_metadata(rule):
    policy = next(p for p in policies() if p.name == rule.id)
    expected_class = StackValidationPolicy if rule.scope == "stack" else ResourceValidationPolicy
    assert type(policy) is expected_class
    assert policy.description == rule.description
    assert policy.enforcement_level == EnforcementLevel(rule.default_enforcement)
    assert policy.severity == Severity(rule.severity)
    assert policy.remediation_steps == rule.remediation
    assert policy.url is None or policy.url.startswith("https://")
    assert policy.tags == ["wirespeed", "networking", rule.scope]
    if rule.config_schema:
        assert policy.config_schema.properties == {k: dict(v) for k, v in rule.config_schema.items()}
    else:
        assert policy.config_schema is None
    if isinstance(policy, ResourceValidationPolicy):
        assert policy.has_remediation() == (rule.remediate is not None)


def test_urls_come_from_the_rules_sources():
    urls = {p.name: p.url for p in policies()}
    assert urls["aks-snat-capacity"] == "https://learn.microsoft.com/azure/aks/configure-load-balancer-standard"
    assert urls["aws-natgw-capacity"] == "https://docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html"


def test_pulumi_policy_yaml_names_the_pack_and_its_version():
    manifest = yaml.safe_load((PACK / "PulumiPolicy.yaml").read_text())
    assert manifest["name"] == PACK_NAME
    assert manifest["version"] == __version__  # Python packs take their version only from this file
    assert manifest["runtime"] == {"name": "python", "options": {"virtualenv": "venv"}}


def test_pack_requirements_pin_the_sdks_the_repository_pins():
    pack = exact_pins(requirement_lines(PACK / "requirements.txt"))
    assert pack == {
        "pulumi": exact_pins(EXTRAS["pulumi"])["pulumi"],
        "pulumi-policy": exact_pins(EXTRAS["dev"])["pulumi-policy"],
    }
    assert "-e ../.." in requirement_lines(PACK / "requirements.txt")


def test_main_only_builds_the_pack():
    code = [
        line for line in (PACK / "__main__.py").read_text().splitlines() if line and not line.startswith(("#", '"'))
    ]
    body = [line for line in code if not line.startswith(("Constructing", "from ", "import "))]
    assert body == ["PolicyPack(PACK_NAME, policies=policies())"]


def test_example_config_is_valid_and_in_the_readme():
    text = (PACK / "config.example.json").read_text()
    config = rules.resolve_config(json.loads(text))
    assert config.level("netdev-backlog-minimum") == "remediate"
    assert config.settings_for("aws-natgw-capacity") == {"peakConnectionsPerDestination": 120000}
    readme = (PACK / "README.md").read_text()
    assert f"```json\n{text}```" in readme


def test_readme_rules_table_is_generated_from_the_rule_catalog():
    path = PACK / "README.md"
    readme = path.read_text()
    expected = rule_catalog.readme_with_table(readme, rule_catalog.load())
    assert expected == readme.partition(BEGIN)[0] + BEGIN + markdown_table(rules.RULES) + END + readme.partition(END)[2]
    assert readme == expected, "rules table is stale: `make regen` (python -m wirespeed.rule_catalog)"


def test_readme_shows_the_commands_users_run():
    readme = (PACK / "README.md").read_text()
    assert "pulumi preview --policy-pack policies/wirespeed --policy-pack-config cfg.json" in readme
    assert "pulumi policy analyze --file export.json --policy-pack policies/wirespeed" in readme


def test_pull_request_workflow_runs_the_pack_with_pulumi_actions():
    workflow = yaml.safe_load((PACK / "ci" / "pull-request.yml").read_text())
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the bare key `on` as true
    steps = workflow["jobs"]["preview"]["steps"]
    (pulumi,) = [s for s in steps if s.get("uses", "").startswith("pulumi/actions@")]
    assert pulumi["with"]["command"] == "preview"
    assert pulumi["with"]["policyPacks"] == "policies/wirespeed"
    assert (ROOT / pulumi["with"]["policyPackConfigs"]).is_file()
    (install,) = [s for s in steps if s.get("working-directory") == "policies/wirespeed"]
    assert "pip install -r requirements.txt" in install["run"]


# --- pulumi-azure (bridged from azurerm) through the pack, as `wirespeed check` reads it --------------------------

# A real export (tests/fixtures/real/*.provenance.json: pulumi/pulumi-azure's recorded upgrade test, Apache-2.0): a
# pulumi-azure 5.89 cluster on the Basic load balancer.
BRIDGED_EXPORT = ROOT / "tests" / "fixtures" / "real" / "pulumi-azure-aks-basic-lb.cli3.129.stack.json"
AZURE_CLUSTER = "azure:containerservice/kubernetesCluster:KubernetesCluster"


def _bridged_cluster() -> dict[str, Any]:
    resources = json.loads(BRIDGED_EXPORT.read_text())["deployment"]["resources"]
    return next(r for r in resources if r["type"] == AZURE_CLUSTER)


def _check_messages() -> dict[str, str]:
    out = invoke("check", str(BRIDGED_EXPORT), "--format", "json")
    assert out.returncode == 1, out.stdout + out.stderr
    return {v["rule"]: v["message"] for v in json.loads(out.stdout)["violations"]}


def _blinded(value: Any) -> Any:
    """The export's ciphertext secrets (its kubeconfigs, which no rule reads) as the engine hands over a secret it
    could not decrypt."""
    if isinstance(value, dict):
        return BLINDED_SECRET if SIG_KEY in value else {k: _blinded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_blinded(v) for v in value]
    return value


def test_a_pulumi_azure_cluster_on_basic_fails_aks_basic_load_balancer_through_the_pack():
    inputs = _bridged_cluster()["inputs"]
    said = validate("aks-basic-load-balancer", AZURE_CLUSTER, inputs)
    assert said == [_check_messages()["aks-basic-load-balancer"]]
    assert said[0].startswith("networkProfile.loadBalancerSku is basic:")
    standard = inputs | {"networkProfile": inputs["networkProfile"] | {"loadBalancerSku": "Standard"}}
    assert validate("aks-basic-load-balancer", AZURE_CLUSTER, standard) == []


def test_the_pack_names_pulumi_azures_properties_in_the_words_check_uses():
    # The export's Standard_D2_v2 (Dv2) is in the catalog at 1.5 Gb/s, so the kernel's default backlog holds its
    # stall and netdev-backlog-minimum passes; the SKU rule still fails it and names the same properties.
    said = validate("network-optimised-sku", AZURE_CLUSTER, _bridged_cluster()["inputs"])
    assert said == [_check_messages()["network-optimised-sku"]]
    assert said[0].startswith("agentPoolProfiles[0] (default): vmSize Standard_D2_v2 (Dv2) is not a network-optimised")
    assert said[0].endswith("vmSize is defaultNodePool.vmSize.)")
    assert "netdev-backlog-minimum" not in _check_messages()


def test_a_stack_policy_reports_a_pulumi_azure_cluster_on_its_own_urn_with_checks_words():
    outputs = _blinded(_bridged_cluster()["outputs"])
    reported = validate_stack("tuning-agent-present", [stack_resource(AZURE_CLUSTER, "aks", outputs)])
    assert reported == [(_check_messages()["tuning-agent-present"], urn(AZURE_CLUSTER, "aks"))]


def test_an_unknown_pulumi_azure_value_during_preview_is_not_applicable_through_the_pack():
    inputs = _bridged_cluster()["inputs"]
    unknown_sku = inputs | {"networkProfile": inputs["networkProfile"] | {"loadBalancerSku": UNKNOWN_STRING_VALUE}}
    assert validate("aks-basic-load-balancer", AZURE_CLUSTER, unknown_sku) == []
    unknown_block = inputs | {"networkProfile": UNKNOWN_OBJECT_VALUE}
    assert validate("aks-basic-load-balancer", AZURE_CLUSTER, unknown_block) == []
