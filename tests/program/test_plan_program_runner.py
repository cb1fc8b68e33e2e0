"""wirespeed.program.run_program: Pulumi programs run in-process under the SDK's mocks (no engine, no cloud).

The mocks stand in for the Pulumi engine and the clouds, which cannot exist here; everything else (the SDK,
azure-native, pulumi-kubernetes, the program) is the real code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from wirespeed.install_hint import install_command
from wirespeed.program import ProgramError, load_project, run_program
from wirespeed.program.model import type_matches

FIXTURES = ROOT / "tests" / "fixtures" / "programs"
SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"


@pytest.fixture(scope="module")
def basic():
    return run_program(FIXTURES / "aks-basic")


@pytest.fixture(scope="module")
def basic_prod():
    return run_program(FIXTURES / "aks-basic", stack="prod")


def one(plan, module, resource):
    found = plan.of_type(module, resource)
    assert len(found) == 1, [r.urn for r in found]
    return found[0]


def test_every_registration_is_recorded_with_its_parent_under_pulumi_mocks(basic):
    by_type = sorted((r.type, r.name) for r in basic.resources)
    assert by_type == [
        ("azure-native:containerservice:AgentPool", "ingest-pool"),
        ("azure-native:containerservice:ManagedCluster", "aks"),
        ("azure-native:network:PublicIPAddress", "outbound-0"),
        ("azure-native:network:PublicIPAddress", "outbound-1"),
        ("azure-native:resources:ResourceGroup", "rg"),
        ("kubernetes:core/v1:ConfigMap", "profile"),
        ("pulumi:providers:kubernetes", "aks"),
        ("pulumi:pulumi:Stack", "aks-basic-plan"),
        ("wirespeed:index:NetworkOptimizedNodePool", "ingest"),
    ]
    stack = basic.stack
    component = one(basic, "index", "NetworkOptimizedNodePool")
    pool = one(basic, "containerservice", "AgentPool")
    assert component.parent == stack.urn
    assert pool.parent == component.urn
    assert component.custom is False
    assert pool.custom is True


def test_inputs_use_engine_names_and_config_defaults_under_pulumi_mocks(basic):
    pool = one(basic, "containerservice", "AgentPool").inputs
    assert pool["vmSize"] == "Standard_D16s_v6"
    assert pool["maxCount"] == 20
    assert pool["linuxOSConfig"] == {"sysctls": {"netCoreNetdevMaxBacklog": 32768}}
    assert pool["upgradeSettings"] == {"maxSurge": "10%"}
    assert pool["nodeLabels"] == {"wirespeed.io/profile": "throughput"}


def test_outputs_resolve_to_realistic_values_under_pulumi_mocks(basic):
    rg = f"{SUB}/resourceGroups/rg-plan"
    assert basic.stack_outputs == {
        "cluster_id": f"{rg}/providers/Microsoft.ContainerService/managedClusters/aks-plan",
        "node_resource_group": "MC_rg-plan_aks-plan_westeurope",
        "outbound_ips": ["192.0.2.243", "203.0.113.39"],
        "kubeconfig_server": "server: https://aks-plan-816f7062.hcp.westeurope.azmk8s.io:443",
        "token_set": False,
    }
    pool = one(basic, "containerservice", "AgentPool")
    assert pool.id == f"{rg}/providers/Microsoft.ContainerService/managedClusters/aks-plan/agentPools/ingest"
    component = one(basic, "index", "NetworkOptimizedNodePool")
    assert component.outputs == {"pool_id": pool.id, "vm_size": "Standard_D16s_v6"}
    cluster = one(basic, "containerservice", "ManagedCluster").outputs
    effective = cluster["networkProfile"]["loadBalancerProfile"]["effectiveOutboundIPs"]
    assert [e["id"].rsplit("/", 1)[1] for e in effective] == ["outbound-0", "outbound-1"]


def test_kubernetes_objects_go_through_the_explicit_provider_under_pulumi_mocks(basic):
    config_map = one(basic, "core", "ConfigMap")
    provider = one(basic, "providers", "kubernetes")
    assert config_map.provider == provider.urn
    assert config_map.id == "wirespeed-system/wirespeed-throughput"
    assert [i.token for i in basic.invokes] == ["azure-native:containerservice:listManagedClusterUserCredentials"]


def test_stack_config_overrides_defaults_and_secure_values_stay_hidden_under_pulumi_mocks(basic_prod):
    pool = one(basic_prod, "containerservice", "AgentPool").inputs
    assert pool["vmSize"] == "Standard_D32s_v6"
    assert pool["maxCount"] == 40
    assert basic_prod.stack_outputs["token_set"] == "[secret]"
    assert basic_prod.project.notes == (
        "aks-basic:admin_token is a secure value: planned with the placeholder '[secret]'",
    )
    assert basic_prod.stack.name == "aks-basic-prod"


def test_two_runs_in_one_process_register_the_same_under_pulumi_mocks(basic):
    again = run_program(FIXTURES / "aks-basic")
    assert [(r.urn, r.id, r.inputs, r.outputs) for r in again.resources] == [
        (r.urn, r.id, r.inputs, r.outputs) for r in basic.resources
    ]


def test_the_callers_process_state_is_restored_under_pulumi_mocks(basic):
    cwd, path = os.getcwd(), list(sys.path)
    run_program(FIXTURES / "aks-basic")
    assert os.getcwd() == cwd
    assert sys.path == path


def test_input_properties_error_lists_every_problem_under_pulumi_mocks():
    with pytest.raises(ProgramError) as caught:
        run_program(FIXTURES / "invalid-inputs")
    err = caught.value
    assert err.message == (
        f"{FIXTURES / 'invalid-inputs' / '__main__.py'}: the program refused its inputs: "
        "invalid NetworkOptimizedNodePool arguments"
    )
    assert err.problems == [
        "vm_size: 'Standard_D4s_v3' is not network-optimised: give allow_reason",
        "max_surge: '40' is larger than the pool (max_count 20)",
    ]


def test_a_program_raising_names_its_file_and_line_under_pulumi_mocks(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: broken\nruntime: python\n")
    (tmp_path / "__main__.py").write_text("import pulumi\n\nraise ValueError('pool: bad')\n")
    with pytest.raises(ProgramError) as caught:
        run_program(tmp_path)
    assert caught.value.message == f"{tmp_path / '__main__.py'}: __main__.py:3: ValueError: pool: bad"
    assert caught.value.problems == ["__main__.py:3 in <module>: raise ValueError('pool: bad')"]


def test_a_missing_sdk_says_what_to_install_under_pulumi_mocks(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: needs\nruntime: python\n")
    (tmp_path / "__main__.py").write_text("import pulumi_nonexistent_cloud\n")
    with pytest.raises(ProgramError) as caught:
        run_program(tmp_path)
    assert caught.value.message == (
        f"{tmp_path / '__main__.py'}: __main__.py:1: No module named 'pulumi_nonexistent_cloud': install the "
        f"project's requirements ({install_command(['-r', str(tmp_path / 'requirements.txt')])}) into this environment"
    )


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("files", "stack", "message"),
    [
        pytest.param({}, None, "{d}: no Pulumi.yaml (not a Pulumi project)", id="no-project-file"),
        pytest.param(
            {"Pulumi.yaml": "name: p\nruntime: nodejs\n"},
            None,
            "{d}/Pulumi.yaml: runtime: 'nodejs' is not supported: wirespeed plan runs Python programs only",
            id="nodejs-runtime",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\nruntime:\n  name: go\n"},
            None,
            "{d}/Pulumi.yaml: runtime: 'go' is not supported: wirespeed plan runs Python programs only",
            id="go-runtime-mapping",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\nruntime: python\n", "__main__.py": "", "Pulumi.dev.yaml": "config: {}\n"},
            "prod",
            "--stack: 'prod' has no Pulumi.prod.yaml in {d}; stacks here: dev",
            id="unknown-stack",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\nruntime: python\nmain: src/\n"},
            None,
            "{d}/Pulumi.yaml: main: no src/__main__.py to run",
            id="missing-main",
        ),
        pytest.param(
            {"Pulumi.yaml": "name: p\nruntime: python\n  bad: [\n"},
            None,
            "{d}/Pulumi.yaml: line 3: is not valid YAML (mapping values are not allowed here)",
            id="bad-yaml",
        ),
    ],
)
def test_project_errors_name_the_file_and_field(tmp_path, files, stack, message):
    for name, text in files.items():
        write(tmp_path / name, text)
    with pytest.raises(ProgramError) as caught:
        load_project(tmp_path, stack)
    assert caught.value.message == message.format(d=tmp_path)


def test_config_problems_are_all_reported_at_once(tmp_path):
    write(
        tmp_path / "Pulumi.yaml",
        "name: p\nruntime: python\nconfig:\n  size:\n    type: integer\n  zone:\n    type: string\n",
    )
    write(tmp_path / "__main__.py", "")
    write(tmp_path / "Pulumi.dev.yaml", "config:\n  p:size: big\n  region: westeurope\n")
    with pytest.raises(ProgramError) as caught:
        load_project(tmp_path, "dev")
    assert caught.value.problems == [
        "Pulumi.dev.yaml: p:size: 'big' is not allowed: the project declares integer",
        "Pulumi.dev.yaml: config key 'region' must be namespaced (e.g. p:region)",
        "config p:zone: no default and no value in the stack; set it in Pulumi.<stack>.yaml",
    ]


def test_config_reaches_the_program_as_the_engine_encodes_it(tmp_path):
    write(
        tmp_path / "Pulumi.yaml",
        "name: p\nruntime: python\nconfig:\n  pools:\n    type: array\n    default: [{name: a, max: 3}]\n"
        "  enabled: true\n  aws:region: eu-west-1\n",
    )
    write(tmp_path / "__main__.py", "")
    write(tmp_path / "Pulumi.dev.yaml", "config:\n  p:count: 4\n  other:flag: 'yes'\n")
    project = load_project(tmp_path, "dev")
    assert project.config == {
        "aws:region": "eu-west-1",
        "other:flag": "yes",
        "p:count": "4",
        "p:enabled": "true",
        "p:pools": '[{"name": "a", "max": 3}]',
    }


def test_type_matches_ignores_package_and_api_version():
    assert type_matches("azure-native:containerservice/v20240801:AgentPool", "containerservice", "AgentPool")
    assert type_matches("azure-native:containerservice:AgentPool", "containerservice", "AgentPool")
    assert not type_matches("azure-native:containerservice:ManagedCluster", "containerservice", "AgentPool")
