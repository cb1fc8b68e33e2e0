"""Generate ``data/aws_instance_types.json`` from the EC2 records the pinned moto release ships.

moto bundles the output of AWS's own ``DescribeInstanceTypes``
(``moto/ec2/resources/instance_types.json.gz``), so the catalog is derived from AWS's figures rather than
typed by hand. Only this module touches moto, and
only when run: it is a development dependency, never a runtime one.

    python -m wirespeed.catalog.generate_aws            # rewrite the committed file
    python -m wirespeed.catalog.generate_aws --check    # exit 1 if the committed file is stale

Bump the moto pin in pyproject.toml and MOTO_VERSION together, then regenerate.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from wirespeed.catalog._model import LINE_RATE_GBPS_RANGE

MOTO_VERSION = "5.2.1"
MOTO_DATA = ("ec2", "resources", "instance_types.json.gz")

# The general purpose, compute and memory optimised families whose name carries AWS's "n" capability ("Network
# and EBS optimized": docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html), each in the "Current
# generation instances" list of docs.aws.amazon.com/ec2/latest/instancetypes/instance-types.html. Listed even when
# moto lacks them, so the output says which ones are missing (families.missing_from_source).
NETWORK_OPTIMISED_FAMILIES: tuple[str, ...] = (
    "c5n", "m5n", "m5dn", "r5n", "r5dn",
    "c6gn", "c6in", "m6in", "m6idn", "r6in", "r6idn",
    "c7gn",
    "c8gn", "m8gn", "r8gn", "c8in", "m8in", "r8in", "m8idn", "r8idn", "c8ine", "m8ine",
)  # fmt: skip
# Every other family with an ENA NIC is in the catalog too (issue 25: t3/t4g, EKS's default t3.medium among them,
# were missing, so the gates assumed a line rate for them). That is every current-generation family, and the
# previous-generation ones with ENA that the pinned records mark so but EC2 still launches (m5, c5, r5, m6i, c6gn:
# teams run them, and a size the catalog lacks is a finding). A family is left out only for a reason the output
# names (families.excluded): no ENA (t2: Xen netfront; c4: Intel VF), no bandwidth figure in Gigabit ("Low to
# Moderate"), or EC2 Mac hosts (no Linux node). families.previous_generation lists the families kept as such.

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "data" / "aws_instance_types.json"
# LINE_RATE_GBPS_RANGE's upper bound: the fastest line rate the sizing engine accepts.
MAX_LINE_RATE_GBPS = int(LINE_RATE_GBPS_RANGE[1])

# "50 Gigabit", "Up to 25 Gigabit", or "4x 100 Gigabit" (multi-card GPU types: four cards of 100 each).
_PERFORMANCE = re.compile(r"(?P<up_to>Up to )?(?:(?P<cards>\d+)x )?(?P<gbps>\d+(?:\.\d+)?) Gigabit")
# docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-network-bandwidth.html ("Available instance
# bandwidth"): a type documented as "Up to N Gigabit" (typically 16 vCPUs or fewer: every t3/t4g) has a baseline
# bandwidth and bursts above it on network I/O credits, for a limited time. The catalog keeps both: baseline_gbps
# (the card's BaselineBandwidthInGbps, what minimum-bandwidth gates compare) and burst_gbps (the "Up to" figure:
# what the backlog and rings must absorb, since a burst arrives at the peak rate).


class GeneratorError(RuntimeError):
    """The source records cannot be turned into a catalog entry."""


@dataclass(frozen=True)
class Bandwidth:
    baseline_gbps: float
    burst_gbps: float


def parse_bandwidth(record: Mapping[str, Any]) -> Bandwidth:
    """Instance-level baseline and burst from one DescribeInstanceTypes record.

    ``NetworkInfo.NetworkPerformance`` is the instance total: "50 Gigabit" is a fixed rate, "Up to 25
    Gigabit" a burst ceiling. For a burst ceiling the sustained rate is the default network card's
    ``BaselineBandwidthInGbps``. Cards are never summed: on multi-card types each card's figure is a
    per-card limit, and the instance total is the NetworkPerformance string (c6in.32xlarge: two cards
    of "Up to 170 Gigabit", 200 Gigabit for the instance).
    """
    name = record.get("InstanceType", "?")
    net = record.get("NetworkInfo")
    if not isinstance(net, Mapping):
        raise GeneratorError(f"{name}: no NetworkInfo")
    performance = net.get("NetworkPerformance")
    match = _PERFORMANCE.fullmatch(performance) if isinstance(performance, str) else None
    if match is None:
        raise GeneratorError(f"{name}: NetworkPerformance {performance!r} is not 'N Gigabit' or 'Up to N Gigabit'")
    ceiling = float(match["gbps"]) * (int(match["cards"]) if match["cards"] else 1)
    if not match["up_to"]:
        return Bandwidth(baseline_gbps=ceiling, burst_gbps=ceiling)
    card_index = net.get("DefaultNetworkCardIndex", 0)
    cards = [c for c in net.get("NetworkCards", []) if c.get("NetworkCardIndex") == card_index]
    if len(cards) != 1 or not isinstance(cards[0].get("BaselineBandwidthInGbps"), int | float):
        raise GeneratorError(f"{name}: burstable but no BaselineBandwidthInGbps on network card {card_index}")
    baseline = float(cards[0]["BaselineBandwidthInGbps"])
    return Bandwidth(baseline_gbps=min(baseline, ceiling), burst_gbps=ceiling)


def _architecture(record: Mapping[str, Any]) -> str:
    archs = record.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    if "arm64" in archs:
        return "arm64"
    if "x86_64" in archs:
        return "x86_64"
    raise GeneratorError(f"{record.get('InstanceType')}: unsupported architectures {archs!r}")


def entry(record: Mapping[str, Any]) -> dict[str, Any]:
    """The compact catalog entry for one DescribeInstanceTypes record."""
    name = str(record["InstanceType"])
    net = record["NetworkInfo"]
    bandwidth = parse_bandwidth(record)
    memory_mib = record["MemoryInfo"]["SizeInMiB"]
    return {
        "name": name,
        "family": name.split(".", 1)[0],
        "vcpu": int(record["VCpuInfo"]["DefaultVCpus"]),
        "memory_gib": memory_mib / 1024,
        "baseline_gbps": bandwidth.baseline_gbps,
        "burst_gbps": bandwidth.burst_gbps,
        "max_enis": int(net["MaximumNetworkInterfaces"]),
        "ena_express": bool(net.get("EnaSrdSupported", False)),
        "efa": bool(net.get("EfaSupported", False)),
        "architecture": _architecture(record),
    }


def _size_key(item: Mapping[str, Any]) -> tuple[str, int, float, str]:
    return (str(item["family"]), int(item["vcpu"]), float(item["memory_gib"]), str(item["name"]))


def exclusion(record: Mapping[str, Any]) -> str | None:
    """Why a record is not in the catalog, or None: the catalog holds every type with an ENA NIC, a bandwidth figure
    and a Linux node architecture."""
    net = record.get("NetworkInfo")
    if not isinstance(net, Mapping) or net.get("EnaSupport") not in ("required", "supported"):
        return "no ENA NIC (the catalog's one AWS NIC kind)"
    performance = net.get("NetworkPerformance")
    if not isinstance(performance, str) or _PERFORMANCE.fullmatch(performance) is None:
        return f"no bandwidth figure in Gigabit (NetworkPerformance {performance!r})"
    archs = record.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    if not {"x86_64", "arm64"} & set(archs):
        return f"no Linux node architecture ({', '.join(archs)}: EC2 Mac hosts)"
    total = parse_bandwidth(record).burst_gbps
    if total > MAX_LINE_RATE_GBPS:
        # The gates size a NIC's queues from the instance's line rate; these spread it over many network cards,
        # each a NIC of its own, which the catalog does not model: better a size the rules say they cannot judge.
        return (
            f"{total:g} Gb/s over {net.get('MaximumNetworkCards', '?')} network cards, above the {MAX_LINE_RATE_GBPS} "
            "Gb/s line rate wirespeed sizes one NIC for (per-card figures are not modelled)"
        )
    return None


def build_catalog(
    records: Mapping[str, Mapping[str, Any]],
    *,
    source_version: str,
    source_sha256: str,
    network_optimised: Sequence[str] = NETWORK_OPTIMISED_FAMILIES,
) -> dict[str, Any]:
    """The catalog document: every ENA record (exclusion), sorted by family then size; families left out (every one
    of their records excluded) with the reasons."""
    entries: list[dict[str, Any]] = []
    reasons: dict[str, set[str]] = {}
    for name, record in records.items():
        why = exclusion(record)
        if why is None:
            entries.append(entry(record))
        else:
            reasons.setdefault(name.split(".", 1)[0], set()).add(why)
    present = {e["family"] for e in entries}
    excluded = {family: "; ".join(sorted(why)) for family, why in sorted(reasons.items()) if family not in present}
    previous = sorted(
        {e["family"] for e in entries} - {n.split(".", 1)[0] for n, r in records.items() if r.get("CurrentGeneration")}
    )
    return {
        "comment": (
            "Generated by `python -m wirespeed.catalog.generate_aws` (make regen) from the EC2 "
            "DescribeInstanceTypes records the pinned moto ships (source below): every type with an ENA NIC, "
            "current generation or not; do not edit. Bandwidth is the instance total in Gbit/s: baseline is "
            "sustained (the network card's BaselineBandwidthInGbps for 'Up to' types), burst the 'Up to' ceiling, "
            "reached on network I/O credits "
            "(docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-network-bandwidth.html); equal when fixed. "
            "max_enis is MaximumNetworkInterfaces; ena_express is EnaSrdSupported; efa is EfaSupported."
        ),
        "source": {
            "package": "moto",
            "version": source_version,
            "file": "moto/" + "/".join(MOTO_DATA),
            "sha256": source_sha256,
        },
        "families": {
            "network_optimised": list(network_optimised),
            "missing_from_source": sorted(set(network_optimised) - present),
            "previous_generation": previous,
            "excluded": excluded,
        },
        "instance_types": sorted(entries, key=_size_key),
    }


def render(catalog: Mapping[str, Any]) -> str:
    """Deterministic text: one instance type per line, so a regeneration diffs line by line."""
    head = {k: v for k, v in catalog.items() if k != "instance_types"}
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append('  "instance_types": [')
    rows = [f"    {json.dumps(e)}" for e in catalog["instance_types"]]
    lines.append(",\n".join(rows))
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def load_moto_records() -> tuple[dict[str, dict[str, Any]], str, str]:
    """The pinned moto's records, its version and the sha256 of the data file.

    Reads the file through the ``moto`` package root without importing ``moto.ec2`` (which would load
    the whole mock backend).
    """
    try:
        version = metadata.version("moto")
    except metadata.PackageNotFoundError as exc:
        raise GeneratorError(f"moto is not installed; install moto=={MOTO_VERSION} (dev extra)") from exc
    if version != MOTO_VERSION:
        raise GeneratorError(
            f"moto {version} is installed but the catalog is pinned to moto=={MOTO_VERSION}; "
            "install the pinned version, or bump MOTO_VERSION and the pyproject pin together"
        )
    blob = resources.files("moto").joinpath(*MOTO_DATA).read_bytes()
    records = json.loads(gzip.decompress(blob))
    if not isinstance(records, dict):
        raise GeneratorError("moto's instance_types data is not a mapping of instance type to record")
    return records, version, hashlib.sha256(blob).hexdigest()


def generate() -> str:
    records, version, digest = load_moto_records()
    return render(build_catalog(records, source_version=version, source_sha256=digest))


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wirespeed.catalog.generate_aws", description=__doc__)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="file to write (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the file is out of date")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        text = generate()
    except GeneratorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    output: Path = args.output
    if args.check:
        current = output.read_text(encoding="utf-8") if output.exists() else ""
        if current != text:
            print(f"{output} is out of date: run python -m wirespeed.catalog.generate_aws", file=sys.stderr)
            return 1
        print(f"{output} is up to date")
        return 0
    output.write_text(text, encoding="utf-8")
    count = text.count('"name": ')
    print(f"wrote {count} instance types to {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
