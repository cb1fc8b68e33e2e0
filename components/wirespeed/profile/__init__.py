"""The tuning profile: what the node agent applies (rings per driver, global sysctls, opt-in MTU) and watches
(outbound SNAT headroom).

The profile is a JSON document shared by this library, the Pulumi components and the Go agent. Its JSON
Schema (``data/profile.schema.json``) is generated from the models and committed, so review shows
every contract change; ``tests/vectors/profiles.json`` holds profiles both languages must accept or reject
with the same error locations and messages.

Numbers may arrive as integral floats (``32768.0``): Pulumi hands every number over as a float, so a profile
rendered from stack config must still validate. Fractions, booleans and numeric strings are rejected.

One module per job, every name importable from ``wirespeed.profile`` as before:

- ``fields``: whole numbers, ranges, driver names and interface globs, the strict base model;
- ``sysctls``: the sysctls' ranges (AKS's where AKS takes the sysctl), the allow-list and its typo suggestion;
- ``model``: the interface selector, rings, MTU, the outbound section and the profile;
- ``merge``: a component's sized outbound section merged with the team's choices;
- ``messages``: validation and every problem in the Go agent's words;
- ``schema``: the JSON Schema, as generated and as committed.

Modules inside the package import each other, never this one (it imports them all).
"""

from __future__ import annotations

from wirespeed.problems import SUGGEST_WITHIN_EDITS, did_you_mean, edit_distance, quoted_number
from wirespeed.profile.fields import (
    DRIVER_NAME_PATTERN,
    GLOB_ALLOWED,
    GLOB_PATTERN,
    PROFILE_NAME_PATTERN,
    DriverName,
    NamePattern,
    Range,
    RingEntries,
    WholeNumber,
)
from wirespeed.profile.merge import apply_outbound, sized_outbound, with_outbound
from wirespeed.profile.messages import ProfileError, load_profile, unknown_sysctl, validate_model, validate_profile
from wirespeed.profile.model import (
    CIDR_ALLOWED,
    CIDR_FORMAT,
    DEFAULT_EXCLUDE,
    DEFAULT_ROLES,
    MAX_EXCLUDE_CIDRS,
    MTU,
    PUBLIC_IPS_RANGES,
    SCHEMA_VERSION,
    TCP_HOLD,
    UDP_HOLD,
    AllocatedPorts,
    Cidr,
    InterfaceSelector,
    Outbound,
    Profile,
    RingSize,
    Role,
    _cidr,
)
from wirespeed.profile.schema import SCHEMA_COMMENT, committed_schema, json_schema, render_schema
from wirespeed.profile.sysctls import (
    KNOWN_SYSCTLS,
    Boolean,
    KeepaliveProbes,
    KeepaliveSeconds,
    KernelInt,
    NetdevBudget,
    NetdevBudgetUsecs,
    NetdevMaxBacklog,
    OptmemMax,
    SocketBufferMax,
    Somaxconn,
    Sysctls,
    TcpFinTimeout,
    TcpMaxSynBacklog,
    ZeroToTwo,
    nearest_sysctl,
)
from wirespeed.sizing.snat_limits import OutboundKind

__all__ = [
    "CIDR_ALLOWED",
    "CIDR_FORMAT",
    "DEFAULT_EXCLUDE",
    "DEFAULT_ROLES",
    "DRIVER_NAME_PATTERN",
    "GLOB_ALLOWED",
    "GLOB_PATTERN",
    "KNOWN_SYSCTLS",
    "MAX_EXCLUDE_CIDRS",
    "MTU",
    "PROFILE_NAME_PATTERN",
    "PUBLIC_IPS_RANGES",
    "SCHEMA_COMMENT",
    "SCHEMA_VERSION",
    "SUGGEST_WITHIN_EDITS",
    "TCP_HOLD",
    "UDP_HOLD",
    "AllocatedPorts",
    "Boolean",
    "Cidr",
    "DriverName",
    "InterfaceSelector",
    "KeepaliveProbes",
    "KeepaliveSeconds",
    "KernelInt",
    "NamePattern",
    "NetdevBudget",
    "NetdevBudgetUsecs",
    "NetdevMaxBacklog",
    "OptmemMax",
    "Outbound",
    "OutboundKind",
    "Profile",
    "ProfileError",
    "Range",
    "RingEntries",
    "RingSize",
    "Role",
    "SocketBufferMax",
    "Somaxconn",
    "Sysctls",
    "TcpFinTimeout",
    "TcpMaxSynBacklog",
    "WholeNumber",
    "ZeroToTwo",
    "_cidr",
    "apply_outbound",
    "committed_schema",
    "did_you_mean",
    "edit_distance",
    "json_schema",
    "load_profile",
    "nearest_sysctl",
    "quoted_number",
    "render_schema",
    "sized_outbound",
    "unknown_sysctl",
    "validate_model",
    "validate_profile",
    "with_outbound",
]
