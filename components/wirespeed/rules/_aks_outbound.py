"""What the AKS outbound SNAT rules share: the field they judge and the Azure documents they cite."""

from __future__ import annotations

from wirespeed.sizing.azure_lb import DYNAMIC_DEFAULT_TABLE

PORTS_FIELD = "networkProfile.loadBalancerProfile.allocatedOutboundPorts"
AKS_LB_DOC = "https://learn.microsoft.com/azure/aks/configure-load-balancer-standard"
LB_DEFAULTS_DOC = "https://learn.microsoft.com/azure/load-balancer/load-balancer-outbound-connections"
# "On September 30, 2025, Basic Load Balancer will be retired", and its SKU table: Basic has no outbound rules
# ("Outbound Rules ... Not available"), so a Basic cluster's SNAT cannot be sized at all.
BASIC_RETIRED_DOC = "https://learn.microsoft.com/azure/load-balancer/load-balancer-basic-upgrade-guidance"
BASIC_RETIRED_ON = "September 30, 2025"
# The smallest bracket of the dynamic table (1,024 ports for 1-50 nodes) is what a small cluster gets by default:
# the floor below which an explicit value makes things worse than leaving it alone (ASOS_AKS_SIZING).
DEFAULT_MINIMUM_PORTS = DYNAMIC_DEFAULT_TABLE[0][1]
