"""Every file the Terraform modules are built from is what its generator in this library gives now."""

from __future__ import annotations

from pathlib import Path

import pytest

from wirespeed import terraform

GENERATED = terraform.outputs()


@pytest.mark.parametrize("path", sorted(GENERATED), ids=lambda p: str(p.relative_to(terraform.ROOT)))
def test_generated_file_is_current(path: Path) -> None:
    assert path.exists(), f"{path.relative_to(terraform.ROOT)} is missing: run python -m wirespeed.terraform"
    assert path.read_text() == GENERATED[path], (
        f"{path.relative_to(terraform.ROOT)} is stale: run python -m wirespeed.terraform"
    )
