"""YAML a user wrote is read within bounds: a "billion laughs" document (aliases of aliases) and one nested
thousands deep are refused while the file is read, with one ``error:`` line naming the file, the line and the
bound, at once, instead of `plan` spinning until its deadline and blaming the program. Through the installed
console script for Pulumi.yaml and stack files; at the exact bounds through the one reader they share."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clirun import WIRESPEED
from wirespeed.io_limits import InputFileError
from wirespeed.program import load_project
from wirespeed.yaml_input import YAML_DEPTH_LIMIT, YAML_NODE_LIMIT, load_yaml

NODES = (
    f"its aliases expand it past the {YAML_NODE_LIMIT:,} nodes a YAML file may have with every alias expanded (a "
    '"billion laughs" document); write the repeated values out, or alias less'
)
DEEP = f"nests deeper than the {YAML_DEPTH_LIMIT} levels a YAML file may have; flatten it"
HEAD = "name: p\nruntime: python\n"


def laughs(head: str, indent: int) -> str:
    """The classic "billion laughs" after ``head``: nine levels of nine aliases each, 9**9 strings in all."""
    pad = " " * indent
    lines = [f'{pad}l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{pad}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    return head + "\n".join(lines) + "\n"


def line_of(text: str, start: str) -> int:
    """The line (from 1) that starts with ``start`` once stripped."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith(start))


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def plan(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert WIRESPEED
    # The subprocess bound and the short --timeout only stop a regression from spinning the machine for minutes;
    # the refusal comes while the file is read, before the program (or the Pulumi SDK) is loaded.
    return subprocess.run(
        [WIRESPEED, "plan", str(directory), "--timeout", "20", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def project(tmp_path: Path, pulumi_yaml: str, stack_yaml: str | None = None) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(HEAD + pulumi_yaml)
    (tmp_path / "__main__.py").write_text("")
    if stack_yaml is not None:
        (tmp_path / "Pulumi.dev.yaml").write_text(stack_yaml)
    return tmp_path


IN_PROJECT = laughs("config:\n  pools:\n    default:\n", 6)
IN_STACK = laughs("config:\n  p:pools:\n", 4)
# The count passes the bound at the first alias of l6 (l0..l5 expand to 672,605 nodes, l5 alone to 597,871).
REFUSED_AT = "l6:"


@pytest.mark.parametrize(
    ("pulumi_yaml", "stack_yaml", "bad", "reason"),
    [
        pytest.param(
            IN_PROJECT, None, "Pulumi.yaml", f"line {line_of(HEAD + IN_PROJECT, REFUSED_AT)}: {NODES}",
            id="laughs-project",
        ),
        pytest.param(
            "", IN_STACK, "Pulumi.dev.yaml", f"line {line_of(IN_STACK, REFUSED_AT)}: {NODES}", id="laughs-stack"
        ),
        pytest.param(f"config:\n  deep: {nested(100_000)}\n", None, "Pulumi.yaml", f"line 4: {DEEP}", id="deep"),
        pytest.param(
            "", "config:\n  p:loop: &me {again: *me}\n", "Pulumi.dev.yaml",
            "line 2: the alias *me is inside the node &me it names (a recursive document); write the value out "
            "instead",
            id="recursive",
        ),
    ],
)  # fmt: skip
def test_plan_refuses_yaml_past_its_bounds_naming_the_file(tmp_path, pulumi_yaml, stack_yaml, bad, reason):
    directory = project(tmp_path, pulumi_yaml, stack_yaml)
    out = plan(directory, *(["--stack", "dev"] if stack_yaml is not None else []))
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    assert out.stderr == f"error: {directory / bad}: {reason}\n"


def test_aliases_within_the_bound_still_reach_the_program(tmp_path):
    """Anchors, aliases and merge keys are YAML the Pulumi CLI reads: only their expansion is bounded."""
    directory = project(
        tmp_path,
        "config:\n  base:\n    default: &base {vm: D4, max: 3}\n  pools:\n    default: [*base, {<<: *base, max: 9}]\n",
    )
    assert load_project(directory).config == {
        "p:base": '{"vm": "D4", "max": 3}',
        "p:pools": '[{"vm": "D4", "max": 3}, {"vm": "D4", "max": 9}]',
    }


def aliased(extra: int) -> str:
    """A sequence holding one anchored list of 1,024 scalars and 1,022 aliases of it, then ``extra`` scalars:
    1 + 1,023 x 1,025 = 2**20 nodes once expanded, plus ``extra``."""
    inner = "&x [" + ", ".join(["0"] * 1024) + "]"
    return "[" + ", ".join([inner] + ["*x"] * 1022 + ["0"] * extra) + "]"


def test_the_node_bound_is_exact():
    assert YAML_NODE_LIMIT == 1 + 1023 * 1025
    assert len(load_yaml(aliased(0), "f")) == 1023
    with pytest.raises(InputFileError) as caught:
        load_yaml(aliased(1), "f")
    assert str(caught.value) == f"f: line 1: {NODES}"


def test_the_depth_bound_is_exact():
    assert load_yaml(nested(YAML_DEPTH_LIMIT), "f") is not None
    with pytest.raises(InputFileError) as caught:
        load_yaml(nested(YAML_DEPTH_LIMIT + 1), "f")
    assert str(caught.value) == f"f: line 1: {DEEP}"


def test_yaml_that_does_not_parse_still_names_its_line():
    with pytest.raises(InputFileError) as caught:
        load_yaml("a: b\n  c: [\n", "Pulumi.yaml")
    assert str(caught.value) == "Pulumi.yaml: line 2: is not valid YAML (mapping values are not allowed here)"
