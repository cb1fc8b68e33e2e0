"""Files the Terraform modules (``modules/``) are built from, generated from this library so that every number,
user-data byte and manifest a Terraform user gets comes from the same source as a Pulumi user's.

Each generator module has ``outputs() -> dict[Path, str]``: the committed files it owns and their content.
``python -m wirespeed.terraform`` (also run by ``make regen``) writes them all;
``tests/terraform/test_terraform_generated.py``
fails when any committed file differs from what its generator gives now.
"""

from __future__ import annotations

import importlib
import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
MODULES = ROOT / "modules"
# What a module's profile_outbound output carries (modules/node-tuning's outbound): the kind, its sizing and the UDP
# hold of the egress it creates; the threshold, exclusions and TCP hold keep the profile's defaults.
PROFILE_OUTBOUND_FIELDS = frozenset({"kind", "allocated_ports_per_node", "public_ips", "udp_hold_seconds"})

# Every generator, by module name; each owns the files its outputs() names.
GENERATORS: tuple[str, ...] = (
    "wirespeed.terraform.sizing",
    "wirespeed.terraform.aks_node_pool",
    "wirespeed.terraform.aks_outbound",
    "wirespeed.terraform.node_tuning",
    "wirespeed.terraform.aws_eks_node_group",
    "wirespeed.terraform.aws_nat_egress",
    "wirespeed.terraform.ring_rounding",
    "wirespeed.terraform.thousands",
    "wirespeed.terraform.suggestions",
)


def generators() -> list[ModuleType]:
    return [importlib.import_module(name) for name in GENERATORS]


def outputs() -> dict[Path, str]:
    """Every generated file and its content, from every generator."""
    files: dict[Path, str] = {}
    for generator in generators():
        for path, text in generator.outputs().items():
            if path in files:
                raise RuntimeError(f"{path} is generated twice (second time by {generator.__name__})")
            files[path] = text
    return files


def json_number(value: int | Fraction | Decimal) -> int | float:
    """A bound or an input as the JSON number Terraform parses back to the same decimal (1/1000 -> 0.001; a
    Decimal as the user typed it: 1.36, not 1.3600000000000001)."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, int) or value.denominator == 1:
        return int(value)
    return float(value)  # the nearest double, which JSON writes as the shortest decimal that reads back to it


def _json_default(value: object) -> object:
    if isinstance(value, Decimal | Fraction):
        return json_number(value)
    raise TypeError(type(value).__name__)


def render(document: Any) -> str:
    """A generated JSON file as committed: two-space indent, a final newline, exact decimals."""
    return json.dumps(document, indent=2, default=_json_default) + "\n"


def terraform_value(value: object) -> str:
    """A Problem's value as a module's validation message prints it: Terraform's null, true/false and whole
    numbers; Python's repr for strings (quoted as the Python layer quotes them) and lists of them."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(terraform_value(v) for v in value) + "]"
    return repr(value)
