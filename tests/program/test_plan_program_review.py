"""The reviewable plan: pools, outbound sizing recomputed from what registered, tuning, create-only inputs.

Programs run under the Pulumi SDK's mocks (the engine and the clouds cannot exist here).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from wirespeed.program import run_program
from wirespeed.program.compare import CompareError, compare_with
from wirespeed.program.create_only import AGENT_POOL_CREATE_ONLY
from wirespeed.program.review import review

FIXTURES = ROOT / "tests" / "fixtures" / "programs"


@pytest.fixture(scope="module")
def basic():
    return review(run_program(FIXTURES / "aks-basic"))


@pytest.fixture(scope="module")
def basic_prod():
    return review(run_program(FIXTURES / "aks-basic", stack="prod"))


def program(tmp_path, body: str):
    (tmp_path / "Pulumi.yaml").write_text("name: t\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "import pulumi\nfrom pulumi_azure_native import containerservice as cs\n" + body
    )
    return review(run_program(tmp_path))


def test_pools_come_from_the_inline_profile_and_the_agent_pool_under_pulumi_mocks(basic):
    pools = {p.name: p.to_json() for p in basic.pools}
    assert set(pools) == {"system", "ingest"}
    ingest = pools["ingest"]
    assert (ingest["vm_size"], ingest["min_count"], ingest["max_count"], ingest["surge_nodes"]) == (
        "Standard_D16s_v6",
        3,
        20,
        2,
    )
    assert ingest["network_optimised"] is True
    assert ingest["nic"] == "mana"
    assert ingest["profile"] == "throughput"
    assert ingest["linux_os_config_sysctls"] == {"netCoreNetdevMaxBacklog": 32768}
    assert ingest["create_only"] == {
        "linuxOSConfig": {"sysctls": {"netCoreNetdevMaxBacklog": 32768}},
        "vmSize": "Standard_D16s_v6",
        "availabilityZones": None,
        "maxPods": None,
    }
    assert (pools["system"]["source"], pools["system"]["autoscaling"], pools["system"]["max_count"]) == (
        "agentPoolProfiles[0]",
        False,
        3,
    )


def test_outbound_capacity_is_recomputed_from_registered_inputs_under_pulumi_mocks(basic, basic_prod):
    [lb] = basic.outbound
    assert (lb.allocated_outbound_ports, lb.ip_count, lb.nodes_at_max) == (4000, 2, 26)
    assert lb.ip_addresses == ("192.0.2.243", "203.0.113.39")
    assert lb.lb_plan is not None
    assert (lb.lb_plan.ports_required, lb.lb_plan.ports_available, lb.lb_plan.feasible) == (104_000, 128_000, True)
    [prod] = basic_prod.outbound
    assert prod.lb_plan is not None
    assert (prod.lb_plan.ports_required, prod.lb_plan.feasible) == (192_000, False)
    assert "Does NOT fit: short by 64,000 ports." in basic_prod.explain()


def test_tuning_reads_the_profile_config_map_and_flags_a_missing_daemon_set_under_pulumi_mocks(basic):
    [tuning] = basic.tuning
    assert tuning.to_json() == {
        "profile": "throughput",
        "config_map": "wirespeed-system/wirespeed-throughput",
        "daemon_set": None,
        "namespace": None,
        "image": None,
        "rings": {"mana": {"rx": 8192, "tx": 8192}},
        "sysctls": {},
        "mtu": 9000,
        "outbound": None,
    }
    assert basic.findings == (
        "pool ingest: labelled wirespeed.io/profile=throughput but no DaemonSet runs that profile",
    )


def test_json_document_keys_are_stable_under_pulumi_mocks(basic):
    doc = basic.to_json()
    assert list(doc) == [
        "schema_version",
        "mode",
        "project",
        "stack",
        "config",
        "resources",
        "stack_outputs",
        "invokes",
        "pools",
        "auto_provisioned_pools",
        "outbound",
        "tuning",
        "create_only_inputs",
        "compared",
        "replacements",
        "changes",
        "tuning_paths",
        "findings",
        "log",
    ]
    assert json.loads(json.dumps(doc)) == doc
    assert doc["create_only_inputs"][0]["input"] == "linuxOSConfig"
    ip = next(r for r in doc["resources"] if r["name"] == "outbound-0")
    assert ip["outputs"]["ipAddress"] == "192.0.2.243"
    assert "resourceGroupName" not in ip["outputs"]  # echoed inputs are not repeated as outputs


def test_every_create_only_input_cites_the_aks_docs():
    from wirespeed.azure._validate import REPLACE_ON_CHANGE
    from wirespeed.program.create_only import SOURCES

    assert [c.input for c in AGENT_POOL_CREATE_ONLY] == [path for path, _ in REPLACE_ON_CHANGE]
    assert set(SOURCES) == {path for path, _ in REPLACE_ON_CHANGE}
    assert all(c.source.startswith("learn.microsoft.com/azure/aks/") for c in AGENT_POOL_CREATE_ONLY)


def test_compare_marks_the_pool_whose_create_only_input_changed_under_pulumi_mocks(basic, basic_prod):
    compared = compare_with(basic_prod, basic.to_json())
    assert [r.to_json() for r in compared.replacements] == [
        {
            "pool": "ingest",
            "cluster": "aks-plan",
            "changed": {"vmSize": {"before": "Standard_D16s_v6", "now": "Standard_D32s_v6"}},
        }
    ]
    assert '- ingest (cluster aks-plan) REPLACES THE POOL: vmSize "Standard_D16s_v6" -> "Standard_D32s_v6"' in (
        compared.explain()
    )
    unchanged = compare_with(basic, basic.to_json())
    assert unchanged.replacements == ()
    assert "no create-only input changed, no pool is replaced" in unchanged.explain()


def test_compare_reports_added_and_removed_pools_under_pulumi_mocks(basic):
    previous = basic.to_json()
    previous["pools"] = [dict(previous["pools"][0]), {**previous["pools"][1], "name": "old"}]
    compared = compare_with(basic, previous)
    assert compared.findings[-2:] == (
        "pool ingest (cluster aks-plan) is new since the previous plan",
        "pool old (cluster aks-plan) was in the previous plan and is gone: it would be deleted",
    )


@pytest.mark.parametrize(
    ("previous", "message"),
    [
        pytest.param(
            {"mode": "workload"},
            "--compare: not a `wirespeed plan DIR --json` document of schema_version 1 (mode 'workload', "
            "schema_version None)",
            id="workload-plan",
        ),
        pytest.param(
            {"mode": "program", "schema_version": 1, "project": "other"},
            "--compare: the previous plan is of project 'other', not 'aks-basic'",
            id="other-project",
        ),
    ],
)
def test_compare_refuses_a_document_of_another_kind(basic, previous, message):
    with pytest.raises(CompareError) as caught:
        compare_with(basic, previous)
    assert caught.value.message == message


def test_unset_allocated_outbound_ports_is_flagged_under_pulumi_mocks(tmp_path):
    plan = program(
        tmp_path,
        "cs.ManagedCluster('c', resource_group_name='rg', dns_prefix='c', agent_pool_profiles=[\n"
        "    cs.ManagedClusterAgentPoolProfileArgs(name='sys', mode='System', vm_size='Standard_D4ds_v6', count=60)],\n"
        "    network_profile=cs.ContainerServiceNetworkProfileArgs(outbound_type='loadBalancer'))\n",
    )
    [lb] = plan.outbound
    assert lb.lb_plan is None
    assert lb.findings == (
        "allocatedOutboundPorts is unset: Azure picks 512 ports per node at 66 nodes and halves them as the backend "
        "pool grows; set an explicit value (`wirespeed size azure-lb`)",
    )


def test_managed_nat_gateway_capacity_is_explained_under_pulumi_mocks(tmp_path):
    plan = program(
        tmp_path,
        "cs.ManagedCluster('c', resource_group_name='rg', dns_prefix='c', agent_pool_profiles=[\n"
        "    cs.ManagedClusterAgentPoolProfileArgs(name='sys', mode='System', vm_size='Standard_D4ds_v6', count=3)],\n"
        "    network_profile=cs.ContainerServiceNetworkProfileArgs(outbound_type='managedNATGateway',\n"
        "        nat_gateway_profile=cs.ManagedClusterNATGatewayProfileArgs(idle_timeout_in_minutes=4,\n"
        "            managed_outbound_ip_profile=cs.ManagedClusterManagedOutboundIPProfileArgs(count=2))))\n",
    )
    [nat] = plan.outbound
    assert (nat.outbound_type, nat.ip_count, nat.idle_timeout_minutes) == ("managedNATGateway", 2, 4)
    assert nat.findings == (
        "NAT gateway ports are shared on demand: 2 IP(s) x 64,512 = 129,024 concurrent flows for 4 node(s) at peak "
        "(no per-node allocation to size)",
    )


def test_a_pool_added_to_a_looked_up_cluster_reports_the_nodes_it_adds_under_pulumi_mocks(tmp_path):
    plan = program(
        tmp_path,
        "c = cs.get_managed_cluster_output(resource_group_name='rg', resource_name='prod')\n"
        "cs.AgentPool('p', resource_group_name='rg', resource_name_=c.name, agent_pool_name='fast',\n"
        "    vm_size='Standard_D16s_v6', enable_auto_scaling=True, min_count=1, max_count=10)\n",
    )
    assert plan.outbound == ()
    assert plan.findings == (
        "cluster prod is looked up, not managed here: this program adds 11 node(s) at peak (maxCount + surge) to its "
        "outbound; check its allocatedOutboundPorts x all nodes <= 64,000 x outbound IPs (`wirespeed size azure-lb`)",
    )


def test_the_program_package_and_review_import_no_pulumi():
    code = (
        "import sys, wirespeed.program, wirespeed.program.review, wirespeed.program.compare; "
        "print(any(m.split('.')[0] == 'pulumi' for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.fixture(scope="module")
def root_default():
    return review(run_program(ROOT))


@pytest.fixture(scope="module")
def root_dev():
    return review(run_program(ROOT, stack="dev"))


def test_compare_lists_every_outbound_alert_and_address_change_under_pulumi_mocks(root_default, root_dev):
    """The biggest risk of an outbound change is a new address partners have not allowlisted: every one is listed,
    numerically, with the ports, IP count and alert threshold that moved."""
    previous = root_default.to_json()
    # The previous plan had 4,800 ports per node and an alert at 3,840, and one address this plan no longer has.
    previous["outbound"][0]["allocated_outbound_ports"] = 4800
    alert = next(r for r in previous["resources"] if r["type"].endswith(":MetricAlert"))
    alert["inputs"]["criteria"]["allOf"][0]["threshold"] = 3840
    gone = next(r for r in previous["resources"] if r["type"] == "azure-native:network:PublicIPAddress")
    gone["outputs"]["ipAddress"] = "192.0.2.10"
    compared = compare_with(root_dev, previous)
    changes = [(c.kind, c.subject, c.field, c.before, c.now) for c in compared.changes]
    assert changes[:3] == [
        ("outbound", "cluster wirespeed-aks", "allocatedOutboundPorts", 4800, 3600),
        ("outbound", "cluster wirespeed-aks", "outbound IP count", 2, 5),
        ("alert", "alert wirespeed-snat-alert", "UsedSnatPorts GreaterThan", 3840, 2880),
    ]
    # Numeric order (192.0.2.86 before 192.0.2.159), each address with the resource that holds it.
    assert [(c.subject, c.field, c.resource) for c in compared.changes[3:]] == [
        ("192.0.2.86", "added", "wirespeed-outbound-ip-1"),
        ("192.0.2.159", "added", "wirespeed-outbound-ip-5"),
        ("198.51.100.44", "added", "wirespeed-outbound-ip-3"),
        ("203.0.113.103", "added", "wirespeed-outbound-ip-4"),
        ("192.0.2.10", "removed", gone["name"]),
    ]
    text = compared.explain()
    assert "- cluster wirespeed-aks: allocatedOutboundPorts 4,800 -> 3,600" in text
    assert "- alert wirespeed-snat-alert: UsedSnatPorts GreaterThan 3,840 -> 2,880" in text
    # The address is invented offline: the line names the IP resource a reviewer can act on, and says so.
    assert (
        "- NEW outbound IP wirespeed-outbound-ip-5 (192.0.2.159 in this offline plan; the cloud assigns the real "
        "address when it creates the IP): new egress that partners who allowlist yours must add before traffic "
        "leaves from it"
    ) in text
    assert f"- outbound IP {gone['name']} (192.0.2.10 in this offline plan) is deleted" in text
    assert compared.to_json()["changes"][0] == {
        "kind": "outbound",
        "subject": "cluster wirespeed-aks",
        "field": "allocatedOutboundPorts",
        "before": 4800,
        "now": 3600,
        "resource": None,
    }
    assert compared.to_json()["changes"][3]["resource"] == "wirespeed-outbound-ip-1"
    unchanged = compare_with(root_dev, root_dev.to_json())
    assert unchanged.changes == ()
    assert "- no outbound setting, alert or address changed" in unchanged.explain()


def test_outbound_addresses_print_in_numeric_order_under_pulumi_mocks(root_dev):
    [outbound] = root_dev.outbound
    assert "192.0.2.86, 192.0.2.158, 192.0.2.159, 198.51.100.44, 203.0.113.103" in outbound.explain()


def test_ports_show_their_derivation_from_the_components_workload_under_pulumi_mocks(root_default):
    assert (
        "Ports per node: 3,600 (from NetworkOptimizedCluster wirespeed's connections_per_second: 12 new "
        "connections/s x 240 s held x 1.25 headroom = 3,600, a multiple of 8)."
    ) in root_default.explain()


def test_the_replacement_list_names_every_input_it_then_explains_under_pulumi_mocks(root_default):
    text = root_default.explain()
    section = text.split("## Changes that replace a pool\n", 1)[1].split("\n\n", 1)[0]
    listed = section.splitlines()[0]
    for c in AGENT_POOL_CREATE_ONLY:
        assert c.input in listed
        assert f"  {c.input}: " in section
    assert "))" not in section
    assert ") (" not in section


def test_no_line_of_the_plan_nests_parentheses_under_pulumi_mocks(root_default):
    """Citations and mechanisms are never wrapped in a second pair: `(platform (user data (...)))` reads badly."""
    prose = root_default.explain().split("```")[::2]  # code blocks (user data scripts) are not prose
    nested = [line for part in prose for line in part.splitlines() if "))" in line]
    assert nested == []
