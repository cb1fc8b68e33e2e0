"""NAT gateway rules. AWS: enough IPs for the configured peak to one destination (``aws-natgw-capacity``, both
availability modes), and the Elastic IP quota a zonal gateway's planned IPs need raised first (``aws-natgw-eip-quota``).

A zonal gateway's IPs are its ``allocationId`` plus ``secondaryAllocationIds`` (at most 8). A regional gateway
(``availabilityMode: regional``) has them per AZ in ``availabilityZoneAddresses`` (manual, at most 32 per AZ), or
none given at all (automatic: AWS adds IPs per AZ up to 32, so only a peak beyond 32 IPs fails). The quota is a
separate rule because a level belongs to a rule, not a finding: a gateway above the default quota is not wrong, it
needs a quota increase before it can be created, so that rule is advisory by default while capacity is mandatory.

Azure (``aks-natgw-zone-redundant``, issue 29): an AKS-managed NAT gateway of the Standard SKU lives in one zone, so
pools spread over zones lose egress in all of them with that zone; StandardV2 spans the zones. Advisory: a zonal
gateway works, and moving to StandardV2 replaces the gateway and its egress IPs, a decision the team makes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from wirespeed.rules import _aks
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings, is_type
from wirespeed.sizing import plan_aws_nat_gateway
from wirespeed.sizing.errors import InfeasibleError
from wirespeed.sizing.nat_gateway import (
    AWS_CONNECTIONS_PER_IP,
    AWS_REGIONAL_MAX_IPS_PER_AZ,
    AWS_ZONAL_MAX_IPS,
    AZURE_NAT_SKUS,
    AZURE_STANDARD,
    AZURE_STANDARD_V2,
    NAT_GATEWAY_EIPS,
    REGIONAL,
)
from wirespeed.values import NotKnown, elements, get, text

NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
NAT_DOC = "https://docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html"
QUOTA_DOC = "https://docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html#vpc-limits-eips"
PEAK = "peakConnectionsPerDestination"
# What both rules read to count a gateway's IPs; the capacity rule also reads a regional gateway's per-AZ addresses.
ZONAL_READS = ("connectivityType", "availabilityMode", "secondaryAllocationIds[]")
REGIONAL_READS = tuple(
    f"availabilityZoneAddresses[].{path}" for path in ("availabilityZone", "availabilityZoneId", "allocationIds[]")
)


def _public(props: Any) -> bool:
    return (text(get(props, "connectivityType")) or "public") == "public"


def _regional(props: Any) -> bool:
    return text(get(props, "availabilityMode")) == REGIONAL


def _zonal_ips(props: Any) -> tuple[int, int]:
    """(IPs, secondary IPs) of a zonal gateway: allocationId plus secondaryAllocationIds."""
    secondary = len(list(elements(get(props, "secondaryAllocationIds"), "secondaryAllocationIds")))
    return 1 + secondary, secondary


def _zone_ips(props: Any) -> list[tuple[str, int, int]] | None:
    """(AZ, IPs, index) per entry of a regional gateway's availabilityZoneAddresses; None in automatic mode."""
    addresses = list(elements(get(props, "availabilityZoneAddresses"), "availabilityZoneAddresses"))
    if not addresses:
        return None
    out = []
    for index, address in enumerate(addresses):
        where = f"availabilityZoneAddresses[{index}]"
        az = text(get(address, "availabilityZone")) or text(get(address, "availabilityZoneId")) or where
        out.append((az, len(list(elements(get(address, "allocationIds"), f"{where}.allocationIds"))), index))
    return out


def _shortfall(ips: int, demand: int, where: str) -> str:
    return (
        f"{ips} IP(s) ({where}) carry {ips * AWS_CONNECTIONS_PER_IP:,} simultaneous connections to one destination "
        f"(IP, port, protocol) at {AWS_CONNECTIONS_PER_IP:,} per IP, below the configured peak {demand:,} (policy "
        f"setting {PEAK})"
    )


def _check_regional(resource: Resource, demand: int) -> Iterator[Finding]:
    try:
        plan = plan_aws_nat_gateway(demand, REGIONAL)
    except InfeasibleError as exc:
        yield Finding(
            resource,
            f"No AZ of a regional NAT gateway carries the configured peak {demand:,} (policy setting {PEAK}): {exc}.",
        )
        return
    zones = _zone_ips(resource.props)  # read after the infeasibility check: an unknown list cannot hide that
    if zones is None:
        return  # automatic mode: AWS adds IPs in each AZ up to 32, which carry this peak
    short = [(az, ips, index) for az, ips, index in zones if ips < plan.ips]
    if not short:
        return
    parts = [
        f"{az}: {_shortfall(ips, demand, f'availabilityZoneAddresses[{index}].allocationIds')}; add "
        f"{plan.ips - ips} Elastic IP(s) ({plan.ips} in all)"
        for az, ips, index in short
    ]
    yield Finding(
        resource,
        "Regional NAT gateway, per AZ: " + "; ".join(parts) + ". New connections from those AZs fail with "
        f"ErrorPortAllocation (`wirespeed size aws-natgw --connections {demand} --mode regional`).",
    )


def check_nat_gateway(resource: Resource, settings: Settings) -> Iterator[Finding]:
    demand = int(settings[PEAK])
    props = resource.props
    if demand <= 0 or not _public(props):
        return  # no demand configured, or a private NAT gateway (no Elastic IPs to count)
    if _regional(props):
        yield from _check_regional(resource, demand)
        return
    ips, secondary = _zonal_ips(props)
    if demand <= ips * AWS_CONNECTIONS_PER_IP:
        return
    head = (
        _shortfall(ips, demand, f"allocationId + {secondary} secondaryAllocationIds")
        + ": new connections fail with ErrorPortAllocation."
    )
    try:
        plan = plan_aws_nat_gateway(demand)
    except InfeasibleError as exc:
        yield Finding(resource, f"{head} No zonal NAT gateway carries it: {exc}.")
        return
    warning = f" {plan.warnings[0]}" if plan.warnings else ""
    yield Finding(
        resource,
        f"{head} Add {plan.ips - ips} Elastic IP(s) to secondaryAllocationIds ({plan.ips} in all; "
        f"`wirespeed size aws-natgw --connections {demand}`).{warning}",
    )


NAT_GATEWAY_CAPACITY = Rule(
    id="aws-natgw-capacity",
    description="AWS NAT gateways (zonal, or each AZ of a regional one) have enough IPs for the configured peak "
    "connections to one destination.",
    severity="high",
    default_enforcement="mandatory",
    remediation=f"Add Elastic IPs: to a zonal gateway's secondaryAllocationIds (up to {AWS_ZONAL_MAX_IPS} IPs in "
    "all), or to the short AZ's availabilityZoneAddresses on a regional one (up to "
    f"{AWS_REGIONAL_MAX_IPS_PER_AZ} per AZ); or spread the calls over more destinations; "
    "`wirespeed size aws-natgw --connections N [--mode regional]`.",
    source=NAT_DOC,
    scope="resource",
    types=(NAT_GATEWAY,),
    config_schema={
        PEAK: {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Peak simultaneous connections through one zonal NAT gateway, or from one AZ through a "
            "regional one, to the busiest destination (IP, port, protocol); 0 turns the rule off.",
        }
    },
    reads=(Reads(NAT_GATEWAY, ZONAL_READS + REGIONAL_READS),),
    check=check_nat_gateway,
)


def check_eip_quota(resource: Resource, settings: Settings) -> Iterator[Finding]:
    quota = int(settings["accountQuota"])
    props = resource.props
    if not _public(props) or _regional(props):
        return  # the per-gateway quota is documented for zonal public gateways; a regional AZ takes up to 32
    ips, secondary = _zonal_ips(props)
    if ips <= quota:
        return
    default = " (AWS's default)" if quota == NAT_GATEWAY_EIPS.default else ""
    yield Finding(
        resource,
        f"{ips} Elastic IPs (allocationId + {secondary} secondaryAllocationIds) exceed the account's quota of "
        f"{quota}{default} per NAT gateway (policy setting accountQuota): creating it fails until "
        f"{NAT_GATEWAY_EIPS.label} is raised to {ips} (at most {NAT_GATEWAY_EIPS.ceiling}). Raise it first, then "
        "set accountQuota to the new value.",
    )


NAT_GATEWAY_EIP_QUOTA = Rule(
    id="aws-natgw-eip-quota",
    description="A zonal NAT gateway's Elastic IPs fit the account's 'Elastic IP addresses per public NAT gateway' "
    "quota.",
    severity="medium",
    default_enforcement="advisory",
    remediation=f"Request {NAT_GATEWAY_EIPS.label} (Service Quotas console or `aws service-quotas "
    f"request-service-quota-increase --service-code {NAT_GATEWAY_EIPS.service_code} --quota-code "
    f"{NAT_GATEWAY_EIPS.quota_code} --desired-value N`) before applying, then set accountQuota to the granted value.",
    source=QUOTA_DOC,
    scope="resource",
    types=(NAT_GATEWAY,),
    config_schema={
        "accountQuota": {
            "type": "integer",
            "minimum": 1,
            "maximum": AWS_ZONAL_MAX_IPS,
            "default": NAT_GATEWAY_EIPS.default,
            "description": "The account's 'Elastic IP addresses per public NAT gateway' quota (AWS's default is "
            f"{NAT_GATEWAY_EIPS.default}; Service Quotas {NAT_GATEWAY_EIPS.service_code} "
            f"{NAT_GATEWAY_EIPS.quota_code}).",
        }
    },
    reads=(Reads(NAT_GATEWAY, ZONAL_READS),),
    check=check_eip_quota,
)


# ---------------------------------------------------------------------- Azure: a zonal NAT gateway, zonal pools
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
