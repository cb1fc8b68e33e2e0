"""The SKU and NIC catalog: Azure VM sizes, AWS instance types and Linux NIC driver facts.

    from wirespeed import catalog
    catalog.lookup("D16s_v6").max_bandwidth_mbps          # 12500
    catalog.lookup("c6in.8xlarge").ena_express            # True
    catalog.instance_types(cloud="aws", network_optimised=True, min_gbps=50)
    catalog.nic_driver("mlx5_core").round_ring(5000, "rx")  # 8192

Data lives in ``wirespeed/data``: ``azure_sizes.json`` (every family generated from the tables of Microsoft's
size pages, copied with their file and commit into ``azure_size_tables.json``, by
``python -m wirespeed.catalog.generate_azure``), ``aws_instance_types.json`` (generated from AWS's
DescribeInstanceTypes records by ``python -m wirespeed.catalog.generate_aws``) and ``nic_drivers.json``
(upstream Linux driver constants, shared with the Go agent). Files are parsed once, on first use; importing
this module reads nothing.
"""

from __future__ import annotations

import functools
import math
import re

from wirespeed.catalog import _load
from wirespeed.catalog._load import CatalogDataError
from wirespeed.catalog._model import (
    CLOUDS,
    NIC_KINDS,
    Architecture,
    Cloud,
    CounterCause,
    Direction,
    DriverCounter,
    InstanceType,
    KernelDefault,
    Nic,
    NicDriver,
    NicKind,
    RingLimits,
    Rounding,
    UnknownDriver,
    UnknownInstanceType,
    cloud_drivers,
    driver_guesses,
    nic_kinds,
)
from wirespeed.errors import FieldError

__all__ = [
    "NIC_KINDS",
    "Architecture",
    "CatalogDataError",
    "Cloud",
    "CounterCause",
    "Direction",
    "DriverCounter",
    "InstanceType",
    "KernelDefault",
    "Nic",
    "NicDriver",
    "NicKind",
    "RingLimits",
    "Rounding",
    "UnknownDriver",
    "UnknownInstanceType",
    "cloud_drivers",
    "driver_guesses",
    "families",
    "instance_types",
    "left_out",
    "lookup",
    "network_optimised_alternatives",
    "nic_driver",
    "nic_drivers",
    "nic_kinds",
    "normalise_name",
]

_SUGGESTIONS = 5


def normalise_name(name: str) -> str:
    """The lookup key for a user-typed name.

    Case-insensitive; Azure's ``Standard_`` prefix optional; ``-`` and spaces read as ``_`` (people
    type ``standard-d16s-v6``). AWS names keep their dot, so they never collide with Azure ones.
    """
    key = "_".join(name.strip().lower().replace("-", " ").replace("_", " ").split())
    return key.removeprefix("standard_")


@functools.cache
def _all() -> tuple[InstanceType, ...]:
    return tuple(sorted(_load.azure_types() + _load.aws_types(), key=_sort_key))


def _sort_key(it: InstanceType) -> tuple[str, str, int, float, str]:
    return (it.cloud, it.family, it.vcpu, it.memory_gib, it.name)


@functools.cache
def _index() -> dict[str, InstanceType]:
    index: dict[str, InstanceType] = {}
    for it in _all():
        key = normalise_name(it.name)
        if key in index:
            raise CatalogDataError(f"instance type names {index[key].name!r} and {it.name!r} collide as {key!r}")
        index[key] = it
    return index


def lookup(name: str) -> InstanceType:
    """The instance type called ``name``, however it is capitalised or prefixed.

    Accepts ``Standard_D16s_v6``, ``standard_d16s_v6``, ``D16s_v6`` and ``c6in.8xlarge``. Raises
    UnknownInstanceType (a LookupError) naming up to five close matches.
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a string, got {type(name).__name__}")
    index = _index()
    key = normalise_name(name)
    found = index.get(key)
    if found is not None:
        return found
    import difflib  # only on the error path: keeps `import wirespeed.catalog` cheap

    close = difflib.get_close_matches(key, list(index), n=_SUGGESTIONS, cutoff=0.6)
    raise UnknownInstanceType(name, [index[k].name for k in close])


def left_out(name: str) -> str | None:
    """Why the catalog does not hold ``name`` although its family's page lists it (the page's tables name it
    differently, or give only a lower bound for its bandwidth), or None: ``Standard_L48s_v2`` -> ``"Lsv2: ..."``."""
    key = normalise_name(name)
    for size, (family, why) in _load.azure_skipped().items():
        if normalise_name(size) == key:
            return f"{family}: {why}"
    return None


def instance_types(
    cloud: Cloud | None = None,
    network_optimised: bool | None = None,
    min_gbps: float | None = None,
) -> list[InstanceType]:
    """Instance types matching every filter given, sorted by cloud, family, vCPU.

    ``min_gbps`` compares with the sustained ``baseline_gbps``: a type that only bursts to the figure
    does not qualify.
    """
    if cloud is not None and cloud not in CLOUDS:
        raise FieldError("cloud", cloud, f"one of {', '.join(CLOUDS)}")
    if min_gbps is not None and (
        isinstance(min_gbps, bool) or not isinstance(min_gbps, int | float) or not 0 <= min_gbps < math.inf
    ):
        raise FieldError("min_gbps", min_gbps, "a finite number >= 0 (Gb/s)")
    return [
        it
        for it in _all()
        if (cloud is None or it.cloud == cloud)
        and (network_optimised is None or it.network_optimised == network_optimised)
        and (min_gbps is None or it.baseline_gbps >= min_gbps)
    ]


_VERSION_SUFFIX = re.compile(r"v\d+$")


def network_optimised_alternatives(
    current: InstanceType, min_gbps: float | None = None, same_vcpu: bool = False
) -> list[InstanceType]:
    """Network-optimised sizes to offer instead of ``current``, best first: one ranking for every piece of advice
    (the SKU rule's "e.g." and the components' "use a MANA size such as"), so they never name different sizes.

    At least ``current``'s vCPUs (exactly, with ``same_vcpu``) on the same architecture; then the same kind of size
    (Azure's family letter: D general purpose, E memory, F compute), then the nearest memory (with F v6 in the
    catalog a D size would otherwise be offered an F whose memory happens to be closer), the same series, the
    faster, the name. Never a size of a preview series (``InstanceType.preview``): a team is not told to move
    production onto a series Microsoft has not made generally available.
    """
    candidates = [
        it
        for it in instance_types(cloud=current.cloud, network_optimised=True, min_gbps=min_gbps)
        if not it.preview
        and it.architecture == current.architecture
        and (it.vcpu == current.vcpu if same_vcpu else it.vcpu >= current.vcpu)
    ]
    return sorted(
        candidates,
        key=lambda it: (
            it.vcpu,
            it.family[:1] != current.family[:1],
            abs(it.memory_gib - current.memory_gib),
            _VERSION_SUFFIX.sub("", it.family) != _VERSION_SUFFIX.sub("", current.family),
            -it.baseline_gbps,
            it.name,
        ),
    )


def families(cloud: Cloud | None = None) -> list[str]:
    """Family names in catalog order (``Dsv6``, ``c6in``...)."""
    seen: dict[str, None] = {}
    for it in instance_types(cloud=cloud):
        seen.setdefault(it.family, None)
    return list(seen)


def nic_drivers() -> dict[str, NicDriver]:
    """Every driver in ``nic_drivers.json``, by kernel driver name (what ``ethtool -i`` reports)."""
    return dict(_load.drivers())


def nic_driver(name: str) -> NicDriver:
    """The facts for one driver; UnknownDriver (a LookupError) lists the known names otherwise."""
    table = _load.drivers()
    found = table.get(name.strip().lower()) if isinstance(name, str) else None
    if found is None:
        raise UnknownDriver(str(name), sorted(table))
    return found
