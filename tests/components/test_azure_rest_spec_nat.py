"""The NAT gateway SKU fields wirespeed sizes, gates and refuses, against Azure's REST specification: the AKS
2026-06-01 ManagedClusterNATGatewayProfile (``sku``, the managed IP count, the idle timeout) and Microsoft.Network's
natGateways ``sku.name``, excerpted with their commits in tests/fixtures/azure-rest-api-specs/nat-gateway-sku.json.
The pinned SDK's profile is checked too: when it gains ``sku``, the component's refusal of StandardV2 is stale."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from pulumi_azure_native import containerservice

from wirespeed.azure import outbound
from wirespeed.rules.aks_natgw_zone_redundant import NAT_SKU_FIELD
from wirespeed.sizing import nat_gateway

SPEC = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "azure-rest-api-specs" / "nat-gateway-sku.json").read_text()
)
AKS = SPEC[
    "specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable/2026-06-01/managedClusters.json"
]
NETWORK = SPEC["specification/network/resource-manager/Microsoft.Network/stable/2025-07-01/natGateway.json"]


def definition(spec: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = spec["definitions"][name]
    return found


def test_the_aks_and_network_sku_enums_are_the_skus_sizing_knows():
    assert tuple(definition(AKS, "ManagedClusterNATGatewaySku")["enum"]) == nat_gateway.AZURE_NAT_SKU_NAMES
    assert tuple(definition(NETWORK, "NatGatewaySku")["properties"]["name"]["enum"]) == nat_gateway.AZURE_NAT_SKU_NAMES


def test_the_rule_reads_the_profile_field_the_spec_defines():
    assert NAT_SKU_FIELD == "networkProfile.natGatewayProfile.sku"
    sku = definition(AKS, "ManagedClusterNATGatewayProfile")["properties"]["sku"]
    assert sku["$ref"] == "#/definitions/ManagedClusterNATGatewaySku"
    assert "Defaults to 'StandardV2' where available" in sku["description"]


def test_the_managed_ip_count_and_idle_timeout_are_the_spec_s():
    count = definition(AKS, "ManagedClusterManagedOutboundIPProfile")["properties"]["count"]
    assert (count["minimum"], count["maximum"]) == (1, nat_gateway.AZURE_MAX_IPS)
    timeout = definition(AKS, "ManagedClusterNATGatewayProfile")["properties"]["idleTimeoutInMinutes"]
    assert (timeout["minimum"], timeout["maximum"]) == outbound.IDLE_TIMEOUT_RANGE
    assert timeout["default"] == outbound.NAT_DEFAULT_IDLE_TIMEOUT


def test_the_component_refuses_standard_v2_exactly_while_the_pinned_sdk_cannot_set_the_sku():
    parameters = inspect.signature(containerservice.ManagedClusterNATGatewayProfileArgs.__init__).parameters
    can_set_sku = "sku" in parameters
    assert can_set_sku == (nat_gateway.AZURE_STANDARD_V2 in outbound.COMPONENT_NAT_SKUS), (
        "the pinned pulumi-azure-native's ManagedClusterNATGatewayProfileArgs now takes sku: pass it in "
        "NetworkOptimizedCluster._network_profile and add StandardV2 to COMPONENT_NAT_SKUS"
    )
