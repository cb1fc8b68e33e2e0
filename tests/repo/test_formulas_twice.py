"""docs/formulas-twice.md lists every formula that exists in Python and again in HCL or Go, why, and the shared
vectors that hold the copy to the Python answers. These tests keep that list true: every file it names exists, every
copy's tests read the vectors named beside it, every shared vectors file is listed, and every formula block of
modules/sizing (the HCL that computes at plan time) names a Python module the list names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "formulas-twice.md"
COLUMNS = ("formula", "decided in", "copy", "why the copy", "vectors", "copy's tests")
# tests/terratest/sizing_test.go reads every tests/vectors/sizing_*.json through one glob.
GLOB_READERS = {"tests/terratest/sizing_test.go": "tests/vectors/sizing_*.json"}


def _rows() -> list[dict[str, str]]:
    lines = [line for line in DOC.read_text().splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert tuple(header) == COLUMNS
    return [
        dict(zip(COLUMNS, (cell.strip() for cell in line.strip("|").split("|")), strict=True)) for line in lines[1:]
    ]


def _paths(cell: str) -> list[str]:
    return [p for p in re.findall(r"`([^`]+)`", cell) if "/" in p]


ROWS = _rows()


@pytest.mark.parametrize("row", ROWS, ids=[row["formula"][:40] for row in ROWS])
def test_every_named_file_exists(row: dict[str, str]) -> None:
    for column in ("decided in", "copy", "vectors", "copy's tests"):
        for path in _paths(row[column]):
            assert (ROOT / path).is_file(), f"{DOC.name}: {column} names {path}, which does not exist"


@pytest.mark.parametrize("row", ROWS, ids=[row["formula"][:40] for row in ROWS])
def test_the_copys_tests_read_the_vectors(row: dict[str, str]) -> None:
    vectors = _paths(row["vectors"])
    assert vectors, f"{row['formula']}: no shared vectors"
    for test in _paths(row["copy's tests"]):
        text = (ROOT / test).read_text()
        read = [v for v in vectors if Path(v).name in text or Path(v).match(GLOB_READERS.get(test, "-"))]
        assert read, f"{test} reads none of {vectors}"


def test_every_shared_vectors_file_is_listed() -> None:
    listed = {path for row in ROWS for path in _paths(row["vectors"])}
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests" / "vectors").glob("*.json")}
    assert on_disk - listed == set(), f"add these to {DOC.name} (what formula they hold twice, and why)"


def test_every_formula_block_of_the_sizing_module_is_listed() -> None:
    named = set(
        re.findall(r"^# .*?\bas (wirespeed\.sizing\.[a-z_]+)", (ROOT / "modules/sizing/main.tf").read_text(), re.M)
    )
    named |= set(
        re.findall(
            r"^# The same plan as (wirespeed\.sizing\.[a-z_]+)", (ROOT / "modules/sizing/main.tf").read_text(), re.M
        )
    )
    assert len(named) >= 4
    homes = {path for row in ROWS for path in _paths(row["decided in"])}
    for module in sorted(named):
        assert f"components/{module.replace('.', '/')}.py" in homes, f"modules/sizing computes {module}: list it"
