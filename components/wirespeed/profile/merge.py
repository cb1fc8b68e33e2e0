"""Merging outbound sections: the section a component fills from what it sized, kept with the team's own choices a
profile already states, and a profile carrying it."""

from __future__ import annotations

from wirespeed.profile.model import Outbound, Profile
from wirespeed.sizing import snat_limits
from wirespeed.sizing.snat_limits import OutboundKind

# The outbound fields that are the team's choices, not the egress' sizing.
_TEAM_FIELDS = ("pressure_percent", "exclude_cidrs", "hold_seconds", "tcp_hold_seconds", "udp_hold_seconds")


def sized_outbound(
    kind: OutboundKind, units: int, base: Outbound | None = None, udp_hold_seconds: int | None = None
) -> Outbound:
    """The outbound section a component fills from what it sized: ``kind`` and its sizing field (``units`` of
    ``allocated_ports_per_node`` or ``public_ips``). The threshold, exclusions and hold times of ``base`` (the section
    a profile already states) are kept: they are the team's choices, the sizing is the component's. The UDP hold is
    the egress' own idle timeout when the component knows it (``udp_hold_seconds``, wirespeed.sizing.snat_limits): a
    fact of what it creates, so it wins over ``base``'s."""
    kept = {} if base is None else base.model_dump(include=set(_TEAM_FIELDS), exclude_none=True)
    if udp_hold_seconds is not None:
        kept["udp_hold_seconds"] = udp_hold_seconds
    return Outbound.model_validate({**kept, "kind": kind, snat_limits.KINDS[kind].sized_by: units})


def with_outbound(profile: Profile, outbound: Outbound | None) -> Profile:
    """``profile`` carrying ``outbound`` (unchanged when None)."""
    if outbound is None or profile.outbound == outbound:
        return profile
    return profile.model_copy(update={"outbound": outbound})


def apply_outbound(profile: Profile, outbound: Outbound | None) -> Profile:
    """``profile`` with ``outbound``'s kind and sizing. The threshold, exclusions and hold time ``outbound`` states
    explicitly win; those it leaves to their defaults stay the profile's own."""
    if outbound is None:
        return profile
    units = outbound.allocated_ports_per_node or outbound.public_ips
    assert units is not None, "the model requires the kind's sizing field"
    section = sized_outbound(outbound.kind, units, profile.outbound)
    stated = {k: getattr(outbound, k) for k in _TEAM_FIELDS if k in outbound.model_fields_set}
    return with_outbound(profile, section.model_copy(update=stated) if stated else section)
