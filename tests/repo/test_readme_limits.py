"""docs/limits.md's "Deadlines and input limits" tables (the README links to them) say exactly what the code
enforces: every `--timeout` default and range as the commands declare them, every file cap as io_limits, the
Prometheus reader and the agent define it, and the YAML reader's bounds."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer.main

from wirespeed import io_limits, numbers, yaml_input
from wirespeed.audit import aws_collect
from wirespeed.cli import app
from wirespeed.measure import prometheus, workloads

ROOT = Path(__file__).resolve().parents[2]
LIMITS = ROOT / "docs" / "limits.md"


def section() -> str:
    # The marker of the registered numbers written into it (wirespeed.numbers: the by-workload rows) comes first.
    text = LIMITS.read_text().removeprefix(numbers.marker_line("docs/limits.md"))
    assert text.startswith("# Deadlines and input limits\n"), f"{LIMITS} lost its title"
    return text


def table(header: str) -> list[list[str]]:
    """The rows of the table whose header line starts with ``header``, as stripped cells."""
    lines = section().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def seconds(value: float) -> str:
    return f"{value:,g} s"


def size(limit: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if limit >= factor and limit % factor == 0:
            return f"{limit // factor:,} {unit}"
    return f"{limit:,} bytes"


def timeout_option(*path: str) -> Any:
    """The ``--timeout`` option of ``wirespeed PATH...`` as the command line parser sees it."""
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    [option] = [p for p in command.params if "--timeout" in p.opts]
    return option


def declared(*path: str) -> tuple[str, str]:
    option = timeout_option(*path)
    return seconds(option.default), f"{option.type.min:,}..{option.type.max:,} s"


def test_the_deadlines_table_is_what_each_command_declares():
    rows = {row[0]: (row[1], row[2], row[3]) for row in table("| command |")}
    low, high = prometheus.TIMEOUT_RANGE_S
    assert rows == {
        "`wirespeed drift`": ("`--timeout`", *declared("drift")),
        "`wirespeed audit aws`": ("`--timeout`", *declared("audit", "aws")),
        "`wirespeed plan`": ("`--timeout`", *declared("plan")),
        "`wirespeed size ... --from-prometheus`": (
            "`--timeout`",
            seconds(prometheus.DEFAULT_TIMEOUT_S),
            f"{low:,g}..{high:,g} s",
        ),
        "`wirespeed prove`": ("`--timeout`", seconds(prometheus.DEFAULT_TIMEOUT_S), f"{low:,g}..{high:,g} s"),
    }
    # The size commands and prove take the Prometheus default as theirs.
    assert timeout_option("size", "azure-lb").default == prometheus.DEFAULT_TIMEOUT_S
    assert timeout_option("prove").default == prometheus.DEFAULT_TIMEOUT_S


def go_constant(relative: str, name: str) -> int:
    """A Go constant written as ``const name = A << B`` or a plain number."""
    text = (ROOT / relative).read_text()
    match = re.search(rf"^const {name} = (\d+)(?: << (\d+))?$", text, re.M)
    assert match, f"{relative}: no `const {name} = ...`"
    return int(match[1]) << int(match[2] or 0)


def test_the_file_caps_table_is_what_the_readers_enforce():
    rows = {row[0]: row[1] for row in table("| input | cap |")}
    assert list(rows.values()) == [
        size(io_limits.DOCUMENT_LIMIT),
        size(io_limits.PLAN_JSON_LIMIT),
        size(io_limits.SMALL_LIMIT),
        size(prometheus.MAX_TOKEN_BYTES),
        size(io_limits.KUBECONFIG_LIMIT),
        size(io_limits.API_PAGE_LIMIT),
        size(prometheus.MAX_RESPONSE_BYTES),
        size(aws_collect.MAX_RESPONSE_BYTES),
        size(go_constant("agent/internal/profile/profile.go", "MaxFileBytes")),
        size(go_constant("agent/cmd/wirespeed-agent/bootstrap.go", "maxUserData")),
        size(go_constant("agent/cmd/wirespeed-agent/kubeconfig.go", "maxKubeconfigBytes")),
    ]
    labels = list(rows)
    assert labels[0].startswith("`wirespeed check FILE`")
    assert labels[1].startswith("`wirespeed plan --compare FILE`")
    assert labels[3].startswith("`--bearer-token-file`")
    assert labels[4].startswith("`wirespeed drift --kubeconfig`")
    assert labels[5].startswith("one page of a list `wirespeed drift` reads")
    assert labels[6].startswith("each Prometheus answer `wirespeed size ... --from-prometheus` reads")
    # The row's bounds on what --by-workload asks for are the ones its queries use.
    assert f"at most {workloads.MAX_WORKLOADS} rows per peak" in labels[6]
    assert f"at most {workloads.PLOT_POINTS} points per workload" in labels[6]
    assert labels[7].startswith("each AWS API response `wirespeed audit aws` reads")
    # drift reads the same kubeconfig files as the agent, under the same cap.
    agent_cap = go_constant("agent/cmd/wirespeed-agent/kubeconfig.go", "maxKubeconfigBytes")
    assert agent_cap == io_limits.KUBECONFIG_LIMIT
    assert labels[8:] == [
        "the agent's `--profile`",
        "the agent's `bootstrap --user-data`",
        "the agent's `--kubeconfig`",
    ]


def test_the_yaml_bounds_table_is_what_the_reader_enforces():
    assert table("| YAML bound |") == [
        ["nodes, with every alias expanded to what it names", f"{yaml_input.YAML_NODE_LIMIT:,}"],
        ["levels of nesting", f"{yaml_input.YAML_DEPTH_LIMIT:,}"],
    ]
