"""A refused input is worded once: components/wirespeed/data/message_table.json, which wirespeed.message_table
fills for Python and the node agent (agent/internal/profile, an embedded copy) fills for Go. The exact messages both
must give are in tests/vectors/profiles.json (tests/profiles/test_profile.py and the agent's profile tests); these tests
hold
the table's shape and that neither side types the words again."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from wirespeed import message_table

ROOT = Path(__file__).resolve().parents[2]
AGENT_PROFILE = ROOT / "agent" / "internal" / "profile"
# The profile's model, the Python half of what Go ports (problems.py's other refusals, in repr's words, are Python's
# alone; its did-you-mean and quoted-number fix read the table).
PYTHON_SIDES = tuple(sorted((ROOT / "components" / "wirespeed" / "profile").glob("*.py")))
_GO_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|`[^`]*`')


def _fragments(template: str) -> list[str]:
    """The words of a template between its fields, long enough to be wording rather than punctuation."""
    return [part for part in re.split(r"\{[a-z_]+\}", template) if len(part.strip()) >= 10]


def _go_literals() -> list[tuple[str, str]]:
    found = []
    for path in sorted(AGENT_PROFILE.glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        for line in path.read_text().splitlines():
            if line.lstrip().startswith("//"):
                continue
            found += [(path.name, literal) for literal in _GO_STRING.findall(line)]
    return found


def _python_literals() -> list[tuple[str, str]]:
    found = []
    for path in PYTHON_SIDES:
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        found += [
            (path.name, node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        ]
    return found


def test_say_fills_every_field_and_refuses_a_missing_or_unknown_one() -> None:
    assert message_table.say("not_allowed", value='"x"', allowed="must be a string") == (
        '"x" is not allowed: must be a string'
    )
    with pytest.raises(KeyError):
        message_table.say("not_allowed", value='"x"')
    with pytest.raises(KeyError):
        message_table.say("required", value=1)
    assert message_table.plural(1, "item") == "1 item"
    assert message_table.plural(2, "character") == "2 characters"
    assert message_table.must_be_types("string", "null") == "must be a string or null"


def test_the_agent_embeds_the_table_byte_for_byte() -> None:
    home = ROOT / "components" / "wirespeed" / "data" / message_table.TABLE_FILE
    assert (AGENT_PROFILE / message_table.TABLE_FILE).read_bytes() == home.read_bytes(), "run make regen"
    assert "//go:embed message_table.json" in (AGENT_PROFILE / "message_table.go").read_text()


@pytest.mark.parametrize("side", ["go", "python"])
def test_neither_side_types_the_tables_words_again(side: str) -> None:
    literals = _go_literals() if side == "go" else _python_literals()
    words = [(name, fragment) for name, text in message_table.TEMPLATES.items() for fragment in _fragments(text)]
    words += [(f"type_words.{t}", w) for t, w in message_table.TYPE_WORDS.items() if len(w) >= 8]
    typed = [
        f"{where}: {literal!r} holds the {name} wording"
        for where, literal in literals
        for name, fragment in words
        if fragment in literal
    ]
    assert typed == [], "read it from wirespeed.message_table / the embedded table instead:\n" + "\n".join(typed)
