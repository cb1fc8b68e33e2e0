"""`wirespeed plan`: size one cluster's node pools offline from a workload description.

The workload file says what the platform team knows (pools, peak outbound connection rate, the SKU); the plan
says what to set (SNAT ports and IPs or NAT gateway IPs, rings, backlog) and which profile the agent applies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wirespeed import catalog
from wirespeed.errors import UserError
from wirespeed.problems import did_you_mean, quoted_number
from wirespeed.sizing import aws_nat, azure_lb, backlog, nat_gateway, rings
from wirespeed.sizing.errors import SizingError


class _Strict(BaseModel):
    # strict: a number written as a string ("12") is refused, as in every JSON input wirespeed reads (docs/inputs.md).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class NodePool(_Strict):
    name: str
    max_count: Annotated[int, Field(ge=1, le=azure_lb.MAX_POOL_NODES)]
    max_surge: str = Field(default="10%", description="a node count ('2') or a percent ('10%')")


class Outbound(_Strict):
    connections_per_second: Annotated[float, Field(gt=0)] | None = None
    hold_seconds: float = azure_lb.DEFAULT_WORKLOAD_HOLD_SECONDS
    headroom: float = azure_lb.DEFAULT_HEADROOM
    nat_gateway_connections: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="AWS: peak concurrent connections per AZ to the busiest destination"
    )
    nat_gateway_mode: Literal["zonal", "regional"] = Field(
        default="zonal", description="AWS: one NAT gateway per AZ (zonal) or one for the VPC (regional)"
    )
    availability_zones: Annotated[int, Field(ge=1, le=32)] = Field(
        default=aws_nat.DEFAULT_AZS, description="AWS: AZs the cluster's egress leaves from"
    )


class Nic(_Strict):
    driver: str
    host_line_rate_gbps: Annotated[float, Field(gt=0, le=800)]


class Workload(_Strict):
    name: str
    cloud: Literal["azure", "aws"]
    instance_type: str
    node_pools: list[NodePool] = Field(min_length=1)
    outbound: Outbound
    nic: Nic


@dataclass(frozen=True)
class WorkloadPlan:
    workload: Workload
    instance: catalog.InstanceType
    outbound: azure_lb.LoadBalancerPlan | aws_nat.AwsNatPlan
    rings: rings.RingPlan
    backlog: backlog.BacklogPlan

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload.name,
            "instance_type": self.instance.to_json(),
            "outbound": self.outbound.to_json(),
            "rings": self.rings.to_json(),
            "backlog": self.backlog.to_json(),
            "settings": self.settings(),
            "network_optimised_alternatives": [t.name for t in self.alternatives()],
            "profile": {
                "rings": {self.rings.driver: {"rx": self.rings.rx, "tx": self.rings.tx}},
                "sysctls": {"net.core.netdev_max_backlog": self.backlog.netdev_max_backlog},
            },
        }

    def explain(self) -> str:
        i = self.instance
        bandwidth = f"{i.baseline_gbps:g} Gb/s" + (
            f" (bursts to {i.burst_gbps:g})" if i.burst_gbps != i.baseline_gbps else ""
        )
        sections = [
            f"# {self.workload.name} ({self.workload.cloud})",
            f"## Instance type\n{i.name}: {i.vcpu} vCPU, {i.memory_gib:g} GiB, {bandwidth}, NIC {i.nic}"
            + ("" if i.network_optimised else "; not network-optimised"),
            "## Outbound\n" + self.outbound.explain(),
            "## NIC rings\n" + self.rings.explain(),
            "## Backlog\n" + self.backlog.explain(),
            "## What to set\n" + "\n".join(self.settings()),
        ]
        return "\n\n".join(sections)

    def alternatives(self) -> list[catalog.InstanceType]:
        """Network-optimised types of the same cloud and vCPU count, when the chosen one is not; never a preview
        series' size (a team is not told to move production onto one)."""
        if self.instance.network_optimised:
            return []
        same_shape = [
            t
            for t in catalog.instance_types(cloud=self.instance.cloud, network_optimised=True)
            if t.vcpu == self.instance.vcpu and t.architecture == self.instance.architecture and not t.preview
        ]
        return sorted(same_shape, key=lambda t: (-t.baseline_gbps, t.name))

    def settings(self) -> list[str]:
        out = []
        if isinstance(self.outbound, azure_lb.LoadBalancerPlan):
            lb = self.outbound
            out.append(
                f"- networkProfile.loadBalancerProfile: allocatedOutboundPorts {lb.allocated_outbound_ports}, "
                f"managedOutboundIPs.count {lb.outbound_ips}"
            )
            out.append(
                f"- agent pool linuxOSConfig.sysctls.netCoreNetdevMaxBacklog {self.backlog.netdev_max_backlog} "
                "(create-only: changing it replaces the pool), or let the node agent apply it"
            )
        else:
            nat = self.outbound
            ips = sorted({z.plan.ips for z in nat.zones})
            where = "per AZ's NAT gateway" if nat.mode == "zonal" else "per AZ of one regional NAT gateway"
            out.append(f"- {'/'.join(str(n) for n in ips)} IP(s) {where} ({nat.total_ips} Elastic IPs in all)")
            out.append(f"- net.core.netdev_max_backlog {self.backlog.netdev_max_backlog} (node agent)")
        out.append(f"- node agent: {self.rings.driver} rings RX {self.rings.rx}, TX {self.rings.tx}")
        better = self.alternatives()
        if better:
            names = ", ".join(f"{t.name} ({t.baseline_gbps:g} Gb/s, {t.nic})" for t in better[:4])
            out.append(f"- consider a network-optimised type with {self.instance.vcpu} vCPU: {names}")
        return out


def load_workload(path: Path | None) -> Workload:
    """Read a workload file; None loads the bundled example. Every failure is a ``UserError`` naming the file:
    not a regular file, too large, unreadable, not UTF-8 (``InputFileError``), not JSON or not a workload
    (:class:`SizingError`)."""
    if path is None:
        text = resources.files("wirespeed").joinpath("data/examples/workload.json").read_text()
        source = "bundled example"
    else:
        from wirespeed.io_limits import SMALL_LIMIT, InputFileError, read_text

        try:
            text = read_text(path, SMALL_LIMIT, f"workload: {path}", "workload JSON file")
        except InputFileError as exc:
            exc.field = "workload"  # the CLI names it --workload
            raise
        source = str(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SizingError(source, f"line {exc.lineno}", f"valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        # json raises these for numbers past int's digit limit and for nesting past the recursion limit.
        raise SizingError(source, type(exc).__name__, f"valid JSON of workload size ({exc})") from None
    try:
        return Workload.model_validate(data)
    except ValidationError as exc:
        raise WorkloadError(source, [_problem(err) for err in exc.errors()]) from None


class WorkloadError(UserError, ValueError):
    """A workload file whose content is not a workload: every problem, each naming its JSON path."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        if len(problems) == 1:
            super().__init__(f"{source}: {problems[0]}")
        else:  # one line each, as every other input's problems are printed
            super().__init__(f"{source}: not a valid workload: {len(problems)} problems:\n  " + "\n  ".join(problems))


_NUMBER_TYPES = ("int_type", "float_type", "int_parsing", "float_parsing")


def _fields_at(loc: Any) -> list[str]:
    """The fields of the workload object at ``loc`` (``("outbound",)``, ``("node_pools", 0)``), for a suggestion."""
    model: Any = Workload
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part)) if model is not None else None
        annotation = field.annotation if field is not None else None
        args = getattr(annotation, "__args__", ())
        model = next((a for a in (annotation, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return [] if model is None else list(model.model_fields)


def _problem(err: Any) -> str:
    """One pydantic error in the file's words: the JSON path, then what is wrong (never the raw input dict)."""
    where = ".".join(str(p) for p in err["loc"]) or "(the whole document)"
    if err["type"] == "missing":
        return f"{where}: missing (a required field)"
    if err["type"] == "extra_forbidden":
        near = did_you_mean(str(err["loc"][-1]), _fields_at(err["loc"][:-1]))
        return f"{where}: not a workload field{near}"
    value = err.get("input")
    if isinstance(value, str) and err["type"] in _NUMBER_TYPES:
        return f"{where}: {value!r} is not allowed: {quoted_number(value)}"
    shown = "a JSON object" if isinstance(value, dict) else "a JSON array" if isinstance(value, list) else repr(value)
    if err["type"] in ("model_type", "dict_type"):
        return f"{where}: {shown} is not allowed: must be a JSON object"
    return f"{where}: {shown} is not allowed: {err['msg']}"


def plan(workload: Workload) -> WorkloadPlan:
    instance = catalog.lookup(workload.instance_type)
    outbound: azure_lb.LoadBalancerPlan | aws_nat.AwsNatPlan
    if workload.cloud == "azure":
        pools = [azure_lb.Pool.parse(f"{p.max_count}:{p.max_surge}", name=p.name) for p in workload.node_pools]
        cps = workload.outbound.connections_per_second
        if cps is None:
            raise SizingError("outbound.connections_per_second", None, "required for Azure (> 0)")
        outbound = azure_lb.plan_load_balancer(
            pools, workload=azure_lb.Workload(cps, workload.outbound.hold_seconds, workload.outbound.headroom)
        )
    else:
        conns = workload.outbound.nat_gateway_connections
        if conns is None:
            raise SizingError("outbound.nat_gateway_connections", None, "required for AWS (>= 1)")
        out = workload.outbound
        # One AZ's plan first: a figure no gateway carries is reported as `connections`, the file's field.
        nat_gateway.plan_aws_nat_gateway(conns, out.nat_gateway_mode)
        outbound = aws_nat.plan_aws_nat(
            aws_nat.uniform_demand(conns, out.availability_zones), out.nat_gateway_mode, aws_nat.MANUAL
        )
    return WorkloadPlan(
        workload=workload,
        instance=instance,
        outbound=outbound,
        rings=rings.plan_rings(workload.nic.driver, workload.nic.host_line_rate_gbps),
        backlog=backlog.plan_backlog(workload.nic.host_line_rate_gbps, cloud=workload.cloud),
    )
