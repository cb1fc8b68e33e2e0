# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""The profile's models: the interface selector, rings per driver, the opt-in MTU, the outbound section and the
profile that holds them with its sysctls (whose allow-list is wirespeed.profile.sysctls)."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    JsonValue,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from wirespeed import message_table
from wirespeed.profile.fields import (
    PROFILE_NAME_PATTERN,
    WHOLE_NUMBER,
    DriverName,
    NamePattern,
    Range,
    RingEntries,
    WholeNumber,
    _Strict,
)
from wirespeed.profile.sysctls import Sysctls
from wirespeed.sizing import snat_limits
from wirespeed.sizing.snat_limits import OutboundKind

SCHEMA_VERSION: Literal[1] = 1

Role = Literal["sriov-vf", "primary", "virtual"]
"""How the agent classifies a link.

- ``sriov-vf``: a PCI virtual function (``device/physfn`` exists) or a device enslaved to a synthetic NIC
  (Azure accelerated networking: the Mellanox or MANA VF under ``hv_netvsc`` eth0).
- ``primary``: any other link backed by a bus device (ENA, hv_netvsc eth0, e1000e, virtio-net).
- ``virtual``: no backing device (veth, bridge, dummy, tunnels). Never selected unless a profile asks.
"""

DEFAULT_ROLES: tuple[Role, ...] = ("sriov-vf", "primary")

# Host-side ends of CNI plumbing and container bridges; tuning them wastes memory or breaks the CNI.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    "lo",
    "veth*",
    "lxc*",
    "cilium_*",
    "cni*",
    "flannel*",
    "vxlan*",
    "geneve*",
    "genev_sys_*",
    "tunl*",
    "docker*",
    "br-*",
    "virbr*",
    "kube-*",
    "azv*",
    "eni*",
    "antrea-*",
    "weave*",
)


class RingSize(_Strict):
    """Desired descriptor counts for one driver. Omit a direction to leave it alone."""

    rx: RingEntries | None = Field(default=None, description="RX descriptors (64..65,536; device max wins)")
    tx: RingEntries | None = Field(default=None, description="TX descriptors (64..65,536; device max wins)")


class InterfaceSelector(_Strict):
    """Which links the agent tunes. A link is selected when its role is listed, its driver is listed (or
    the list is empty), its name matches an ``include`` glob (or the list is empty) and no ``exclude`` glob."""

    # Plain defaults (pydantic copies them per instance) rather than factories, so the JSON Schema carries
    # them and the Go agent reads its defaults from the same embedded schema.
    roles: list[Role] = Field(default=list(DEFAULT_ROLES), min_length=1)
    drivers: list[DriverName] = Field(default=[], description="empty: any driver")
    include: list[NamePattern] = Field(default=[], description="shell globs; empty: any name")
    exclude: list[NamePattern] = Field(default=list(DEFAULT_EXCLUDE))


class MTU(_Strict):
    """Opt-in MTU. Only safe inside one VNet/VPC: gateways, peering and the internet stay at 1,500."""

    # 1,280 is the IPv6 minimum link MTU (RFC 8200 section 5); 9,216 the largest jumbo any catalog NIC takes.
    value: Annotated[int, WholeNumber, Range(1_280, 9_216)]
    drivers: list[DriverName] = Field(default_factory=list, description="empty: every selected interface")


# The outbound section. Bounds and per-kind facts come from wirespeed.sizing.snat_limits (their sources are there).
AllocatedPorts = Range(*snat_limits.ALLOCATED_PORTS_RANGE, multiple_of=snat_limits.ALLOCATED_PORTS_MULTIPLE)
# public_ips is bounded per kind (an Azure NAT gateway's most IPs, an AWS regional one's per AZ): the range is checked
# with the kind, and the schema carries it in each kind's rule (_kind_rules), named by the rule's description.
PUBLIC_IPS_RANGES = {kind: Range(*bounds) for kind, bounds in snat_limits.PUBLIC_IPS_RANGES.items()}


def _absent_is_not_null(schema: dict[str, Any]) -> None:
    """An optional field's absence is its default; null is not a value the schema allows, so no "default": null."""
    schema.pop("default", None)


TCP_HOLD = Range(*snat_limits.TCP_HOLD_SECONDS_RANGE)
UDP_HOLD = Range(*snat_limits.UDP_HOLD_SECONDS_RANGE)
MAX_EXCLUDE_CIDRS = 256  # wirespeed's bound: a pod and a service range per cluster, with room for many more
CIDR_FORMAT = "cidr"  # a JSON Schema format the Go agent registers: the message below, the same rules
CIDR_ALLOWED = message_table.say("cidr")


def _cidr(value: str) -> str:
    """An address and a decimal prefix length, as Go's netip.ParsePrefix takes it: no zone, no netmask form, no
    leading zeros. Host bits may be set (10.0.0.1/8 means 10.0.0.0/8), as both ip_network and netip allow."""
    address, slash, bits = value.partition("/")
    try:
        if not slash or "%" in address or not bits.isascii() or not bits.isdigit() or bits != str(int(bits)):
            raise ValueError(value)
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ValueError(CIDR_ALLOWED) from None
    return value


Cidr = Annotated[str, AfterValidator(_cidr), WithJsonSchema({"type": "string", "format": CIDR_FORMAT})]

# Which kinds size themselves by a field: a profile states the field of its kind and never the other one.
_SIZED_BY_FIELDS: tuple[snat_limits.SizedBy, ...] = ("allocated_ports_per_node", "public_ips")


def _only_with(field: str) -> str:
    kinds = [json.dumps(kind) for kind, limits in snat_limits.KINDS.items() if limits.sized_by == field]
    return "only with kind " + " or ".join(kinds)


def _with_kind(kind: str) -> str:
    return f"with kind {json.dumps(kind)}"


def _kind_rules() -> list[JsonValue]:
    """JSON Schema for what pydantic checks across fields below: each kind requires its own sizing field and
    refuses the other (the refusal's ``description`` is the message the Go agent shows), and bounds ``public_ips``
    by the kind (the bound's ``description`` names the kind after the range in the agent's message)."""
    rules: list[JsonValue] = []
    for kind, limits in snat_limits.KINDS.items():
        fields: dict[str, JsonValue] = {
            f: {"not": {}, "description": _only_with(f)} for f in _SIZED_BY_FIELDS if f != limits.sized_by
        }
        if kind in PUBLIC_IPS_RANGES:
            bound = PUBLIC_IPS_RANGES[kind].json_schema()
            fields["public_ips"] = {k: bound[k] for k in ("minimum", "maximum")} | {"description": _with_kind(kind)}
        rules.append(
            {
                "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                "then": {"required": [limits.sized_by], "properties": fields},
            }
        )
    return rules


class Outbound(_Strict):
    """How the node's pool egresses to the internet and what its SNAT was sized with. The agent counts the ports
    in use per destination on the node and sets the ``SNATPortPressure`` Node condition when one destination passes
    ``pressure_percent`` of the capacity this gives (wirespeed.sizing.snat_limits: the allocated ports for an Azure
    load balancer; 50,000 per IP for an Azure NAT gateway, 55,000 per IP for an AWS one, shared by every node
    behind the gateway)."""

    model_config = ConfigDict(json_schema_extra={"allOf": _kind_rules()})

    # kind comes first: the field validators below read it from the fields validated before them.
    kind: OutboundKind
    allocated_ports_per_node: Annotated[
        int | None, WholeNumber, AllocatedPorts, WithJsonSchema(AllocatedPorts.json_schema())
    ] = Field(default=None, description="azure-load-balancer only: allocatedOutboundPorts, the node's SNAT ports")
    public_ips: Annotated[int | None, WholeNumber, WithJsonSchema({"type": "integer"})] = Field(
        default=None,
        description=(
            "the NAT gateway's public IPs (aws-nat-gateway: of the gateway in the node's AZ); the range is the kind's"
        ),
    )
    pressure_percent: Annotated[int, WholeNumber, Range(*snat_limits.PRESSURE_PERCENT_RANGE)] = Field(
        default=snat_limits.DEFAULT_PRESSURE_PERCENT,
        description="SNATPortPressure threshold: % of one destination's capacity",
    )
    exclude_cidrs: list[Cidr] = Field(
        default=[],
        max_length=MAX_EXCLUDE_CIDRS,
        description="cluster-internal ranges beyond the agent's built-in private ones (pod and service CIDRs)",
    )
    hold_seconds: Annotated[int, WholeNumber, Range(*snat_limits.AGENT_HOLD_SECONDS_RANGE)] = Field(
        default=snat_limits.DEFAULT_AGENT_HOLD_SECONDS,
        description=(
            "seconds a flow still holds its SNAT port after it ended, for every protocol without its own hold "
            "below (a TCP flow ends at its close, a UDP flow at its last packet); the only hold of older profiles"
        ),
    )
    tcp_hold_seconds: Annotated[
        int | None, WholeNumber, Range(*snat_limits.TCP_HOLD_SECONDS_RANGE), WithJsonSchema(TCP_HOLD.json_schema())
    ] = Field(
        default=None,
        description="seconds a TCP flow still holds its SNAT port after its close; absent: hold_seconds",
        json_schema_extra=_absent_is_not_null,
    )
    udp_hold_seconds: Annotated[
        int | None, WholeNumber, Range(*snat_limits.UDP_HOLD_SECONDS_RANGE), WithJsonSchema(UDP_HOLD.json_schema())
    ] = Field(
        default=None,
        description=(
            "seconds a UDP flow still holds its SNAT port after its last packet (the egress' UDP idle timeout); "
            "absent: hold_seconds"
        ),
        json_schema_extra=_absent_is_not_null,
    )

    @field_validator("tcp_hold_seconds", "udp_hold_seconds", mode="before")
    @classmethod
    def _hold_not_null(cls, value: object) -> object:
        # Absent means hold_seconds; a stated null is refused, as the schema's integer type refuses it in Go.
        if value is None:
            raise PydanticCustomError("int_type", WHOLE_NUMBER)
        return value

    def tcp_hold(self) -> int:
        """Seconds a TCP flow holds its port after its close."""
        return self.hold_seconds if self.tcp_hold_seconds is None else self.tcp_hold_seconds

    def udp_hold(self) -> int:
        """Seconds a UDP flow holds its port after its last packet."""
        return self.hold_seconds if self.udp_hold_seconds is None else self.udp_hold_seconds

    @field_validator("allocated_ports_per_node", "public_ips", mode="before")
    @classmethod
    def _only_for_its_kind(cls, value: object, info: ValidationInfo) -> object:
        # Runs only for a field the document states (null included); kind is in info.data once it was valid.
        kind = info.data.get("kind")
        if kind is not None and snat_limits.KINDS[kind].sized_by != info.field_name:
            raise ValueError(_only_with(str(info.field_name)))
        if value is None:
            raise PydanticCustomError("int_type", WHOLE_NUMBER)
        return value

    @field_validator("public_ips")
    @classmethod
    def _public_ips_in_kind_range(cls, value: int | None, info: ValidationInfo) -> int | None:
        # After the whole-number check. A kind without a bound (the load balancer's) refused the field already
        # (_only_for_its_kind), and an invalid kind is not in info.data: its own error is the one reported.
        bounds = PUBLIC_IPS_RANGES.get(info.data.get("kind"))  # type: ignore[arg-type]
        if value is None or bounds is None or bounds.low <= value <= bounds.high:
            return value
        within = message_table.say("range", step="", low=f"{bounds.low:,}", high=f"{bounds.high:,}")
        raise ValueError(f"{within} {_with_kind(info.data['kind'])}")

    @model_validator(mode="wrap")
    @classmethod
    def _sizing_field_required(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Outbound:
        """The kind's own sizing field is required, reported with every other problem of the section."""
        missing: list[InitErrorDetails] = []
        kind = data.get("kind") if isinstance(data, Mapping) else None
        limits = snat_limits.KINDS.get(kind) if isinstance(kind, str) else None  # type: ignore[call-overload]
        if limits is not None and limits.sized_by not in data:
            missing.append({"type": "missing", "loc": (limits.sized_by,), "input": data})
        try:
            validated: Outbound = handler(data)
        except ValidationError as exc:
            if not missing:
                raise
            raise ValidationError.from_exception_data(cls.__name__, [*_init_errors(exc), *missing]) from None
        if missing:
            raise ValidationError.from_exception_data(cls.__name__, missing)
        return validated

    def capacity(self) -> int:
        """Ports one destination may use (wirespeed.sizing.snat_limits), what SNATPortPressure compares against."""
        limits = snat_limits.KINDS[self.kind]
        units = self.allocated_ports_per_node if limits.sized_by == "allocated_ports_per_node" else self.public_ips
        assert units is not None, "validation requires the kind's sizing field"
        return limits.capacity(units)


def _init_errors(exc: ValidationError) -> list[InitErrorDetails]:
    """``exc``'s errors in the form ValidationError.from_exception_data takes, to re-raise them with more."""
    out: list[InitErrorDetails] = []
    for err in exc.errors():
        detail: InitErrorDetails = {"type": err["type"], "loc": err["loc"], "input": err["input"]}
        if "ctx" in err:
            detail["ctx"] = err["ctx"]
        out.append(detail)
    return out


# The continuous probe's defaults and bounds live here: wirespeed.numbers writes them into the agent as Go constants
# (agent/internal/numbers: ProbePort, ProbePeers, ProbeStreams, ProbeMaxPeers, ProbeMaxStreams, ProbeOneOffMaxPeers),
# which agent/internal/probe's DefaultProbePort, DefaultFleetPeers, DefaultStreams, MaxFleetPeers, MaxStreams and
# MaxPeers are; the agent's TestProbeSectionMatchesTheAgent holds the schema generated from these to them. The port
# sits next to the metrics port (not registered with IANA); the peers bound keeps a fleet at N x peers x streams
# connections, not N²; 8 peers x 4 streams at 1 round trip a second keeps a node under 100 kb/s each way
# (bench/agent/RESULTS.md).
PROBE_DEFAULT_PORT = 9_809
PROBE_DEFAULT_PEERS = 8
PROBE_DEFAULT_STREAMS = 4
PROBE_MAX_PEERS = 32
PROBE_MAX_STREAMS = 64
# The one-off probe's (`wirespeed-agent probe --peer`, no profile) most peers, beside the continuous bound so the two
# read together: a command line's worth of peers, each with its own streams, within the server's per-source limit.
PROBE_ONE_OFF_MAX_PEERS = 64
PROBE_PORT = Range(1, 65_535)  # a TCP port (RFC 793: 16 bits; 0 is no port to listen on)
PROBE_PEERS = Range(1, PROBE_MAX_PEERS)
PROBE_STREAMS = Range(1, PROBE_MAX_STREAMS)


class Probe(_Strict):
    """The agent's continuous request/response probe (agent/README.md, "Continuous probe"): present, it runs
    (as the agent's --probe flag does); each field is the default of its --probe-* flag, which overrides it."""

    port: Annotated[int, WholeNumber, PROBE_PORT] = Field(
        default=PROBE_DEFAULT_PORT, description="host TCP port the probe serves and dials (open it between nodes)"
    )
    peers: Annotated[int, WholeNumber, PROBE_PEERS] = Field(
        default=PROBE_DEFAULT_PEERS,
        description="peers probed, chosen by rendezvous hashing, other zones and pools first",
    )
    streams: Annotated[int, WholeNumber, PROBE_STREAMS] = Field(
        default=PROBE_DEFAULT_STREAMS, description="synchronous 1-byte request/response streams per peer"
    )


class Profile(_Strict):
    """A tuning profile, as the node agent reads it."""

    # JSON has no comments: "$comment" (JSON Schema's own keyword for one) lets a document say where it comes
    # from, as the built-in profiles say which command generated them. It is checked to be a string and then
    # dropped, so it never reaches the agent's ConfigMap and two profiles differing only in it are equal.
    comment: str = Field(
        default="",
        alias="$comment",
        exclude=True,
        repr=False,
        title="Comment",
        description="a note for readers (e.g. which command generated the file); ignored",
    )
    schema_version: Literal[1] = SCHEMA_VERSION
    name: Annotated[str, StringConstraints(pattern=PROFILE_NAME_PATTERN)]

    @field_validator("schema_version", mode="before")
    @classmethod
    def _version_not_bool(cls, value: object) -> object:
        # Python's True == 1, so Literal[1] alone takes `true`; the schema (and so the agent) refuses it.
        if isinstance(value, bool):
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": str(SCHEMA_VERSION)})
        return value

    description: str = ""
    interfaces: InterfaceSelector = Field(default_factory=InterfaceSelector)
    rings: dict[DriverName, RingSize] = Field(
        default_factory=dict,
        description="desired rings per driver name (as `ethtool -i` reports it)",
        json_schema_extra={"additionalProperties": False},
    )
    sysctls: Sysctls = Field(default_factory=Sysctls)
    mtu: MTU | None = Field(default=None, description="absent: MTU is left alone")
    outbound: Outbound | None = Field(default=None, description="absent: no SNATPortPressure condition")
    probe: Probe | None = Field(default=None, description="absent: no continuous probe (unless the agent's --probe)")

    @field_validator("comment")
    @classmethod
    def _drop_comment(cls, _note: str) -> str:
        return ""

    def to_json_dict(self) -> dict[str, Any]:
        """The canonical JSON form (aliases, no unset sysctls)."""
        data = self.model_dump(by_alias=True, mode="json", exclude_none=True)
        data["sysctls"] = self.sysctls.as_dict()
        return data
