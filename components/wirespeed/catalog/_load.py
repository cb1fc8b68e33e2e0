"""Reads the committed data files into catalog records, once, on first use.

Every value is checked on the way in, so a hand-edited file fails with the JSON path of the bad field
instead of a wrong number reaching the sizing engine.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any, cast

from wirespeed.catalog._model import (
    COUNTER_CAUSES,
    ROUNDINGS,
    Architecture,
    CounterCause,
    DriverCounter,
    InstanceType,
    KernelDefault,
    Nic,
    NicDriver,
    RingLimits,
    Rounding,
    conforms,
    nic_kinds,
)

AZURE_FILE = "azure_sizes.json"
AWS_FILE = "aws_instance_types.json"
DRIVERS_FILE = "nic_drivers.json"

ARCHITECTURES: tuple[Architecture, ...] = ("x86_64", "arm64")
AZURE_NICS: tuple[Nic, ...] = nic_kinds("azure")
(AWS_NIC,) = nic_kinds("aws")  # every current AWS type has ENA


class CatalogDataError(ValueError):
    """A data file does not have the shape or values the catalog relies on."""


def read_data(name: str) -> Any:
    text = resources.files("wirespeed").joinpath("data", name).read_text(encoding="utf-8")
    return json.loads(text)


class _Obj:
    """Typed access to one JSON object, naming ``file:path.key`` in every error."""

    def __init__(self, value: object, where: str) -> None:
        if not isinstance(value, dict):
            raise CatalogDataError(f"{where}: expected an object, got {type(value).__name__}")
        self._d = cast(dict[str, Any], value)
        self.where = where

    def keys(self) -> list[str]:
        return sorted(self._d)

    def has(self, key: str) -> bool:
        return key in self._d

    def raw(self, key: str) -> Any:
        if key not in self._d:
            raise CatalogDataError(f"{self.where}.{key}: missing")
        return self._d[key]

    def get_int(self, key: str, minimum: int = 0) -> int:
        v = self.raw(key)
        if isinstance(v, bool) or not isinstance(v, int):
            raise CatalogDataError(f"{self.where}.{key}: {v!r} is not an integer")
        if v < minimum:
            raise CatalogDataError(f"{self.where}.{key}: {v} is below the allowed minimum of {minimum}")
        return v

    def get_num(self, key: str) -> float:
        v = self.raw(key)
        if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0:
            raise CatalogDataError(f"{self.where}.{key}: {v!r} is not a positive number")
        return float(v)

    def get_str(self, key: str, allowed: tuple[str, ...] | None = None) -> str:
        v = self.raw(key)
        if not isinstance(v, str) or not v:
            raise CatalogDataError(f"{self.where}.{key}: {v!r} is not a non-empty string")
        if allowed is not None and v not in allowed:
            raise CatalogDataError(f"{self.where}.{key}: {v!r} is not one of {', '.join(allowed)}")
        return v

    def get_bool(self, key: str) -> bool:
        v = self.raw(key)
        if not isinstance(v, bool):
            raise CatalogDataError(f"{self.where}.{key}: {v!r} is not a boolean")
        return v

    def get_list(self, key: str) -> list[Any]:
        v = self.raw(key)
        if not isinstance(v, list):
            raise CatalogDataError(f"{self.where}.{key}: expected a list, got {type(v).__name__}")
        return v

    def get_strs(self, key: str) -> tuple[str, ...]:
        items = self.get_list(key)
        for i, s in enumerate(items):
            if not isinstance(s, str) or not s:
                raise CatalogDataError(f"{self.where}.{key}[{i}]: {s!r} is not a non-empty string")
        return tuple(items)


@functools.cache
def azure_types() -> tuple[InstanceType, ...]:
    doc = _Obj(read_data(AZURE_FILE), AZURE_FILE)
    out: list[InstanceType] = []
    for i, fam_raw in enumerate(doc.get_list("families")):
        fam = _Obj(fam_raw, f"{AZURE_FILE}:families[{i}]")
        family = fam.get_str("family")
        nic = cast(Nic, fam.get_str("nic", AZURE_NICS))
        arch = cast(Architecture, fam.get_str("architecture", ARCHITECTURES))
        optimised = fam.get_bool("network_optimised")
        preview = fam.get_bool("preview") if fam.has("preview") else False
        source = fam.get_str("source")
        for j, size_raw in enumerate(fam.get_list("sizes")):
            size = _Obj(size_raw, f"{fam.where}.sizes[{j}]")
            name = size.get_str("name")
            if not name.startswith("Standard_"):
                raise CatalogDataError(f"{size.where}.name: {name!r} does not start with 'Standard_'")
            gbps = size.get_int("max_bandwidth_mbps", minimum=1) / 1000
            out.append(
                InstanceType(
                    cloud="azure",
                    name=name,
                    family=family,
                    vcpu=size.get_int("vcpu", minimum=1),
                    memory_gib=size.get_num("memory_gib"),
                    baseline_gbps=gbps,
                    burst_gbps=gbps,
                    max_nics=size.get_int("max_nics", minimum=1),
                    network_optimised=optimised,
                    nic=nic,
                    ena_express=False,
                    efa=False,
                    architecture=arch,
                    source=source,
                    preview=preview,
                )
            )
    return tuple(out)


@functools.cache
def azure_skipped() -> dict[str, tuple[str, str]]:
    """The sizes Azure families' pages list but the catalog leaves out (``skipped``: the page names them differently
    in two tables, or gives only a lower bound for their bandwidth), by size name: (family, why)."""
    doc = _Obj(read_data(AZURE_FILE), AZURE_FILE)
    out: dict[str, tuple[str, str]] = {}
    for i, fam_raw in enumerate(doc.get_list("families")):
        fam = _Obj(fam_raw, f"{AZURE_FILE}:families[{i}]")
        if not fam.has("skipped"):
            continue
        for j, skip_raw in enumerate(fam.get_list("skipped")):
            skip = _Obj(skip_raw, f"{fam.where}.skipped[{j}]")
            why = skip.get_str("why")
            for name in skip.get_strs("names"):
                out[name] = (fam.get_str("family"), why)
    return out


@functools.cache
def aws_types() -> tuple[InstanceType, ...]:
    doc = _Obj(read_data(AWS_FILE), AWS_FILE)
    src = _Obj(doc.raw("source"), f"{AWS_FILE}:source")
    source = (
        f"EC2 DescribeInstanceTypes records shipped in {src.get_str('package')} {src.get_str('version')} "
        f"({src.get_str('file')}), via python -m wirespeed.catalog.generate_aws"
    )
    families = _Obj(doc.raw("families"), f"{AWS_FILE}:families")
    optimised = set(families.get_strs("network_optimised"))
    out: list[InstanceType] = []
    for i, rec_raw in enumerate(doc.get_list("instance_types")):
        rec = _Obj(rec_raw, f"{AWS_FILE}:instance_types[{i}]")
        baseline, burst = rec.get_num("baseline_gbps"), rec.get_num("burst_gbps")
        if baseline > burst:
            raise CatalogDataError(f"{rec.where}.baseline_gbps: {baseline} exceeds burst_gbps {burst}")
        family = rec.get_str("family")
        out.append(
            InstanceType(
                cloud="aws",
                name=rec.get_str("name"),
                family=family,
                vcpu=rec.get_int("vcpu", minimum=1),
                memory_gib=rec.get_num("memory_gib"),
                baseline_gbps=baseline,
                burst_gbps=burst,
                max_nics=rec.get_int("max_enis", minimum=1),
                network_optimised=family in optimised,
                nic=AWS_NIC,
                ena_express=rec.get_bool("ena_express"),
                efa=rec.get_bool("efa"),
                architecture=cast(Architecture, rec.get_str("architecture", ARCHITECTURES)),
                source=source,
            )
        )
    return tuple(out)


_KERNEL_VERSION = re.compile(r"[0-9]+\.[0-9]+")


def _kernel_default(value: object, where: str) -> KernelDefault:
    obj = _Obj(value, where)
    kernel = obj.get_str("kernel")
    if not _KERNEL_VERSION.fullmatch(kernel):
        raise CatalogDataError(f"{where}.kernel: {kernel!r} is not a kernel version like '6.13'")
    return KernelDefault(kernel=kernel, default=obj.get_int("default", minimum=1), change=obj.get_str("change"))


def _ring(value: object, where: str, rounding: Rounding) -> RingLimits | None:
    if value is None:
        return None
    obj = _Obj(value, where)
    limits = RingLimits(
        default=obj.get_int("default", minimum=1),
        min=obj.get_int("min", minimum=1),
        max=obj.get_int("max", minimum=1),
        default_since=_kernel_default(obj.raw("default_since"), f"{where}.default_since")
        if obj.has("default_since")
        else None,
    )
    if not limits.min <= limits.default <= limits.max:
        raise CatalogDataError(f"{where}: expected min <= default <= max, got {limits}")
    if limits.default_since is not None and not limits.min <= limits.default_since.default <= limits.max:
        raise CatalogDataError(f"{where}.default_since.default: {limits.default_since.default} is outside [min, max]")
    # round_ring is idempotent only if the bounds it clamps to are values the rule itself produces.
    for key in ("min", "max"):
        bound = getattr(limits, key)
        if not conforms(bound, rounding):
            raise CatalogDataError(f"{where}.{key}: {bound} is not a value the {rounding} rule produces")
    return limits


def _counters(obj: _Obj) -> tuple[DriverCounter, ...]:
    out: list[DriverCounter] = []
    for i, raw in enumerate(obj.get_list("counters")):
        c = _Obj(raw, f"{obj.where}.counters[{i}]")
        name = c.get_str("name")
        if any(prev.name == name for prev in out):
            raise CatalogDataError(f"{c.where}.name: {name!r} is listed twice")
        out.append(
            DriverCounter(
                name=name,
                cause=cast(CounterCause, c.get_str("cause", COUNTER_CAUSES)),
                meaning=c.get_str("meaning"),
                source=c.get_str("source"),
            )
        )
    return tuple(out)


@functools.cache
def drivers() -> Mapping[str, NicDriver]:
    doc = _Obj(read_data(DRIVERS_FILE), DRIVERS_FILE)
    table = _Obj(doc.raw("drivers"), f"{DRIVERS_FILE}:drivers")
    out: dict[str, NicDriver] = {}
    for name in table.keys():  # noqa: SIM118 (_Obj is not a dict)
        d = _Obj(table.raw(name), f"{table.where}.{name}")
        rounding = cast(Rounding, d.get_str("rounding", ROUNDINGS))
        rx = _ring(d.raw("rx"), f"{d.where}.rx", rounding)
        tx = _ring(d.raw("tx"), f"{d.where}.tx", rounding)
        if (rx is None) != (tx is None):
            raise CatalogDataError(f"{d.where}: rx and tx must both be rings or both be null")
        out[name] = NicDriver(
            name=name,
            description=d.get_str("description"),
            rx=rx,
            tx=tx,
            rounding=rounding,
            mtu_max=d.get_int("mtu_max", minimum=576),
            rx_buffer_bytes=d.get_int("rx_buffer_bytes"),
            counters=_counters(d),
            sources=d.get_strs("sources"),
            notes=d.get_strs("notes") if d.has("notes") else (),
        )
    return out
