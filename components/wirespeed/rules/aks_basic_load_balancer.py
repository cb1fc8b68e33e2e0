"""aks-basic-load-balancer: AKS clusters do not use the retired Basic Load Balancer, whose SNAT cannot be sized."""

from __future__ import annotations

from collections.abc import Iterator

from wirespeed.rules import _aks
from wirespeed.rules._aks_outbound import BASIC_RETIRED_DOC, BASIC_RETIRED_ON
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings


def check_basic_load_balancer(resource: Resource, settings: Settings) -> Iterator[Finding]:
    if not _aks.uses_basic_load_balancer(resource.props):
        return
    yield Finding(
        resource,
        f"networkProfile.loadBalancerSku is basic: Azure retired the Basic Load Balancer on {BASIC_RETIRED_ON} "
        f"({BASIC_RETIRED_DOC}), and it has no outbound rules, so the cluster's SNAT ports and outbound IPs cannot "
        "be sized (the SNAT rules judge only the Standard Load Balancer). Set loadBalancerSku to standard (a new "
        "cluster: AKS cannot change the SKU in place) and size its outbound ports with `wirespeed size azure-lb`.",
    )


BASIC_LOAD_BALANCER = Rule(
    id="aks-basic-load-balancer",
    order=130,
    description="AKS clusters do not use the Basic Load Balancer, retired on September 30, 2025, which has no "
    "outbound rules to size.",
    severity="high",
    default_enforcement="mandatory",
    remediation="Create the cluster with networkProfile.loadBalancerSku standard (AKS cannot change the SKU of an "
    "existing cluster) and set allocatedOutboundPorts and its outbound IPs with `wirespeed size azure-lb`.",
    source=f"{BASIC_RETIRED_DOC} (retirement on {BASIC_RETIRED_ON}; Basic has no outbound rules)",
    scope="resource",
    types=(_aks.CLUSTER,),
    config_schema={},
    reads=(Reads(_aks.CLUSTER, ("networkProfile.loadBalancerSku",)),),
    check=check_basic_load_balancer,
)

RULE = BASIC_LOAD_BALANCER
