"""`wirespeed plan`: a node pool planned offline from a workload file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from wirespeed.cli._common import JsonFlag, emit, run


def register(app: typer.Typer) -> None:
    app.command("plan")(plan_workload)


def plan_workload(
    workload: Annotated[
        Path | None,
        typer.Option(help="Workload JSON (see examples/workloads/). Default: the bundled example."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Plan a node pool offline from a workload file: SKU, SNAT, rings, backlog and the tuning profile."""
    from wirespeed.workload import load_workload, plan

    def build() -> Any:
        return plan(load_workload(workload))

    emit(run(build), as_json)
