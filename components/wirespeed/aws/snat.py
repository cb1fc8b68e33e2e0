# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""What the node agent watches behind AWS NAT gateways: the tuning profile's outbound section from what was sized. Pure.

The agent compares each destination's ports in use on its node with ``55,000 x public_ips`` (wirespeed.sizing.
snat_limits, kind ``aws-nat-gateway``): the IPs of the NAT gateway in the node's AZ. A profile is one document for
every node carrying its label, in whichever AZ they run, so where AZs got different IP counts the profile states the
smallest: SNATPortPressure then fires on time in the tightest AZ (and early in the others) instead of late in it. The
fleet view, summed over the nodes of each AZ against that AZ's own capacity, is the alert WirespeedNATGatewayAZPressure.
The profile's bound for the kind's public_ips (snat_limits.PUBLIC_IPS_RANGES) is a regional gateway's 32 per AZ, so
every count a gateway can have is stated as it is; were an AZ to hold more, the section would state the bound and the
condition fire early, never late.
"""

from __future__ import annotations

from collections.abc import Mapping

from wirespeed.problems import Problem
from wirespeed.profile import Outbound, sized_outbound
from wirespeed.sizing.snat_limits import AWS_NAT_GATEWAY, AWS_NAT_GATEWAY_UDP_HOLD_SECONDS, PUBLIC_IPS_RANGES


def nat_gateway_outbound(ips_per_az: Mapping[str, int], base: Outbound | None = None) -> Outbound:
    """The outbound section for nodes behind these gateways: the smallest AZ's IPs (see the module's docstring);
    ``base``'s threshold, exclusions and TCP hold kept, with the UDP hold of AWS's documented idle timeout."""
    if not ips_per_az:
        raise ValueError("no AZ to take the IPs from")
    ips = min(*ips_per_az.values(), PUBLIC_IPS_RANGES[AWS_NAT_GATEWAY][1])
    return sized_outbound(AWS_NAT_GATEWAY, ips, base, AWS_NAT_GATEWAY_UDP_HOLD_SECONDS)


def check_outbound(value: object) -> Problem | None:
    """An ``outbound`` argument of the EKS components: an Outbound section (NatEgress.profile_outbound) or None."""
    if value is None or isinstance(value, Outbound):
        return None
    return Problem("outbound", value, "a wirespeed.profile.Outbound (such as NatEgress.profile_outbound) or None")
