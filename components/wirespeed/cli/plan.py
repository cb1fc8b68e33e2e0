"""`wirespeed plan`: a node pool planned offline from a workload file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from wirespeed.cli._common import JsonFlag, emit, fail
from wirespeed.errors import UserError


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

    source = "bundled example" if workload is None else str(workload)
    # The sizing library names its own parameters; a workload file's user knows them by their JSON path.
    names = {
        "workload": "--workload",
        "connections_per_second": f"{source}: outbound.connections_per_second",
        "hold_seconds": f"{source}: outbound.hold_seconds",
        "headroom": f"{source}: outbound.headroom",
        "connections": f"{source}: outbound.nat_gateway_connections",
        "driver": f"{source}: nic.driver",
        "line_rate_gbps": f"{source}: nic.host_line_rate_gbps",
        "name": f"{source}: instance_type",
        "pools": f"{source}: node_pools",
        "outbound IPs": f"{source}: outbound IPs for node_pools x outbound.connections_per_second",
        "ports per node": f"{source}: ports per node for outbound.connections_per_second x hold_seconds x headroom",
    }

    try:
        result = plan(load_workload(workload))
    except UserError as exc:
        message = exc.message_for(names)
        # Reading errors name --workload and the path; the rest are about its content, so name the file first.
        fail(message if exc.field == "workload" or message.startswith(source) else f"{source}: {message}")
    emit(result, as_json)
