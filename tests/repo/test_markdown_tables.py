"""Every Markdown table in the docs renders as one table: a row after a blank line starts a new "table" without a
header, which GitHub prints as a paragraph of pipes (the README's Skipped tests table once lost its last row so)."""

from __future__ import annotations

import pytest

from conftest import ROOT

DOCS = sorted(p for p in ROOT.rglob("*.md") if not {".venv", "node_modules", "build"} & set(p.parts))


@pytest.mark.parametrize("path", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_a_table_row_after_a_blank_line_starts_a_table_with_its_header(path):
    lines = path.read_text().splitlines()
    fence = False
    stray = []
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("|") or (i and lines[i - 1].strip()):
            continue
        header_rule = lines[i + 1] if i + 1 < len(lines) else ""
        if not header_rule.replace(" ", "").startswith("|-") and not header_rule.replace(" ", "").startswith("|:"):
            stray.append(f"line {i + 1}: {line[:60]}")
    assert stray == []
