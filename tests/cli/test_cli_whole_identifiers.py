"""Identifiers are never cut: at any terminal width every size name, rule id, resource name and field path a
table shows appears whole (a table when each fits its column, else plain text), through the real console script."""

from __future__ import annotations

import json
import re

import pytest

from clirun import wirespeed
from conftest import ROOT
from wirespeed import catalog

CHECK_FIXTURES = ROOT / "tests" / "fixtures" / "check"
WIDTHS = ("200", "120", "80", "60")


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_catalog_list_prints_every_name_whole(columns, cloud):
    out = wirespeed("catalog", "list", "--cloud", cloud, env={"COLUMNS": columns})
    assert out.returncode == 0, out.stderr
    words = set(out.stdout.split())
    names = [t.name for t in catalog.instance_types(cloud=cloud)]
    assert [n for n in names if n not in words] == []
    assert "…" not in out.stdout


def test_catalog_list_keeps_the_table_where_it_fits():
    wide = wirespeed("catalog", "list", "--cloud", "aws", "--min-gbps", "100", env={"COLUMNS": "200"}).stdout
    narrow = wirespeed("catalog", "list", "--cloud", "aws", "--min-gbps", "100", env={"COLUMNS": "60"}).stdout
    assert wide.startswith("┏")
    assert narrow.splitlines()[0].split() == ["name", "cloud", "vCPU", "GiB", "Gb/s", "(base/burst)", "NICs", "NIC",
                                               "net-opt", "extras"]  # fmt: skip
    assert re.search(r"^c6in\.16xlarge +aws +64 +128 +100 ", narrow, re.MULTILINE)  # columns as wide as the names


def _identifiers(fixture: str) -> set[str]:
    """Every violation's rule id, resource name and type, and every dotted or snake_case word of its message
    (field paths, sysctl and Terraform attribute names), from the check's own JSON."""
    out = wirespeed("check", str(CHECK_FIXTURES / fixture), "--format", "json")
    found = set()
    for v in json.loads(out.stdout)["violations"]:
        found |= {v["rule"], v["name"], f"({v['type']})"}
        found |= {w for w in v["message"].split() if ("." in w or "_" in w) and len(w) > 12}
    assert found, "the fixture should produce violations"
    return found


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("fixture", ["pr-preview-violations.json"])
def test_check_prints_every_identifier_whole(columns, fixture):
    out = wirespeed("check", str(CHECK_FIXTURES / fixture), env={"COLUMNS": columns})
    assert out.returncode in (0, 1), out.stderr
    missing = sorted(i for i in _identifiers(fixture) if i not in out.stdout)
    assert missing == []


def test_check_json_is_not_affected_by_the_terminal():
    path = str(CHECK_FIXTURES / "pr-preview-violations.json")
    narrow = wirespeed("check", path, "--format", "json", env={"COLUMNS": "60"}).stdout
    assert json.loads(narrow) == json.loads(wirespeed("check", path, "--format", "json").stdout)


def _commands() -> list[tuple[str, ...]]:
    """The path of every command and group of the real CLI (`wirespeed`, `wirespeed size`, `wirespeed size
    rings`...)."""
    import typer.main
    from typer.core import TyperGroup

    from wirespeed.cli import app

    found: list[tuple[str, ...]] = []

    def walk(command: object, path: tuple[str, ...]) -> None:
        found.append(path)
        if isinstance(command, TyperGroup):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


@pytest.mark.parametrize("columns", ["80", "60"])
def test_help_prints_every_flag_and_command_whole(columns):
    """`--help` at 80 columns once cut `--accept-unchecked-secrets` to `--accept-unchecked-se…`; every flag and
    subcommand name must appear whole, at any width."""
    import typer.main
    from typer.testing import CliRunner

    from wirespeed.cli import app

    runner = CliRunner()
    root = typer.main.get_command(app)
    cut = []
    for path in _commands():
        text = runner.invoke(app, [*path, "--help"], env={"COLUMNS": columns}).output
        assert "…" not in text, (path, text)
        command = root
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        names = [o for p in command.params for o in p.opts if o.startswith("-")]
        names += list(getattr(command, "commands", {}))
        words = set(text.replace(",", " ").split())
        cut += [(" ".join(path), n) for n in names if n not in words]
        # A group lists each subcommand's whole first sentence (click cut it to one line, ending in "...").
        flat = " ".join(text.split())
        for name, sub in getattr(command, "commands", {}).items():
            summary = " ".join(sub.get_short_help_str(limit=10_000).split())
            if summary not in flat:
                cut.append((" ".join((*path, name)), summary))
    assert cut == []
