"""Generate Azure families of ``data/azure_sizes.json`` from Microsoft's tables in ``data/azure_size_tables.json``.

No package ships Azure's VM size figures (azure-mgmt-compute has the API, not the sizes; the Resource SKUs API
gives no bandwidth), so the source is the series pages themselves: each family's Basics table (vCPUs, memory) and
Network table (max NICs, max network bandwidth), copied row for row from the page's Markdown source, with the file
and commit they were read from. This joins the two tables by size name, one catalog size per row, and checks them
on the way: the same sizes in both tables, whole numbers where the page has them.

    python -m wirespeed.catalog.generate_azure            # rewrite azure_sizes.json's generated families
    python -m wirespeed.catalog.generate_azure --check    # exit 1 if it is stale

Families in azure_sizes.json that the tables file does not hold (the Azure Boost v6 families and Dsv3/Dsv5/Ddsv5,
read before the tables file existed) are kept as they are, each with its own source.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data"
TABLES = DATA / "azure_size_tables.json"
OUTPUT = DATA / "azure_sizes.json"
REPOSITORY = "MicrosoftDocs/azure-compute-docs"
GENERATED = "azure_size_tables.json via python -m wirespeed.catalog.generate_azure"
# learn.microsoft.com/azure/aks/quotas-skus-regions ("Restricted VM sizes"): AKS does not run nodes on sizes with
# fewer than two vCPUs, and accelerated networking needs two (wirespeed.azure.pools), so those rows are left out.
MIN_VCPU = 2
# What a page's Feature support section may say of accelerated networking, for a family the catalog holds.
ACCELERATED = ("Supported", "Required")

_ROW = re.compile(r"\|\s*(?P<name>Standard_[A-Za-z0-9_]+)\s*\|\s*(?P<a>[0-9.,]+)\s*\|\s*(?P<b>[0-9.,]+)\s*\|")


class GeneratorError(ValueError):
    """A table row or family the catalog cannot be built from; names the family and the row."""


def _number(text: str, where: str, whole: bool) -> int | float:
    value = float(text.replace(",", ""))
    if whole:
        if not value.is_integer():
            raise GeneratorError(f"{where}: {text!r} is not a whole number")
        return int(value)
    return int(value) if value.is_integer() else value


def parse_table(rows: Iterable[str], where: str, second_whole: bool) -> dict[str, tuple[int, int | float]]:
    """``| Standard_X | a | b |`` rows as {name: (a, b)}; a is always whole (vCPUs, NICs)."""
    out: dict[str, tuple[int, int | float]] = {}
    for i, row in enumerate(rows):
        match = _ROW.fullmatch(row.strip())
        if match is None:
            raise GeneratorError(f"{where}[{i}]: {row!r} is not a '| Standard_... | n | n |' table row")
        name = match["name"]
        if name in out:
            raise GeneratorError(f"{where}[{i}]: {name} is listed twice")
        a = _number(match["a"], f"{where}[{i}]", whole=True)
        assert isinstance(a, int)
        out[name] = (a, _number(match["b"], f"{where}[{i}]", whole=second_whole))
    return out


def family_entry(family: Mapping[str, Any], index: int) -> dict[str, Any]:
    where = f"{TABLES.name}:families[{index}]"
    name = family["family"]
    if family["accelerated_networking"] not in ACCELERATED:
        raise GeneratorError(f"{where} ({name}): accelerated networking {family['accelerated_networking']!r}")
    basics = parse_table(family["basics"], f"{where}.basics", second_whole=False)
    network = parse_table(family["network"], f"{where}.network", second_whole=True)
    if set(basics) != set(network):
        raise GeneratorError(
            f"{where} ({name}): the Basics and Network tables list different sizes: "
            f"{sorted(set(basics) ^ set(network))}"
        )
    sizes = [
        {
            "name": size,
            "vcpu": vcpu,
            "memory_gib": memory,
            "max_nics": network[size][0],
            "max_bandwidth_mbps": network[size][1],
        }
        for size, (vcpu, memory) in basics.items()
        if vcpu >= MIN_VCPU
    ]
    left_out = [size for size, (vcpu, _) in basics.items() if vcpu < MIN_VCPU]
    entry: dict[str, Any] = {
        "family": name,
        "nic": family["nic"],
        "architecture": family["architecture"],
        "network_optimised": family["network_optimised"],
        "source": (
            f"{family['page']} ({REPOSITORY} {family['file']} @ {family['commit'][:12]}, Basics and Network tabs; "
            f"accelerated networking {family['accelerated_networking']}; {GENERATED})"
        ),
    }
    if left_out:
        entry["left_out"] = f"{', '.join(left_out)}: fewer than {MIN_VCPU} vCPUs, which AKS does not run nodes on"
    entry["sizes"] = sizes
    return entry


def build(tables: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    generated = [family_entry(f, i) for i, f in enumerate(tables["families"])]
    names = {f["family"] for f in generated}
    kept = [f for f in current["families"] if f["family"] not in names and GENERATED not in f.get("source", "")]
    return {"comment": current["comment"], "families": [*kept, *generated]}


def render(document: Mapping[str, Any]) -> str:
    """The committed file's layout: one size per line, so a regeneration diffs line by line."""
    lines = ["{", f'  "comment": {json.dumps(document["comment"])},', '  "families": [']
    blocks = []
    for family in document["families"]:
        head = [f"      {json.dumps(k)}: {json.dumps(v)}," for k, v in family.items() if k != "sizes"]
        sizes = ",\n".join(f"        {json.dumps(s)}" for s in family["sizes"])
        blocks.append("\n".join(["    {", *head, '      "sizes": [', sizes, "      ]", "    }"]))
    lines.append(",\n".join(blocks))
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def generate() -> str:
    tables = json.loads(TABLES.read_text(encoding="utf-8"))
    current = json.loads(OUTPUT.read_text(encoding="utf-8"))
    return render(build(tables, current))


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wirespeed.catalog.generate_azure", description=__doc__)
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the file is out of date")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        text = generate()
    except (GeneratorError, KeyError) as exc:
        print(f"error: {TABLES.name}: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is out of date: run python -m wirespeed.catalog.generate_azure", file=sys.stderr)
            return 1
        print(f"{OUTPUT} is up to date")
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    count = text.count('"name": ')
    print(f"wrote {count} Azure sizes to {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
