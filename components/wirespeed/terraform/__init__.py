"""Files the Terraform modules (``modules/``) are built from, generated from this library so that every number,
user-data byte and manifest a Terraform user gets comes from the same source as a Pulumi user's.

Each generator module has ``outputs() -> dict[Path, str]``: the committed files it owns and their content.
``python -m wirespeed.terraform`` (also run by ``make regen``) writes them all; ``tests/test_terraform_generated.py``
fails when any committed file differs from what its generator gives now.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]
MODULES = ROOT / "modules"

# Every generator, by module name; each owns the files its outputs() names.
GENERATORS: tuple[str, ...] = (
    "wirespeed.sizing.terraform_facts",
    "wirespeed.terraform.aks_node_pool",
    "wirespeed.terraform.aks_outbound",
    "wirespeed.terraform.node_tuning",
    "wirespeed.terraform.aws_eks_node_group",
    "wirespeed.terraform.aws_nat_egress",
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
