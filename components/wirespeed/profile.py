"""The tuning profile: what the node agent applies (rings per driver, global sysctls, opt-in MTU) and watches
(outbound SNAT headroom).

The profile is a JSON document shared by this library, the Pulumi components and the Go agent. Its JSON
Schema (``data/profile.schema.json``) is generated from the models below and committed, so review shows
every contract change; ``tests/vectors/profiles.json`` holds profiles both languages must accept or reject
with the same error locations and messages.

Numbers may arrive as integral floats (``32768.0``): Pulumi hands every number over as a float, so a profile
rendered from stack config must still validate. Fractions, booleans and numeric strings are rejected.
"""

from __future__ import annotations

import ast
import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    JsonValue,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, InitErrorDetails, PydanticCustomError, core_schema

from wirespeed import message_table
from wirespeed.errors import UserError
from wirespeed.problems import SUGGEST_WITHIN_EDITS, did_you_mean, edit_distance, quoted_number
from wirespeed.sizing import snat_limits
from wirespeed.sizing.aks_sysctls import BY_KERNEL_NAME as AKS_SYSCTLS
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

DRIVER_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"
PROFILE_NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
# An interface-name glob as the agent matches it (Go's path.Match): literals, * and ?, a backslash escape, or a
# class [...] (optional ^) of one or more characters or ranges a-z, where ']' and '-' must be escaped. Go reports
# anything else (a lone '[', '[]', '[a-]', a trailing '\\') as ErrBadPattern at match time and the glob then
# silently matches no link; in the schema it is refused before the agent starts, by Python and Go alike. (The
# empty string matches here so that only min_length reports it.)
_GLOB_CHAR = r"(?:[^\]\\\-]|\\.)"
_GLOB_ITEM = rf"{_GLOB_CHAR}(?:-{_GLOB_CHAR})?"
# A '^' right after '[' negates (Go); the class still needs an item after it.
_GLOB_FIRST = r"(?:[^\]\\\-^]|\\.)" + rf"(?:-{_GLOB_CHAR})?"
GLOB_PATTERN = rf"^(?:[^\[\\]|\\.|\[(?:\^{_GLOB_ITEM}|{_GLOB_FIRST})(?:{_GLOB_ITEM})*\])*$"
GLOB_ALLOWED = message_table.say("glob")
# Messages are worded in the shared table (wirespeed.message_table), which the Go agent reads too.
WHOLE_NUMBER = message_table.must_be_types("integer")


def _whole_number(value: object) -> object:
    """Accept ints and integral floats (Pulumi's numbers); refuse bools, strings and fractions."""
    if isinstance(value, bool | str):
        raise ValueError(WHOLE_NUMBER)
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(WHOLE_NUMBER)
        return int(value)
    return value


@dataclass(frozen=True)
class Range:
    """Pydantic metadata: an inclusive integer range (optionally in steps) whose error names the whole range, not
    just the bound that was crossed, and whose JSON Schema carries ``minimum``/``maximum``/``multipleOf`` for the
    Go agent, which words a failure of any of them the same way."""

    low: int
    high: int
    multiple_of: int = 1

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return self.json_schema()

    def json_schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "integer", "minimum": self.low, "maximum": self.high}
        if self.multiple_of > 1:
            out["multipleOf"] = self.multiple_of
        return out

    def _check(self, value: int) -> int:
        if not self.low <= value <= self.high or value % self.multiple_of:
            step = message_table.say("range_step", step=f"{self.multiple_of:,}") if self.multiple_of > 1 else ""
            raise ValueError(message_table.say("range", step=step, low=f"{self.low:,}", high=f"{self.high:,}"))
        return value


WholeNumber = BeforeValidator(_whole_number)

# Ring bounds are deliberately loose: the agent clamps to what the device reports (`ethtool -g` max) and
# rounds by the driver's rule (catalog NIC facts). 65,536 is above every driver's max in the catalog.
RingEntries = Annotated[int, WholeNumber, Range(64, 65_536)]


def _aks_range(kernel_name: str) -> tuple[int, int]:
    row = AKS_SYSCTLS[kernel_name]
    return row.low, row.high


# Sysctl ranges. Where AKS's custom node configuration accepts the same sysctl, its range is used so one
# profile is valid on both clouds (learn.microsoft.com/azure/aks/custom-node-configuration, "Linux OS
# custom configuration"); the lower bound is the kernel default, below which the profile would de-tune.
NetdevMaxBacklog = Annotated[int, WholeNumber, Range(*_aks_range("net.core.netdev_max_backlog"))]
# Kernel default 300 (Documentation/admin-guide/sysctl/net.rst, netdev_budget); upper bound keeps one
# softirq round from starving user space for more than a few ms.
NetdevBudget = Annotated[int, WholeNumber, Range(300, 100_000)]
# Kernel default 2 jiffies = 2,000 us at HZ=1000, 8,000 us at HZ=250 (sysctl/net.rst, netdev_budget_usecs).
NetdevBudgetUsecs = Annotated[int, WholeNumber, Range(1_000, 100_000)]
SocketBufferMax = Annotated[int, WholeNumber, Range(*_aks_range("net.core.rmem_max"))]  # wmem_max: the same range
OptmemMax = Annotated[int, WholeNumber, Range(*_aks_range("net.core.optmem_max"))]
Somaxconn = Annotated[int, WholeNumber, Range(*_aks_range("net.core.somaxconn"))]
TcpMaxSynBacklog = Annotated[int, WholeNumber, Range(*_aks_range("net.ipv4.tcp_max_syn_backlog"))]
TcpFinTimeout = Annotated[int, WholeNumber, Range(*_aks_range("net.ipv4.tcp_fin_timeout"))]
# A kernel int with no documented bound: what the agent's writer (and the kernel's proc_dointvec) takes. The kernel
# still has the last word; a value it refuses is logged by the agent and the boot script, never half-applied.
KernelInt = Annotated[int, WholeNumber, Range(0, 2_147_483_647)]
# Documented as 0 (off), 1 (on), 2 (loopback only / always): tcp_tw_reuse, tcp_mtu_probing (ip-sysctl.rst).
ZeroToTwo = Annotated[int, WholeNumber, Range(0, 2)]
Boolean = Annotated[int, WholeNumber, Range(0, 1)]  # ip-sysctl.rst "BOOLEAN": 0 or 1
# The bounds a socket may set the same option to (include/net/tcp.h MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL,
# MAX_TCP_KEEPCNT): the sysctl is those options' default, so a default no socket could choose is refused.
KeepaliveSeconds = Annotated[int, WholeNumber, Range(1, 32_767)]
KeepaliveProbes = Annotated[int, WholeNumber, Range(1, 127)]

DriverName = Annotated[str, StringConstraints(pattern=DRIVER_NAME_PATTERN)]
NamePattern = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=GLOB_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)


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


class Sysctls(_Strict):
    """Global (host network namespace) sysctls: the allow-list of what a profile may set, by kernel name.

    A name outside it is refused (a typo must not pass as a sysctl nobody sets). Every entry is an integer sysctl the
    agent can write (it mounts the host's /proc/sys/net; see the DaemonSet) and the EKS boot script can persist; names
    and meanings from the kernel's Documentation/admin-guide/sysctl/net.rst (net.core), Documentation/networking/
    ip-sysctl.rst (net.ipv4, net.ipv6) and Documentation/networking/nf_conntrack-sysctl.rst (net.netfilter). String
    and vector sysctls (tcp_rmem, ip_local_port_range) are not here: the agent writes single integers; AKS sets
    ip_local_port_range at node creation (wirespeed.sizing.aks_sysctls)."""

    # net.core: the receive path and socket buffers (sysctl/net.rst).
    netdev_max_backlog: NetdevMaxBacklog | None = Field(default=None, alias="net.core.netdev_max_backlog")
    netdev_budget: NetdevBudget | None = Field(default=None, alias="net.core.netdev_budget")
    netdev_budget_usecs: NetdevBudgetUsecs | None = Field(default=None, alias="net.core.netdev_budget_usecs")
    rmem_max: SocketBufferMax | None = Field(default=None, alias="net.core.rmem_max")
    wmem_max: SocketBufferMax | None = Field(default=None, alias="net.core.wmem_max")
    # A default buffer within the range a max may take: the kernel default (212,992) up to AKS's largest max.
    rmem_default: SocketBufferMax | None = Field(default=None, alias="net.core.rmem_default")
    wmem_default: SocketBufferMax | None = Field(default=None, alias="net.core.wmem_default")
    optmem_max: OptmemMax | None = Field(default=None, alias="net.core.optmem_max")
    somaxconn: Somaxconn | None = Field(default=None, alias="net.core.somaxconn")
    busy_poll: KernelInt | None = Field(default=None, alias="net.core.busy_poll")  # microseconds; 0 is off
    busy_read: KernelInt | None = Field(default=None, alias="net.core.busy_read")  # microseconds; 0 is off
    # net.ipv4: TCP and the neighbour table (ip-sysctl.rst).
    tcp_max_syn_backlog: TcpMaxSynBacklog | None = Field(default=None, alias="net.ipv4.tcp_max_syn_backlog")
    tcp_fin_timeout: TcpFinTimeout | None = Field(default=None, alias="net.ipv4.tcp_fin_timeout")
    tcp_tw_reuse: ZeroToTwo | None = Field(default=None, alias="net.ipv4.tcp_tw_reuse")
    tcp_max_tw_buckets: KernelInt | None = Field(default=None, alias="net.ipv4.tcp_max_tw_buckets")
    tcp_keepalive_time: KeepaliveSeconds | None = Field(default=None, alias="net.ipv4.tcp_keepalive_time")
    tcp_keepalive_intvl: KeepaliveSeconds | None = Field(default=None, alias="net.ipv4.tcp_keepalive_intvl")
    tcp_keepalive_probes: KeepaliveProbes | None = Field(default=None, alias="net.ipv4.tcp_keepalive_probes")
    tcp_slow_start_after_idle: Boolean | None = Field(default=None, alias="net.ipv4.tcp_slow_start_after_idle")
    tcp_mtu_probing: ZeroToTwo | None = Field(default=None, alias="net.ipv4.tcp_mtu_probing")
    ipv4_gc_thresh1: KernelInt | None = Field(default=None, alias="net.ipv4.neigh.default.gc_thresh1")
    ipv4_gc_thresh2: KernelInt | None = Field(default=None, alias="net.ipv4.neigh.default.gc_thresh2")
    ipv4_gc_thresh3: KernelInt | None = Field(default=None, alias="net.ipv4.neigh.default.gc_thresh3")
    # net.ipv6: the same neighbour-table thresholds (ip-sysctl.rst, "neigh/default/*" applies to both families).
    ipv6_gc_thresh1: KernelInt | None = Field(default=None, alias="net.ipv6.neigh.default.gc_thresh1")
    ipv6_gc_thresh2: KernelInt | None = Field(default=None, alias="net.ipv6.neigh.default.gc_thresh2")
    ipv6_gc_thresh3: KernelInt | None = Field(default=None, alias="net.ipv6.neigh.default.gc_thresh3")
    # net.netfilter: conntrack's size and timeouts in seconds (nf_conntrack-sysctl.rst). max and buckets are global:
    # only the host's network namespace may write them.
    nf_conntrack_max: KernelInt | None = Field(default=None, alias="net.netfilter.nf_conntrack_max")
    nf_conntrack_buckets: KernelInt | None = Field(default=None, alias="net.netfilter.nf_conntrack_buckets")
    nf_conntrack_tcp_timeout_established: KernelInt | None = Field(
        default=None, alias="net.netfilter.nf_conntrack_tcp_timeout_established"
    )
    nf_conntrack_tcp_timeout_time_wait: KernelInt | None = Field(
        default=None, alias="net.netfilter.nf_conntrack_tcp_timeout_time_wait"
    )
    nf_conntrack_udp_timeout: KernelInt | None = Field(default=None, alias="net.netfilter.nf_conntrack_udp_timeout")
    nf_conntrack_udp_timeout_stream: KernelInt | None = Field(
        default=None, alias="net.netfilter.nf_conntrack_udp_timeout_stream"
    )

    def as_dict(self) -> dict[str, int]:
        """Every set sysctl by its dotted name."""
        out = {k: v for k, v in self.model_dump(by_alias=True).items() if v is not None}
        return {name: int(value) for name, value in sorted(out.items())}


KNOWN_SYSCTLS: tuple[str, ...] = tuple(sorted(str(f.alias) for f in Sysctls.model_fields.values()))
"""Every sysctl a profile may set, by kernel name (the Sysctls model's allow-list, which the schema carries)."""


def nearest_sysctl(name: str) -> str | None:
    """The known sysctl ``name`` is most likely a typo of (fewest edits, then alphabetical), or None."""
    best = min(KNOWN_SYSCTLS, key=lambda known: (edit_distance(name, known), known))
    return best if edit_distance(name, best) <= SUGGEST_WITHIN_EDITS else None


def unknown_sysctl(name: str) -> str:
    """The refusal of a sysctl outside the allow-list, word for word what the Go agent says."""
    near = nearest_sysctl(name)
    hint = message_table.say("sysctl_hint", near=_json(near)) if near else ""
    names = message_table.LIST_SEPARATOR.join(KNOWN_SYSCTLS)
    return message_table.say("unknown_sysctl", name=_json(name), count=len(KNOWN_SYSCTLS), hint=hint, names=names)


class MTU(_Strict):
    """Opt-in MTU. Only safe inside one VNet/VPC: gateways, peering and the internet stay at 1,500."""

    # 1,280 is the IPv6 minimum link MTU (RFC 8200 section 5); 9,216 the largest jumbo any catalog NIC takes.
    value: Annotated[int, WholeNumber, Range(1_280, 9_216)]
    drivers: list[DriverName] = Field(default_factory=list, description="empty: every selected interface")


# The outbound section. Bounds and per-kind facts come from wirespeed.sizing.snat_limits (their sources are there).
AllocatedPorts = Range(*snat_limits.ALLOCATED_PORTS_RANGE, multiple_of=snat_limits.ALLOCATED_PORTS_MULTIPLE)
# public_ips is bounded per kind (an Azure NAT gateway's 16, an AWS regional gateway's 32 per AZ): the range is checked
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

    @field_validator("comment")
    @classmethod
    def _drop_comment(cls, _note: str) -> str:
        return ""

    def to_json_dict(self) -> dict[str, Any]:
        """The canonical JSON form (aliases, no unset sysctls)."""
        data = self.model_dump(by_alias=True, mode="json", exclude_none=True)
        data["sysctls"] = self.sysctls.as_dict()
        return data


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


class ProfileError(UserError, ValueError):
    """A profile failed validation. ``problems`` lists (JSON pointer, message), one per bad field."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("invalid profile:\n" + "\n".join(f"  {path}: {msg}" for path, msg in problems))


def _pointer(loc: tuple[int | str, ...]) -> str:
    # A bad dict key is reported by pydantic as <key>/[key]: point at the key itself.
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in loc if p != "[key]"]
    return "/" + "/".join(parts)


def _json(value: object) -> str:
    """A value of the document as JSON, as the Go agent shows it (compact, integral floats as integers)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)


_plural = message_table.plural


def _literal_values(expected: str) -> list[Any] | None:
    """pydantic words a Literal's values as ``'a', 'b' or 'c'`` (their reprs): read them back."""
    head, _, last = expected.rpartition(" or ")
    try:
        parsed = ast.literal_eval(f"[{head}, {last}]" if head else f"[{last}]")
    except (ValueError, SyntaxError):
        return None
    return list(parsed) if isinstance(parsed, list) else None


# pydantic error types for a value of the wrong JSON type, as the JSON type the shared table words (as Go does).
_JSON_TYPE = {
    "string_type": "string",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "list_type": "array",
    "int_type": "integer",
    "bool_type": "boolean",
}


def _allowed(error: Mapping[str, Any]) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    say = message_table.say
    if kind in _JSON_TYPE:
        return message_table.must_be_types(_JSON_TYPE[kind])
    if kind == "string_pattern_mismatch":
        return GLOB_ALLOWED if ctx["pattern"] == GLOB_PATTERN else say("must_match", pattern=ctx["pattern"])
    if kind == "literal_error" and (values := _literal_values(str(ctx.get("expected", "")))):
        if len(values) == 1:
            return say("must_be", what=_json(values[0]))
        return say("must_be_one_of", values=message_table.LIST_SEPARATOR.join(_json(v) for v in values))
    if kind == "too_long":
        return say("at_most_items", count=_plural(ctx["max_length"], "item"))
    if kind == "too_short":
        return say("at_least_items", count=_plural(ctx["min_length"], "item"))
    if kind == "string_too_short":
        return say("at_least_long", count=_plural(ctx["min_length"], "character"))
    if kind == "string_too_long":
        return say("at_most_long", count=_plural(ctx["max_length"], "character"))
    return str(error["msg"]).removeprefix("Value error, ")


def _model_in(annotation: object) -> tuple[type[BaseModel] | None, bool]:
    """The model a field's annotation holds (through Optional, Annotated, list), and whether it is a dict's value."""
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    is_dict = typing.get_origin(annotation) is dict
    for arg in typing.get_args(annotation):
        model, _ = _model_in(arg)
        if model is not None:
            return model, is_dict
    return None, False


def _fields_at(loc: Sequence[object]) -> list[str]:
    """The JSON names of the fields known where ``loc`` points (a profile's object at that path), for a typo's
    suggestion; the Go agent reads the same names from the schema's properties there."""
    model: type[BaseModel] | None = Profile
    skip_key = False
    for part in loc:
        if model is None:
            return []
        if skip_key or isinstance(part, int):
            skip_key = False
            continue
        by_json = {(f.alias or name): f for name, f in model.model_fields.items()}
        if str(part) not in by_json:
            return []
        model, skip_key = _model_in(by_json[str(part)].annotation)
    return [] if model is None else [(f.alias or name) for name, f in model.model_fields.items()]


def _describe(error: Mapping[str, Any]) -> str:
    """One problem in the words the Go agent uses too (tests/vectors/profiles.json holds both's exact text):
    "is required", "is not a known field", or "<value as JSON> is not allowed: <what is>"."""
    if error["type"] == "missing":
        return message_table.say("required")
    if error["type"] == "extra_forbidden":
        loc = error["loc"]
        if len(loc) == 2 and loc[0] == "sysctls":
            return unknown_sysctl(str(loc[1]))
        return message_table.say("unknown_field", hint=did_you_mean(str(loc[-1]), _fields_at(loc[:-1])))
    allowed, value = _allowed(error), error.get("input")
    if isinstance(value, str) and allowed in message_table.NUMBER_WORDS:
        allowed = quoted_number(value, allowed)
    return message_table.say("not_allowed", value=_json(value), allowed=allowed)


_Model = TypeVar("_Model", bound=BaseModel)


def validate_profile(data: Mapping[str, Any]) -> Profile:
    """Validate a profile document, collecting every problem before raising one :class:`ProfileError`."""
    return validate_model(Profile, data)


def validate_model(model: type[_Model], data: Mapping[str, Any]) -> _Model:
    """``data`` as ``model`` (a profile, or a part of one such as :class:`Outbound`), every problem in one
    :class:`ProfileError` with its JSON pointer within ``data``: the component provider reads the plain values
    other Pulumi languages send through this, in the words a profile document gets."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            problems.append((_pointer(loc), _describe(err)))
        raise ProfileError(problems) from None


def _refuse_constant(name: str) -> object:
    # Python's json reads NaN and Infinity; JSON (RFC 8259) and Go's encoding/json, which the agent uses, refuse them.
    raise ValueError(f"{name} is not a JSON value")


def load_profile(text: str) -> Profile:
    """Parse and validate a profile from JSON text: the documents the Go agent refuses are refused here too, in the
    same words where the words are not the JSON parser's own (tests/vectors/profiles.json, ``invalid_text``)."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ProfileError([("/", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")]) from None
    except (ValueError, RecursionError) as exc:
        # json raises these for numbers past int's digit limit and for nesting past the recursion limit.
        raise ProfileError([("/", f"not valid JSON: {exc}")]) from None
    if not isinstance(data, dict):
        not_object = message_table.say("not_allowed", value=_json(data), allowed=message_table.must_be_types("object"))
        raise ProfileError([("/", not_object)])
    return validate_profile(data)


# The committed schema's marker ("$comment" is a JSON Schema keyword: validators ignore it).
SCHEMA_COMMENT = (
    "Generated by `wirespeed profile schema` (make regen) from the models in wirespeed/profile.py into "
    "components/wirespeed/data/profile.schema.json; make regen copies that file byte for byte to "
    "agent/internal/profile/profile.schema.json, which the Go agent embeds. Do not edit either: change the models."
)


def json_schema() -> dict[str, Any]:
    """The profile JSON Schema (draft 2020-12) shared with the Go agent."""
    schema = Profile.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://wirespeed.io/schemas/profile-v1.json"
    schema["$comment"] = SCHEMA_COMMENT
    return schema


def committed_schema() -> dict[str, Any]:
    """The schema as committed in the package data (what the agent embeds)."""
    text = resources.files("wirespeed").joinpath("data/profile.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def render_schema() -> str:
    """The schema file's exact text."""
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
