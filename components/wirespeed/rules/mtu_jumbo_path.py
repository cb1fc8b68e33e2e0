"""mtu-jumbo-path: jumbo MTU in a tuning profile only where node traffic never leaves through a gateway."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from wirespeed.rules import _aks, _k8s
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings, is_type
from wirespeed.sizing.mtu import DEFAULT_MTU
from wirespeed.values import get, whole

# --- mtu-jumbo-path ---------------------------------------------------------------------------------------------

# Resources through which node traffic leaves the VNet/VPC (MTU 1,500 beyond them: docs.aws.amazon.com/AWSEC2/
# latest/UserGuide/network_mtu.html, "MTU limit 1500 bytes": internet gateway, VPN, inter-region;
# learn.microsoft.com/azure/virtual-network/how-to-virtual-machine-mtu: more than 1,500 only within the VNet). An AKS
# cluster always has one: its outbound type is a load balancer, a NAT gateway or a user-defined route.
GATEWAYS = (
    "aws:ec2/natGateway:NatGateway",
    "aws:ec2/internetGateway:InternetGateway",
    "aws:ec2/egressOnlyInternetGateway:EgressOnlyInternetGateway",
    "aws:ec2/vpnGateway:VpnGateway",
    "aws:ec2transitgateway/transitGateway:TransitGateway",
    "aws:ec2/vpcPeeringConnection:VpcPeeringConnection",
    "azure-native:network:NatGateway",
    "azure-native:network:VirtualNetworkGateway",
    "azure-native:network:VirtualNetworkPeering",
    _aks.CLUSTER,
)


def check_mtu_path(resources: Sequence[Resource], settings: Settings) -> Iterator[Finding]:
    gateways = [r for r in resources if is_type(r, *GATEWAYS)]
    if not gateways:
        return
    named = ", ".join(f"{g.name} ({g.type})" for g in gateways[:3]) + (" ..." if len(gateways) > 3 else "")
    for resource in resources:
        profile = _k8s.profile_in(resource)
        if profile is None:
            continue
        mtu = whole(get(profile.document, "mtu", "value"))
        if mtu is None or mtu <= DEFAULT_MTU:
            continue
        yield Finding(
            resource,
            f"{profile.where}: mtu.value is {mtu:,}, but this stack's traffic also leaves through {named}, "
            f"and gateways carry at most {DEFAULT_MTU:,}: TCP then depends on path MTU discovery, and UDP or "
            "ICMP-filtered paths black-hole. Keep mtu only if node traffic stays inside the VNet/VPC, else remove it "
            "(`wirespeed size mtu --driver D --crosses-gateway`).",
        )


MTU_JUMBO_PATH = Rule(
    id="mtu-jumbo-path",
    order=110,
    description="Jumbo MTU in a tuning profile only where node traffic never leaves through a gateway.",
    severity="medium",
    default_enforcement="advisory",
    remediation="Remove mtu from the profile, or keep it only for nodes whose traffic stays inside one VNet/VPC.",
    source="https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/network_mtu.html; "
    "https://learn.microsoft.com/azure/virtual-network/how-to-virtual-machine-mtu",
    scope="stack",
    types=(_k8s.CONFIG_MAP, *GATEWAYS),
    config_schema={},
    # A gateway counts by its type alone.
    reads=(Reads(_k8s.CONFIG_MAP, (_k8s.PROFILE_READ,)), *(Reads(g) for g in GATEWAYS)),
    check=check_mtu_path,
)

RULE = MTU_JUMBO_PATH
