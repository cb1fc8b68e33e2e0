"""docs/architecture.md's recipes stay true: every file a recipe names exists and carries the name its row gives,
a file said to be generated is one `make regen` or a golden-file test writes (and one said to be by hand is not),
and `<rule>` holds for every registered rule."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import pytest

from conftest import ROOT
from test_generated_markers import ARTEFACTS
from wirespeed import terraform
from wirespeed.rules import RULES
from wirespeed.rules._registry import module_name

DOC = ROOT / "docs" / "architecture.md"
RECIPES = ("To add a rule", "To add a VM family", "To add a profile field")


@dataclass(frozen=True)
class Row:
    recipe: str
    path: str
    how: str
    carries: tuple[str, ...]

    @property
    def generated(self) -> bool:
        return self.how.startswith("generated")


def _ticked(cell: str) -> tuple[str, ...]:
    return tuple(re.findall(r"`([^`]+)`", cell))


def rows() -> list[Row]:
    text = DOC.read_text()
    found = []
    for recipe in RECIPES:
        _, heading, rest = text.partition(f"### {recipe}\n")
        assert heading, f"docs/architecture.md has no '### {recipe}' recipe"
        section = rest.split("\n#", 1)[0]
        for line in section.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 3 or cells[0] in ("file", "---") or not cells[0].startswith("`"):
                continue
            found.append(Row(recipe, _ticked(cells[0])[0], cells[1], _ticked(cells[2])))
    return found


ROWS = rows()


def _paths(row: Row) -> list[Path]:
    """The files a row names: `<rule>` as every registered rule's module, a folder as the files under it."""
    if "<rule>" in row.path:
        if row.path.startswith("components/"):
            return [ROOT / row.path.replace("<rule>", module_name(r.id)) for r in RULES]
        return sorted(ROOT.glob(row.path.replace("<rule>", "*")))  # rule tests: by area, not one per rule yet
    path = ROOT / row.path
    return sorted(p for p in path.rglob("*") if p.is_file()) if row.path.endswith("/") else [path]


def test_every_recipe_has_files_by_hand_and_generated():
    for recipe in RECIPES:
        hows = {row.generated for row in ROWS if row.recipe == recipe}
        assert hows == {True, False}, f"{recipe}: a recipe names what is written by hand and what is generated"


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.recipe}: {r.path}" for r in ROWS])
def test_each_file_a_recipe_names_exists_and_carries_its_concept(row):
    paths = _paths(row)
    assert paths, f"{row.path} ({row.recipe}): nothing there"
    for path in paths:
        assert path.exists(), f"{row.path} ({row.recipe}): {path.relative_to(ROOT)} does not exist"
    texts = [p.read_text(errors="replace") for p in paths]
    for name in row.carries:
        if "<rule>" in row.path and row.path.startswith("components/"):
            assert all(name in t for t in texts), f"a rule module lacks {name!r}"
        else:
            assert any(name in t for t in texts), f"{row.path} ({row.recipe}) does not carry {name!r}"


# A file that only holds registered numbers' slots is still written by hand: make regen rewrites its digits, not the
# change a recipe makes (a rule's module, a profile field's model may spell a NAT gateway's limit in a docstring).
SLOTS_ONLY = "numbers with one home"


def _generated_paths() -> set[str]:
    listed = {
        p.relative_to(ROOT).as_posix()
        for name, a in ARTEFACTS.items()
        if name != SLOTS_ONLY
        for g in a.paths
        for p in ROOT.glob(g)
    }
    outputs = {p.relative_to(ROOT).as_posix() for p in terraform.outputs()}
    return listed | outputs


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.recipe}: {r.path}" for r in ROWS])
def test_a_file_said_to_be_generated_is_generated_and_one_by_hand_is_not(row):
    generated = _generated_paths()
    names = [p.relative_to(ROOT).as_posix() for p in _paths(row)]
    if row.path.startswith("tests/golden/"):
        assert row.generated, f"{row.path}: golden files are written by their tests"
        assert "UPDATE_GOLDEN=1" in row.how, f"{row.path}: say which test writes it (UPDATE_GOLDEN=1 on ...)"
        return
    said = any(fnmatch(n, g) or n == g for n in names for g in generated)
    assert said == row.generated, f"{row.path} ({row.recipe}): the recipe says {row.how!r}"
