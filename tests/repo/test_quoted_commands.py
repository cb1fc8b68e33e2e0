"""Every `wirespeed ...` command that wirespeed quotes to its users parses with the real CLI.

A fix message, a docstring or the README that names a flag which does not exist sends the user to an error
(`wirespeed size mtu --path gateway` once did). Collected: backtick-quoted commands in every string and docstring of
the library and the policy pack (f-string fields stand for a value), and in the Markdown docs, plus the lines of
their shell blocks that start with `wirespeed`. Each is parsed by the click command tree typer builds, in click's
resilient mode: subcommands and option names must exist; values are placeholders (``N``, ``FILE``) so their types
and required options are not checked, and nothing runs.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer.main
from typer._click.core import Context  # typer>=0.28 vendors click; no public alias
from typer._click.exceptions import BadOptionUsage, ClickException
from typer.core import TyperGroup

from conftest import ROOT
from wirespeed.cli import app

PLACEHOLDER = "VALUE"
QUOTED = re.compile(r"`(wirespeed (?:[^`\n]*))`")
SOURCES = [
    *sorted((ROOT / "components" / "wirespeed").rglob("*.py")),
    *sorted((ROOT / "policies").rglob("*.py")),
    ROOT / "__main__.py",
    *sorted((ROOT / "examples").rglob("*.py")),
]
# Messages outside Python: the node agent's (Go: its conditions, events and errors), the Terraform modules'
# validations, checks and descriptions, stack files, the Makefile and the shell scripts. Read as text, with format
# verbs (%s) and template fields (${...}) standing for a value.
OTHER_SOURCES = [
    *sorted(p for p in (ROOT / "agent").rglob("*.go") if not p.name.endswith("_test.go")),
    *sorted(p for p in (ROOT / "modules").rglob("*") if p.suffix in (".tf", ".json", ".hcl")),
    *sorted(ROOT.glob("Pulumi*.yaml")),
    *sorted((ROOT / "examples").rglob("*.yaml")),
    *sorted((ROOT / "examples").rglob("*.yml")),
    ROOT / "Makefile",
    *sorted((ROOT / "scripts").glob("*.sh")),
]
FORMAT_FIELD = re.compile(r"%[-+ #0-9.]*[a-zA-Z]|\$\{[^}]*\}")
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "examples").rglob("*.md")),
    *sorted((ROOT / "modules").rglob("*.md")),
    *sorted((ROOT / "components").rglob("*.md")),
]


def _python_strings(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else PLACEHOLDER for v in node.values)
            yield node.lineno, str(text)


def _text(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        yield number, FORMAT_FIELD.sub(PLACEHOLDER, line)


# A workflow's step in a Markdown YAML block: `- run: wirespeed plan ...`, or a line of a `run: |` script (the
# README's pull-request workflow).
YAML_RUN = re.compile(r"^\s*(?:-\s+)?run:\s*(wirespeed .*)$")


def _markdown(path: Path) -> Iterator[tuple[int, str]]:
    block = ""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("```"):
            block = line.strip().removeprefix("```") if not block else ""
            continue
        stripped = line.strip().removeprefix("$ ")
        run = YAML_RUN.match(line) if block == "yaml" else None
        if block in ("sh", "bash", "console", "shell", "yaml") and stripped.startswith("wirespeed "):
            yield number, f"`{stripped.split(' #', 1)[0].strip()}`"
        elif run:
            yield number, f"`{run.group(1).split(' #', 1)[0].strip()}`"
        else:
            yield number, line


def quoted_commands() -> list[pytest.param]:
    found: dict[str, str] = {}
    for path in [*SOURCES, *OTHER_SOURCES, *DOCS]:
        lines = (
            _python_strings(path) if path.suffix == ".py" else _markdown(path) if path.suffix == ".md" else _text(path)
        )
        for line, text in lines:
            for command in QUOTED.findall(text):
                found.setdefault(command.strip(), f"{path.relative_to(ROOT)}:{line}")
    return [pytest.param(command, where, id=f"{where} {command}") for command, where in sorted(found.items())]


COMMANDS = quoted_commands()


def test_commands_are_found():
    # The collector itself works: it finds commands in messages, docstrings and the README.
    wheres = {where.split(":")[0] for _, where in (p.values for p in COMMANDS)}
    assert "README.md" in wheres
    assert any(w.startswith("components/wirespeed/rules/") for w in wheres)
    # ... and in the agent's messages, the Terraform modules' and the stack files.
    assert any(w.startswith("agent/") and w.endswith(".go") for w in wheres)
    assert any(w.startswith("modules/") for w in wheres)
    assert any(w.startswith("Pulumi.") for w in wheres)
    # The README's pull-request workflow runs `wirespeed plan ... --compare` in a YAML block.
    commands = [c for c, _ in (p.values for p in COMMANDS)]
    assert any(c.startswith("wirespeed plan . --stack dev --compare") for c in commands)
    assert len(COMMANDS) > 30


def parse(command: str) -> None:
    """Walk ``command`` down the click tree with each command's own parser: an unknown command, option or extra
    argument raises. Values are not converted and required options not demanded (that happens after parsing)."""
    # Template fields (Prometheus' {{ $labels.driver }}) stand for a value; [--flag X] is an optional part.
    text = re.sub(r"\{\{.*?\}\}", PLACEHOLDER, command).replace("[", " ").replace("]", " ").replace("\\", " ")
    words = shlex.split(text)
    assert words[0] == "wirespeed"
    args = words[1:]
    # A shell line can go on after the wirespeed command, and `...` stands for any command: only what comes
    # before is parsed.
    for stop in ("|", "&&", "||", ">", ";", "..."):
        if stop in args:
            args = args[: args.index(stop)]
    command_obj = typer.main.get_command(app)
    ctx = Context(command_obj, info_name="wirespeed")
    while True:
        try:
            _opts, rest, _order = command_obj.make_parser(ctx).parse_args(list(args))
        except BadOptionUsage as exc:
            # Prose naming a flag that takes a value (`wirespeed plan --compare`) quotes it without one.
            if args and exc.option_name == args[-1] and "requires an argument" in exc.message:
                return
            raise
        if not isinstance(command_obj, TyperGroup):
            # An f-string field can stand for several flags (`wirespeed size azure-lb {pool_flags} ...`).
            assert all(word == PLACEHOLDER for word in rest), f"unexpected extra argument(s) {rest}"
            return
        if not rest:
            return
        sub = command_obj.get_command(ctx, rest[0])
        assert sub is not None, f"no command {rest[0]!r} under `{ctx.command_path}`"
        ctx = Context(sub, info_name=rest[0], parent=ctx)
        command_obj, args = sub, rest[1:]


@pytest.mark.parametrize(("command", "where"), COMMANDS)
def test_every_quoted_command_parses_with_the_real_cli(command, where):
    try:
        parse(command)
    except (ClickException, AssertionError) as exc:
        pytest.fail(f"{where}: `{command}` does not parse: {getattr(exc, 'message', exc)}")


@pytest.mark.parametrize(
    "command", ["wirespeed size mtu --driver D --path gateway", "wirespeed sise rings", "wirespeed plan --comapre X"]
)
def test_a_wrong_flag_or_command_is_caught(command):
    with pytest.raises((ClickException, AssertionError)):
        parse(command)
