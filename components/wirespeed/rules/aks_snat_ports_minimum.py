"""aks-snat-ports-minimum: AKS clusters allocate at least the minimum SNAT ports per node, in a value Azure accepts."""

from __future__ import annotations

from collections.abc import Iterator

from wirespeed.references import ASOS_AKS_SIZING
from wirespeed.rules import _aks
from wirespeed.rules._aks_outbound import AKS_LB_DOC, DEFAULT_MINIMUM_PORTS, PORTS_FIELD
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings
from wirespeed.sizing.azure_lb import DEFAULT_WORKLOAD_HOLD_SECONDS, MAX_PORTS_PER_NODE, PORT_GRANULARITY


def check_ports_minimum(resource: Resource, settings: Settings) -> Iterator[Finding]:
    props = resource.props
    if not _aks.uses_load_balancer(props):
        return
    refused = _aks.refused_ports(props)
    if refused is not None:
        shown = f"{refused:,g}" if isinstance(refused, float) else repr(refused)
        yield Finding(
            resource,
            f"{PORTS_FIELD} is {shown}, which Azure refuses: it must be a whole multiple of {PORT_GRANULARITY} "
            f"between 0 and {MAX_PORTS_PER_NODE:,} ({AKS_LB_DOC}), so the cluster create or update fails. Set a "
            f"multiple of {PORT_GRANULARITY} (`wirespeed size azure-lb` picks one from the pools and the workload).",
        )
        return
    minimum = int(settings["minimumPorts"])
    ports = _aks.allocated_ports(props)
    if not _aks.uses_load_balancer(props) or ports == 0 or ports >= minimum:
        return
    rate = ports / DEFAULT_WORKLOAD_HOLD_SECONDS
    yield Finding(
        resource,
        f"{PORTS_FIELD} is {ports:,}, below the minimum of {minimum:,} (policy setting minimumPorts): each node "
        f"can hold at most {ports:,} connections to one destination (IP, port, protocol) at a time, and a port "
        f"stays reserved about {DEFAULT_WORKLOAD_HOLD_SECONDS:g} s after its connection closes, so {ports:,} "
        f"ports sustain only ~{rate:.2g} new connections/s per node to a busy destination before SNAT exhaustion. Set "
        f"allocatedOutboundPorts to at least {minimum:,} and add the outbound IPs it needs "
        "(`wirespeed size azure-lb`).",
    )


SNAT_PORTS_MINIMUM = Rule(
    id="aks-snat-ports-minimum",
    order=30,
    description="AKS clusters allocate at least the minimum SNAT ports per node, in a value Azure accepts.",
    severity="high",
    default_enforcement="mandatory",
    remediation="Raise networkProfile.loadBalancerProfile.allocatedOutboundPorts to the minimum and add outbound "
    "IPs so the capacity rule still holds (`wirespeed size azure-lb`).",
    source=f"{ASOS_AKS_SIZING.short} (~1,024 new connections per node exhaust SNAT); {AKS_LB_DOC}",
    scope="resource",
    types=(_aks.CLUSTER,),
    config_schema={
        "minimumPorts": {
            "type": "integer",
            "minimum": PORT_GRANULARITY,
            "maximum": MAX_PORTS_PER_NODE,
            "default": DEFAULT_MINIMUM_PORTS,
            "description": "Smallest allowed allocatedOutboundPorts per node (Azure's default for 1-50 nodes).",
        }
    },
    reads=(Reads(_aks.CLUSTER, _aks.OUTBOUND_READS),),
    check=check_ports_minimum,
)

RULE = SNAT_PORTS_MINIMUM
