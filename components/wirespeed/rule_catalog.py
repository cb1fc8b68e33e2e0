"""The rule catalog: every rule's public description, generated once into components/wirespeed/data/rule-catalog.json.

Everything that lists the rules for a reader is this catalog: the pack README's rules table is rendered from the
file, ``wirespeed check --format sarif`` describes each rule in ``tool.driver.rules`` with :func:`sarif_rule` of its
entry, and the ``check`` golden files (tests/golden/check/) refer to the file instead of repeating it, so a new rule
changes the catalog and the README table, not every golden file. ``tests/rules/test_rule_catalog.py`` keeps the file
equal
to what the rules declare.

    python -m wirespeed.rule_catalog     # (make regen) rewrite the catalog and the pack README's table
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wirespeed.rules import RULES
from wirespeed.rules._catalog import markdown_table, render

ROOT = Path(__file__).resolve().parents[2]
CATALOG = Path(__file__).resolve().parent / "data" / "rule-catalog.json"
CATALOG_NAME = "components/wirespeed/data/rule-catalog.json"
PACK_README = ROOT / "policies" / "wirespeed" / "README.md"
BEGIN, END = "<!-- rules:begin -->\n", "<!-- rules:end -->\n"


def load() -> list[dict[str, Any]]:
    """The catalog's entries as the file holds them."""
    entries: list[dict[str, Any]] = json.loads(CATALOG.read_text())["rules"]
    return entries


def readme_with_table(readme: str, entries: Sequence[Mapping[str, Any]]) -> str:
    """The pack README with the text between its rules markers replaced by :func:`markdown_table`."""
    head, _, rest = readme.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + BEGIN + markdown_table(entries) + END + tail


def main() -> int:
    text = render(RULES)
    if not CATALOG.is_file() or CATALOG.read_text() != text:
        CATALOG.write_text(text)
        print(f"wrote {CATALOG_NAME}")
    readme = PACK_README.read_text()
    new = readme_with_table(readme, json.loads(text)["rules"])
    if new != readme:
        PACK_README.write_text(new)
        print("wrote policies/wirespeed/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
