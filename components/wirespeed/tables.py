"""Tables that never cut an identifier: a rich table when every word of every cell fits its column whole, else
plain text with one field per line (a terminal soft-wraps it; copy, paste and grep still see whole names)."""

from __future__ import annotations

import io
import os
import shutil
import sys
from collections.abc import Iterable, Sequence

# Width for output that is not a terminal and names no COLUMNS: wide enough for CI logs, where nothing wraps.
PIPE_WIDTH = 120


def output_width() -> int:
    """The terminal's width; COLUMNS when set (a narrow pane, a test); else PIPE_WIDTH for a pipe or file."""
    if os.environ.get("COLUMNS", "").isdigit() or sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return PIPE_WIDTH


def whole(rendered: str, cells: Iterable[str]) -> bool:
    """Whether every word of every cell appears unbroken in ``rendered``: rich folds or ellipsises a word only
    when its column is narrower than the word."""
    return all(word in rendered for cell in cells for word in cell.split())


def render(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    *,
    show_lines: bool = False,
) -> str | None:
    """The rows as a rich table ``width`` columns wide, or None when some word would not fit its column whole."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=width, record=True, file=io.StringIO(), highlight=False, color_system=None)
    table = Table(*headers, show_lines=show_lines)
    for column in table.columns:
        column.overflow = "fold"
    for row in rows:
        table.add_row(*row)
    console.print(table)
    text = console.export_text()
    return text if whole(text, [cell for row in rows for cell in row]) else None


def plain(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The rows as aligned text, one row per line, never wrapped or cut (lines may exceed the terminal)."""
    cells = [list(headers), *[[" ".join(cell.split()) for cell in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines) + "\n"
