"""aks-natgw-zone-redundant: an AKS-managed NAT gateway of the Standard SKU lives in one zone, so pools spread over
zones lose egress in all of them with that zone; StandardV2 spans the zones. Advisory: a zonal gateway works, and
moving to StandardV2 replaces the gateway and its egress IPs, a decision the team makes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from wirespeed.rules import _aks
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings, is_type
from wirespeed.sizing.nat_gateway import AZURE_NAT_SKUS, AZURE_STANDARD, AZURE_STANDARD_V2
from wirespeed.values import NotKnown, elements, get, text

NAT_SKU_DOC = "https://learn.microsoft.com/azure/nat-gateway/nat-sku"
# learn.microsoft.com/azure/aks/nat-gateway ("Create an AKS cluster with a managedNATgateway"): "A managed NAT
# gateway resource can't be used across multiple availability zones. For zone-redundant outbound connectivity,
# consider using" StandardV2 (MicrosoftDocs/azure-aks-docs articles/aks/nat-gateway.md at commit
# 0ae74e39acd5fb1bbe48b5ccd689979e46329471, ms.date 04/15/2026); nat-sku: a Standard gateway "is deployed into a
# specific availability zone", so that zone's outage takes the outbound of every zone the pools run in.
AKS_NAT_DOC = "https://learn.microsoft.com/azure/aks/nat-gateway"
# ManagedClusterNATGatewayProfile.sku, API 2026-06-01 (Azure/azure-rest-api-specs .../aks/stable/2026-06-01/
# managedClusters.json at commit 079dcbac5a6ec3c3585067160dc21e2a0baf6824). Moving a cluster to it replaces the gateway
# and its egress IPs (StandardV2 takes StandardV2 public IPs only): the AKS team's announcement "Announcing StandardV2
# NAT Gateway for AKS-managed egress" (2026-09-29): "AKS removes the Standard NAT gateway and provisions a StandardV2
# NAT gateway in its place ... Your egress IP addresses change during this migration."
NAT_SKU_FIELD = "networkProfile.natGatewayProfile.sku"
ZONE_READS = ("name", "availabilityZones[]")
CLUSTER_ZONE_READS = (
    "networkProfile.outboundType",
    NAT_SKU_FIELD,
    *(f"agentPoolProfiles[].{path}" for path in ZONE_READS),
    *_aks.CLUSTER_NAME_READS,
)


def _managed_nat_sku(props: Any) -> str | None:
    """The SKU of a cluster's AKS-managed NAT gateway (absent: Standard, as on every API before 2026-06-01, where
    the field does not exist); None when the cluster's egress is not a managed NAT gateway."""
    if text(get(props, "networkProfile", "outboundType")) != "managedNATGateway":
        return None
    return text(get(props, "networkProfile", "natGatewayProfile", "sku")) or AZURE_STANDARD


def _pool_zones(profile: Any, label: str) -> tuple[str, tuple[str, ...]]:
    zones = tuple(sorted({str(z) for z in elements(get(profile, "availabilityZones"), f"{label}.availabilityZones")}))
    return label, zones


def _cluster_zones(cluster: Resource, pool_index: _aks.PoolIndex) -> list[tuple[str, tuple[str, ...]]]:
    """(pool label, its zones) for every pool of the cluster: inline profiles, then separate AgentPools."""
    props = _aks.merged(cluster)
    pools = [_pool_zones(profile, label) for profile, label in _aks.inline_pool_profiles(props)]
    for resource in pool_index.pools_of(cluster):
        pools.append(_pool_zones(_aks.merged(resource), text(get(_aks.merged(resource), "name")) or resource.name))
    return pools


def _zone_finding(cluster: Resource, sku: str, pools: list[tuple[str, tuple[str, ...]]]) -> Finding | None:
    zones = sorted({z for _, pool_zones in pools for z in pool_zones})
    if len(zones) < 2:
        return None  # every node in one zone (or none pinned): a zonal gateway shares their fate already
    spread = "; ".join(f"{label}: {', '.join(z)}" for label, z in pools if z)
    v2 = AZURE_NAT_SKUS[AZURE_STANDARD_V2]
    given = "" if text(get(_aks.merged(cluster), *NAT_SKU_FIELD.split("."))) else " (no sku: Standard)"
    return Finding(
        cluster,
        f"The AKS-managed NAT gateway is {sku}{given}, a zonal resource in one availability zone, but the pools "
        f"run in zones {', '.join(zones)} ({spread}): when the gateway's zone fails, outbound connections fail in "
        f"every zone. Set {NAT_SKU_FIELD} to {AZURE_STANDARD_V2} (zone-redundant, up to {v2.gbps} Gbps, the same "
        f"{v2.ports_per_ip:,} SNAT ports per IP and {v2.max_ipv4} IPs; API 2026-06-01; AKS replaces the gateway and "
        f"its {v2.public_ip_sku} public IPs change the egress addresses), or accept the zone risk with a reason.",
    )


def check_nat_zone_redundancy(resources: Sequence[Resource], settings: Settings) -> Iterator[Finding]:
    pool_index = _aks.PoolIndex(resources)
    for cluster in resources:
        if not is_type(cluster, _aks.CLUSTER):
            continue
        try:
            sku = _managed_nat_sku(_aks.merged(cluster))
            if sku is None or sku == AZURE_STANDARD_V2:
                continue
            finding = _zone_finding(cluster, sku, _cluster_zones(cluster, pool_index))
        except NotKnown as exc:
            yield Finding(cluster, "", unknown=exc.path)
            continue
        if finding is not None:
            yield finding


NAT_GATEWAY_ZONE_REDUNDANT = Rule(
    id="aks-natgw-zone-redundant",
    order=140,
    description="An AKS-managed NAT gateway serving pools spread over several availability zones is StandardV2 "
    "(zone-redundant), not a zonal Standard gateway whose one zone takes every zone's egress down.",
    severity="medium",
    default_enforcement="advisory",
    remediation=f"Set {NAT_SKU_FIELD} to {AZURE_STANDARD_V2} (AKS API 2026-06-01 or later; AKS replaces the gateway "
    f"and the egress IPs change to {AZURE_STANDARD_V2} public IPs); size it with `wirespeed size azure-natgw --sku "
    f"{AZURE_STANDARD_V2}`.",
    source=f"{NAT_SKU_DOC} (Standard is zonal, StandardV2 zone-redundant); {AKS_NAT_DOC}",
    scope="stack",
    types=(_aks.CLUSTER, _aks.AGENT_POOL),
    config_schema={},
    reads=(
        Reads(
            _aks.CLUSTER,
            CLUSTER_ZONE_READS,
            not_in_terraform={
                "name": _aks.NAME_FROM_RESOURCE_NAME,
                NAT_SKU_FIELD: "the pinned azurerm provider's kubernetes_cluster nat_gateway_profile has no SKU "
                "argument, so a Terraform cluster's managed gateway reads as Standard",
            },
        ),
        Reads(
            _aks.AGENT_POOL,
            ZONE_READS + _aks.POOL_CLUSTER_READS,
            not_in_terraform={"id": _aks.ID_FROM_RESOURCE_ID},
        ),
    ),
    check=check_nat_zone_redundancy,
)

RULE = NAT_GATEWAY_ZONE_REDUNDANT
