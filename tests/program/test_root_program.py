"""The root Pulumi program (`pulumi up` from stack config), planned under Pulumi's mocks: no cloud, no CLI.

`wirespeed.program.run_program` reads Pulumi.yaml (its config defaults) and Pulumi.<stack>.yaml the way the CLI
does and runs __main__.py in-process under the SDK's mocks, with fake Azure answers of the right shape.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from builtin_profiles import BALANCED_BACKLOG, THROUGHPUT_BACKLOG
from conftest import ROOT
from wirespeed.program import ProgramError, run_program

AKS_TYPES = [
    "pulumi:pulumi:Stack",
    "azure-native:resources:ResourceGroup",
    "wirespeed:index:NetworkOptimizedCluster",
    "wirespeed:index:NetworkOptimizedNodePool",
    "azure-native:network:PublicIPAddress",
    "azure-native:network:PublicIPAddress",
    "azure-native:containerservice:ManagedCluster",
    "azure-native:containerservice:AgentPool",
    "azure-native:monitor:MetricAlert",
    "pulumi:providers:kubernetes",
    "wirespeed:index:NodeTuning",
    "kubernetes:core/v1:Namespace",
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
    "kubernetes:core/v1:ServiceAccount",
    "kubernetes:core/v1:ConfigMap",
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
    "kubernetes:rbac.authorization.k8s.io/v1:Role",
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
    "kubernetes:apps/v1:DaemonSet",
]
AKS_EXPORTS = {
    "cluster_name",
    "node_resource_group",
    "kubeconfig",
    "outbound_ip_addresses",
    "allocated_outbound_ports",
    "outbound_ip_count",
    "outbound",
    "pools",
    "replace_on_change",
}


def test_root_program_builds_a_tuned_aks_cluster_from_pulumi_yaml_defaults_under_pulumi_mocks():
    plan = run_program(ROOT)
    assert sorted(r.type for r in plan.resources) == sorted(AKS_TYPES)
    assert set(plan.stack_outputs) == AKS_EXPORTS
    out = plan.stack_outputs
    # system 3 max + 1 surge, apps 20 + 2 (10%): 26 nodes x 3,600 ports (12/s x 240 s x 1.25) = 93,600 -> 2 IPs.
    assert out["allocated_outbound_ports"] == 3600
    assert out["outbound_ip_count"] == 2
    assert len(out["outbound_ip_addresses"]) == 2
    assert out["kubeconfig"] == "[secret]"
    [cluster] = plan.of_type("containerservice", "ManagedCluster")
    lb = cluster.inputs["networkProfile"]["loadBalancerProfile"]
    assert lb["allocatedOutboundPorts"] == 3600
    assert len(lb["outboundIPs"]["publicIPs"]) == 2
    [pool] = plan.of_type("containerservice", "AgentPool")
    assert pool.inputs["vmSize"] == "Standard_D16s_v6"
    assert pool.inputs["availabilityZones"] == ["1", "2", "3"]
    assert pool.inputs["linuxOSConfig"] == {"sysctls": {"netCoreNetdevMaxBacklog": THROUGHPUT_BACKLOG}}
    assert [p["name"] for p in out["pools"]] == ["system", "apps"]
    assert out["replace_on_change"]["apps"] == ["linuxOSConfig", "vmSize", "availabilityZones", "maxPods"]


def test_root_program_dev_stack_under_pulumi_mocks():
    plan = run_program(ROOT, "dev")
    pools = {r.inputs["agentPoolName"]: r.inputs for r in plan.of_type("containerservice", "AgentPool")}
    assert sorted(pools) == ["batch", "checkout"]
    assert pools["batch"]["nodeLabels"] == {"wirespeed.io/profile": "balanced"}
    assert pools["batch"]["linuxOSConfig"] == {"sysctls": {"netCoreNetdevMaxBacklog": BALANCED_BACKLOG}}
    daemon_sets = sorted(r.name for r in plan.of_type("apps", "DaemonSet"))
    assert daemon_sets == ["wirespeed-tuning-daemon-set-balanced", "wirespeed-tuning-daemon-set-throughput"]
    # system 4 + checkout 66 + batch 11 = 81 nodes x 3,600 = 291,600 -> 5 IPs.
    assert plan.stack_outputs["outbound_ip_count"] == 5
    assert len(plan.of_type("network", "PublicIPAddress")) == 5


def project_with_stack(tmp_path: Path, config: str) -> Path:
    """A copy of the root project with one extra stack file (the root's own files stay untouched)."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "Pulumi.test.yaml").write_text(config)
    return tmp_path


# The aws branch's node groups, NAT egress and tuning: tests/program/test_aws_root_program.py.


def test_aws_branch_bad_workload_fails_with_the_field_under_pulumi_mocks(tmp_path):
    project = project_with_stack(tmp_path, "config:\n  wirespeed:cloud: aws\n  wirespeed:workload: no/such.json\n")
    with pytest.raises(ProgramError) as caught:
        run_program(project, "test")
    assert caught.value.problems[0].startswith(
        "wirespeed:workload: no/such.json: cannot be read: No such file or directory"
    )
    # Every problem of a file that is no workload, one line each, with the stack config's own: never a traceback's
    # file:line and exception name.
    workload = tmp_path / "w.json"
    workload.write_text('{"name": "x", "cloud": "aws", "node_pools": [{"name": "a"}]}')
    project = project_with_stack(tmp_path, f"config:\n  wirespeed:cloud: aws\n  wirespeed:workload: {workload}\n")
    with pytest.raises(ProgramError) as caught:
        run_program(project, "test")
    problems = caught.value.problems
    assert problems[:2] == [
        f"wirespeed:workload {workload}: instance_type: missing (a required field)",
        f"wirespeed:workload {workload}: node_pools.0.max_count: missing (a required field)",
    ]
    assert any(p.startswith("wirespeed:clusterName: ") for p in problems)
    assert "WorkloadError" not in str(caught.value)
    assert "workload.py:" not in str(caught.value)


def test_bad_stack_config_lists_every_problem_before_anything_registers_under_pulumi_mocks(tmp_path):
    config = """config:
  wirespeed:pools: ["apps:Standard_D16s_v6:3", "batch:Standard_D16s_v5:1:10:20:balanced"]
  wirespeed:idleTimeoutMinutes: 200
"""
    with pytest.raises(ProgramError) as caught:
        run_program(project_with_stack(tmp_path, config), "test")
    # The malformed pool string does not hide the other pool's or the outbound's problems: all at once.
    assert caught.value.problems[0] == (
        "wirespeed:pools[0]: 'apps:Standard_D16s_v6:3' is not allowed: NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]], "
        "e.g. apps:Standard_D16s_v6:3:20:10%:throughput"
    )
    assert [p.split(": ")[0] for p in caught.value.problems[1:]] == [
        "wirespeed:pools[1] (VM_SIZE)",
        "wirespeed:pools[1] (SURGE)",
        "wirespeed:idleTimeoutMinutes",
    ]
    config = config.replace('"apps:Standard_D16s_v6:3", ', "")
    with pytest.raises(ProgramError) as caught:
        run_program(project_with_stack(tmp_path, config), "test")
    # Each problem is named by its stack key and the part of the pool string it is in.
    assert [p.split(": ")[0] for p in caught.value.problems] == [
        "wirespeed:pools[0] (VM_SIZE)",
        "wirespeed:pools[0] (SURGE)",
        "wirespeed:idleTimeoutMinutes",
    ]


def test_unknown_stack_keys_are_refused_with_a_did_you_mean_naming_the_file_under_pulumi_mocks(tmp_path):
    # The program refuses them itself: the Pulumi CLI passes undeclared keys through to it (so does wirespeed's
    # project loader, as tests/program/test_plan_program_runner.py shows), and pulumi.Config would ignore them.
    config = """config:
  wirespeed:pool: ["apps:Standard_D16s_v6:3:20"]
  wirespeed:snatAlertPercnt: 80
  wirespeed:totallyOther: 1
  azure-native:location: westeurope
"""
    with pytest.raises(ProgramError) as caught:
        run_program(project_with_stack(tmp_path, config), "test")
    assert caught.value.problems[:2] == [
        "Pulumi.test.yaml: wirespeed:pool: not a config key the project declares; did you mean wirespeed:pools?",
        "Pulumi.test.yaml: wirespeed:snatAlertPercnt: not a config key the project declares; did you mean "
        "wirespeed:snatAlertPercent?",
    ]
    (other,) = caught.value.problems[2:]
    assert other.startswith("Pulumi.test.yaml: wirespeed:totallyOther: not a config key the project declares; the "
                            "project declares wirespeed:acceptedAdvisories, wirespeed:allocatedOutboundPorts, "
                            "wirespeed:cloud,")  # fmt: skip


@pytest.mark.parametrize(
    ("config", "other"),
    [
        (
            '  wirespeed:pools: ["apps:Standard_D16s_v6:3"]\n',
            "wirespeed:pools[0]: 'apps:Standard_D16s_v6:3' is not allowed",
        ),
        ("  wirespeed:cloud: aws\n", "wirespeed:clusterName: '' is not allowed"),
        ("  wirespeed:cloud: gcp\n", "wirespeed:cloud: 'gcp' is not allowed: azure or aws"),
        # A stated "" is refused as 'gcp' is: it once meant azure (`config.get("cloud") or "azure"`).
        ('  wirespeed:cloud: ""\n', "wirespeed:cloud: '' is not allowed: azure or aws"),
    ],
    ids=["azure", "aws", "unknown-cloud", "empty-cloud"],
)
def test_a_misspelt_key_comes_with_the_other_problems_at_once_under_pulumi_mocks(tmp_path, config, other):
    """A misspelt key does not hide what else is wrong: one heading, every problem."""
    with pytest.raises(ProgramError) as caught:
        run_program(project_with_stack(tmp_path, f"config:\n  wirespeed:holdSecnds: 100\n{config}"), "test")
    first, *rest = caught.value.problems
    assert first == (
        "Pulumi.test.yaml: wirespeed:holdSecnds: not a config key the project declares; did you mean "
        "wirespeed:holdSeconds?"
    )
    assert rest, "only the misspelt key was reported"
    assert rest[0].startswith(other), rest
    assert str(caught.value).count("refused its inputs") == 1


def test_a_cluster_before_130_needs_the_admission_policy_turned_off_under_pulumi_mocks(tmp_path):
    """AKS 1.29 has no admission policy API: refused before anything registers, unless the policy is turned off."""
    config = "config:\n  wirespeed:kubernetesVersion: '1.29'\n"
    with pytest.raises(ProgramError) as caught:
        run_program(project_with_stack(tmp_path, config), "test")
    assert caught.value.problems == [
        "wirespeed: kubernetes_version: '1.29' is not allowed with tuning_admission_policy: the agent's admission "
        "policy needs Kubernetes 1.30 or later; upgrade, or set tuning_admission_policy=False (the agent's RBAC then "
        "lets it patch any Node)"
    ]
    plan = run_program(project_with_stack(tmp_path, config + "  wirespeed:tuningAdmissionPolicy: false\n"), "test")
    types = [r.type for r in plan.resources]
    assert not [t for t in types if "admissionregistration" in t]
    assert "kubernetes:apps/v1:DaemonSet" in types


def test_component_problems_speak_the_stack_configs_words_not_python_argument_names_under_pulumi_mocks(tmp_path):
    """The component checks (plan_cluster) name arguments such as max_surge and max_count; through the root program
    each problem is under the stack key and pool-string part the user wrote, and its text uses the same words."""
    config = """config:
  wirespeed:pools: ["apps:Standard_D16s_v6:3:20", "batch:Standard_D16s_v5:3:2:40:nope"]
"""
    with pytest.raises(ProgramError) as caught:
        run_program(project_with_stack(tmp_path, config), "test")
    problems = caught.value.problems
    assert [p.split(": ")[0] for p in problems] == [
        "wirespeed:pools[1] (VM_SIZE)",
        "wirespeed:pools[1] (MIN)",
        "wirespeed:pools[1] (SURGE)",
        "wirespeed:pools[1] (PROFILE)",
    ]
    assert problems[1] == (
        "wirespeed:pools[1] (MIN): 3 is not allowed: must be at most MAX (2) (autoscaler range min..max)"
    )
    assert problems[2].startswith("wirespeed:pools[1] (SURGE): '40' is not allowed: a node count from 1 to MAX (2)")
    for word in ("max_surge", "max_count", "min_count", "allow_non_network_optimised", "vm_size", "pools[1]."):
        assert not any(word in p for p in problems), word
