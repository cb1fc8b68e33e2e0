# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""What one destination can use of outbound SNAT, per kind of egress: the node agent's headroom check.

A tuning profile's ``outbound`` section (wirespeed.profile) says how the node's pool egresses and what it was sized
with; the agent counts the ports in use per destination on the node (from the kernel's conntrack table) and sets the
``SNATPortPressure`` Node condition when one destination nears the capacity below. Every number and the way each
kind keys a destination live here once and reach the Go agent as ``data/snat_limits.json`` (``make regen`` writes
it and copies it into the agent; a test on each side proves its copy current).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from wirespeed.sizing import azure_lb, nat_gateway

OutboundKind = Literal["azure-load-balancer", "azure-nat-gateway", "aws-nat-gateway"]
AZURE_LOAD_BALANCER: OutboundKind = "azure-load-balancer"
AZURE_NAT_GATEWAY: OutboundKind = "azure-nat-gateway"
AWS_NAT_GATEWAY: OutboundKind = "aws-nat-gateway"

SizedBy = Literal["allocated_ports_per_node", "public_ips"]
# How flows are grouped into what one SNAT capacity bounds: per destination address and port, or (UDP through an
# Azure load balancer) every flow of the node in one pool, whatever its destination.
DestinationKey = Literal["address-port", "node"]


@dataclass(frozen=True)
class KindLimits:
    """One kind of egress: which profile field sizes it and what one destination may use per unit of that field."""

    kind: OutboundKind
    sized_by: SizedBy
    per_unit: int
    # True when one gateway's capacity is shared by every node behind it: a node comparing its own use against it
    # sees a lower bound, and the fleet view (the alert, `wirespeed size --from-prometheus`) sums nodes.
    shared: bool
    tcp_destination: DestinationKey
    udp_destination: DestinationKey
    source: str

    def capacity(self, units: int) -> int:
        """Flows one destination may hold: ``units`` of ``sized_by`` times ``per_unit``."""
        return self.per_unit * units

    def to_json(self) -> dict[str, Any]:
        return {
            "sized_by": self.sized_by,
            "per_unit": self.per_unit,
            "shared": self.shared,
            "destination": {"tcp": self.tcp_destination, "udp": self.udp_destination},
            "source": self.source,
        }


KINDS: dict[OutboundKind, KindLimits] = {
    AZURE_LOAD_BALANCER: KindLimits(
        AZURE_LOAD_BALANCER,
        "allocated_ports_per_node",
        1,
        shared=False,
        tcp_destination="address-port",
        udp_destination="node",
        source=(
            "learn.microsoft.com/azure/load-balancer/load-balancer-outbound-connections, 'SNAT ports (TCP)': one SNAT "
            "port per flow to one destination IP, port and protocol, shared by flows to different destinations; "
            "'SNAT ports (UDP)': a port-restricted cone NAT, one SNAT port per flow whatever its destination IP and "
            "port, so every UDP flow of the node draws on its allocation (TCP and UDP are allocated separately). "
            "The same page's 'Port reuse' says one SNAT port per destination IP whatever the destination port; of "
            "the two readings wirespeed counts the larger, every UDP flow, so a measured peak never under-counts"
        ),
    ),
    AZURE_NAT_GATEWAY: KindLimits(
        AZURE_NAT_GATEWAY,
        "public_ips",
        nat_gateway.AZURE_CONNECTIONS_PER_DESTINATION_PER_IP,
        shared=True,
        tcp_destination="address-port",
        udp_destination="address-port",
        source=(
            "learn.microsoft.com/azure/nat-gateway/nat-gateway-resource, 'Performance': up to 50,000 concurrent "
            "connections per public IP to the same destination endpoint, TCP and UDP"
        ),
    ),
    AWS_NAT_GATEWAY: KindLimits(
        AWS_NAT_GATEWAY,
        "public_ips",
        nat_gateway.AWS_CONNECTIONS_PER_IP,
        shared=True,
        tcp_destination="address-port",
        udp_destination="address-port",
        source=(
            "docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html: 55,000 simultaneous connections to "
            "each unique destination (IP, port, protocol) per IP of the gateway, one gateway per AZ; "
            "nat-gateways-regional.html: a regional gateway's IPs in the node's AZ"
        ),
    ),
}

# The profile's bounds. allocatedOutboundPorts is 0..64,000 in multiples of 8 (azure_lb); 0 hands the number to
# Azure's shrinking default, so a profile states what was actually allocated: 8 or more.
ALLOCATED_PORTS_RANGE = (azure_lb.PORT_GRANULARITY, azure_lb.MAX_PORTS_PER_NODE)
ALLOCATED_PORTS_MULTIPLE = azure_lb.PORT_GRANULARITY
# The most public IPs a node's gateway has, per kind (the profile states what was deployed): an Azure NAT gateway
# takes up to 16 (nat_gateway.AZURE_MAX_IPS, learn.microsoft.com/azure/nat-gateway/nat-gateway-resource); an AWS one
# up to 32 in the node's AZ on a regional gateway (nat_gateway.AWS_REGIONAL_MAX_IPS_PER_AZ, docs.aws.amazon.com/vpc/
# latest/userguide/nat-gateways-regional.html), 8 on a zonal one (within that bound). The sources are beside the
# constants.
PUBLIC_IPS_RANGES: dict[OutboundKind, tuple[int, int]] = {
    AZURE_NAT_GATEWAY: (1, nat_gateway.AZURE_MAX_IPS),
    AWS_NAT_GATEWAY: (1, nat_gateway.AWS_REGIONAL_MAX_IPS_PER_AZ),
}
# wirespeed's choice, not a cloud's: warn at 80% of a destination's capacity, early enough to add ports or IPs.
PRESSURE_PERCENT_RANGE = (1, 100)
DEFAULT_PRESSURE_PERCENT = 80
# The Azure Monitor alert on the load balancer's UsedSnatPorts (azure.spec.SnatAlertSpec, Pulumi.yaml's
# wirespeed:snatAlertPercent) warns at the same share of a node's allocated ports, for the same reason.
DEFAULT_SNAT_ALERT_PERCENT = float(DEFAULT_PRESSURE_PERCENT)
# How long a closed flow still holds its port. ASOS on an AKS load balancer ([asos-aks-sizing],
# docs/references.md): a port is reusable for the same destination about 4 minutes after use
# (azure_lb.AZURE_LB_TCP_RELEASE_SECONDS). The load balancer's own release
# rules (learn.microsoft.com/azure/load-balancer/load-balancer-outbound-connections, "SNAT port release behavior"):
# TCP 4 minutes after a FIN/ACK, 15 s after a RST, at once when the idle timeout is reached; UDP only when the idle
# timeout is reached. So the default is exact after a FIN and over-counts after a RST; a UDP port stays taken for the
# outbound rule's idle timeout after the flow's last packet (Azure's default, or AKS's,
# azure_lb.AKS_LB_DEFAULT_IDLE_TIMEOUT), which a hold below it under-counts: hence udp_hold_seconds (below), filled
# from the idle timeout. Azure NAT gateway holds a port
# 65 s after a FIN, 16 s after a RST and 65 s after a UDP flow ends (learn.microsoft.com/azure/nat-gateway/
# nat-gateway-resource, "Port reuse timers"); the default over-counts there, never under-counts. This is the agent's
# hold (the profile's outbound.hold_seconds): whole seconds, and 0 is real (it counts open flows only), where the
# workload sizing's hold (azure_lb.DEFAULT_WORKLOAD_HOLD_SECONDS) is a float from 1.
AGENT_HOLD_SECONDS_RANGE = (0, azure_lb.WORKLOAD_HOLD_SECONDS_RANGE[1])
DEFAULT_AGENT_HOLD_SECONDS = azure_lb.AZURE_LB_TCP_RELEASE_SECONDS
# Per protocol (the profile's tcp_hold_seconds / udp_hold_seconds; hold_seconds stays the hold of a protocol given
# none of its own). TCP is held after the flow's close, so its bound is the single hold's. A UDP flow has no close:
# conntrack drops its entry a timeout after the last packet, and the egress holds the port for its own idle timeout
# from that packet, so the UDP bound is the longest idle timeout the egresses take, the same for an Azure load
# balancer's outbound rule and an Azure NAT gateway (the top of azure_lb.OUTBOUND_IDLE_TIMEOUT_RANGE, cited there).
TCP_HOLD_SECONDS_RANGE = AGENT_HOLD_SECONDS_RANGE
UDP_HOLD_SECONDS_RANGE = (0, azure_lb.OUTBOUND_IDLE_TIMEOUT_RANGE[1] * 60)
# What a component fills for UDP from the egress it creates, in seconds after a flow's last packet:
# - Azure load balancer: the outbound rule's idleTimeoutInMinutes x 60 (learn.microsoft.com/azure/load-balancer/
#   load-balancer-outbound-connections, "SNAT port release behavior": a UDP port is released only when the idle
#   timeout is reached), so udp_hold_from_idle_timeout(minutes).
# - Azure NAT gateway: its UDP idle timeout is 4 minutes and not configurable (idleTimeoutInMinutes applies to TCP),
#   then the port waits the 65 s UDP reuse timer (learn.microsoft.com/azure/nat-gateway/nat-gateway-resource,
#   "Timers" and "Port reuse timers"): 4 x 60 + 65.
# - AWS NAT gateway: a connection idle for 350 s or more times out (docs.aws.amazon.com/vpc/latest/userguide/
#   nat-gateway-troubleshooting.html, "Internet connection drops after 350 seconds"); AWS documents no separate UDP
#   timer and no reuse delay, so 350.
AZURE_NAT_GATEWAY_UDP_IDLE_SECONDS = 4 * 60
AZURE_NAT_GATEWAY_UDP_REUSE_SECONDS = 65
AZURE_NAT_GATEWAY_UDP_HOLD_SECONDS = AZURE_NAT_GATEWAY_UDP_IDLE_SECONDS + AZURE_NAT_GATEWAY_UDP_REUSE_SECONDS
AWS_NAT_GATEWAY_IDLE_SECONDS = 350
AWS_NAT_GATEWAY_UDP_HOLD_SECONDS = AWS_NAT_GATEWAY_IDLE_SECONDS


def udp_hold_from_idle_timeout(minutes: int) -> int:
    """An Azure load balancer's UDP hold: its outbound rule's idle timeout, in seconds after the last packet."""
    return minutes * 60


def limits_document() -> dict[str, Any]:
    """The shared JSON's content: every kind, with the field that sizes it and its source."""
    return {
        "comment": (
            "Generated by `python -m wirespeed.sizing.snat_limits` (make regen) from KINDS in that module; do not "
            "edit: change the module and regenerate. The node agent embeds a byte-equal copy "
            "(agent/internal/profile/snat_limits.json). Per-destination capacity of a kind = per_unit x the "
            "profile's outbound.<sized_by>."
        ),
        "kinds": {kind: limits.to_json() for kind, limits in KINDS.items()},
    }


def render_limits() -> str:
    """The shared file's exact text."""
    return json.dumps(limits_document(), indent=2, sort_keys=True) + "\n"


def committed_limits_text() -> str:
    """The file as committed in the package data."""
    return resources.files("wirespeed").joinpath("data/snat_limits.json").read_text()


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_limits())
