"""FakeCloud: the answers `wirespeed plan` invents for the clouds have the real shapes and never change."""

from __future__ import annotations

import base64

import pytest

from wirespeed.program.fake_cloud import FakeCloud, TypeToken

SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"


@pytest.mark.parametrize(
    ("token", "inputs", "expected"),
    [
        pytest.param(
            "azure-native:containerservice:ManagedCluster",
            {"resourceGroupName": "rg", "resourceName": "aks"},
            f"{SUB}/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/aks",
            id="managed-cluster",
        ),
        pytest.param(
            "azure-native:containerservice/v20240801:AgentPool",
            {"resourceGroupName": "rg", "resourceName": "aks", "agentPoolName": "fast"},
            f"{SUB}/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/aks/agentPools/fast",
            id="versioned-agent-pool",
        ),
        pytest.param(
            "azure-native:network:PublicIPAddress",
            {"resourceGroupName": "rg"},
            f"{SUB}/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/logical",
            id="autonamed-public-ip",
        ),
        pytest.param(
            "azure-native:resources:ResourceGroup",
            {"resourceGroupName": "rg-prod"},
            f"{SUB}/resourceGroups/rg-prod",
            id="resource-group",
        ),
        pytest.param(
            "azure-native:monitor:MetricAlert",
            {"resourceGroupName": "rg", "ruleName": "snat"},
            f"{SUB}/resourceGroups/rg/providers/Microsoft.Insights/metricAlerts/snat",
            id="metric-alert",
        ),
    ],
)
def test_azure_ids_have_the_arm_shape(token, inputs, expected):
    assert FakeCloud().azure_id(token, "logical", inputs) == expected


def test_public_ips_are_documentation_addresses_that_do_not_depend_on_order():
    keys = [f"azure-native:network:PublicIPAddress:ip-{i}" for i in range(50)]
    forward, backward = FakeCloud(), FakeCloud()
    a = [forward.public_ip(k) for k in keys]
    b = [backward.public_ip(k) for k in reversed(keys)][::-1]
    assert len(set(a)) == 50
    # Without a collision between the two orders the answers are identical; collisions are rare and local.
    assert sum(x != y for x, y in zip(a, b, strict=True)) <= 4
    assert all(ip.rsplit(".", 1)[0] in ("192.0.2", "198.51.100", "203.0.113") for ip in a)
    assert forward.public_ip(keys[0]) == a[0]


def test_managed_cluster_outputs_resolve_what_programs_read():
    _, out = FakeCloud(azure_location="westeurope").new_resource(
        "azure-native:containerservice:ManagedCluster",
        "aks",
        {
            "resourceGroupName": "rg",
            "resourceName": "aks",
            "location": "westeurope",
            "networkProfile": {"loadBalancerProfile": {"managedOutboundIPs": {"count": 3}}},
        },
        True,
    )
    assert out["nodeResourceGroup"] == "MC_rg_aks_westeurope"
    assert out["fqdn"].endswith(".hcp.westeurope.azmk8s.io")
    effective = out["networkProfile"]["loadBalancerProfile"]["effectiveOutboundIPs"]
    assert len(effective) == 3
    assert effective[0]["id"].startswith(f"{SUB}/resourceGroups/MC_rg_aks_westeurope/providers/Microsoft.Network/")


def test_user_credentials_are_a_base64_kubeconfig_for_the_cluster():
    result = FakeCloud().call(
        "azure-native:containerservice:listManagedClusterUserCredentials",
        {"resourceGroupName": "rg", "resourceName": "aks"},
    )
    [kubeconfig] = result["kubeconfigs"]
    text = base64.b64decode(kubeconfig["value"]).decode()
    assert kubeconfig["name"] == "clusterUser"
    assert "kind: Config" in text
    assert "server: https://aks-" in text


def test_aws_resources_get_arns_in_the_documentation_account():
    cloud = FakeCloud()
    _, group = cloud.new_resource(
        "aws:eks/nodeGroup:NodeGroup", "ng", {"clusterName": "eks", "nodeGroupName": "a"}, True
    )
    assert group["arn"].startswith("arn:aws:eks:us-east-1:123456789012:nodegroup/eks/a/")
    rid, template = cloud.new_resource("aws:ec2/launchTemplate:LaunchTemplate", "lt", {}, True)
    assert rid.startswith("lt-0")
    assert template["arn"] == f"arn:aws:ec2:us-east-1:123456789012:launch-template/{rid}"


def test_components_get_no_id_and_unknown_invokes_are_echoed_and_reported():
    cloud = FakeCloud()
    assert cloud.new_resource("wirespeed:index:NodeTuning", "t", {"a": 1}, False) == ("", {})
    assert cloud.call("azure-native:network:listSomething", {"x": 1}) == {"x": 1}
    assert cloud.unmocked_invokes == ["azure-native:network:listSomething"]


def test_type_tokens_split_versioned_modules():
    assert TypeToken.parse("azure-native:containerservice/v20240801:AgentPool") == TypeToken(
        "azure-native", "containerservice", "v20240801", "AgentPool"
    )
    assert TypeToken.parse("kubernetes:apps/v1:DaemonSet").module == "apps"
