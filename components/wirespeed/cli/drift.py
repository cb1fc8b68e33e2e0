"""`wirespeed drift`: is every node still tuned the way its profile says? Reads a live cluster.

Exit 0 when every managed node is tuned, 1 when any drifted or is under SNAT port pressure (the agent's
SNATPortPressure condition, or its report's ``snat.pressure``), 2 when the cluster cannot be read (one ``error:``
line naming the kubeconfig and context), as for every other bad input.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer

from wirespeed.cli._common import JsonFlag, emit, fail


def register(app: typer.Typer) -> None:
    app.command("drift")(drift)


def drift(
    kubeconfig: Annotated[
        Path | None,
        typer.Option(help="Kubeconfig file. Default: $KUBECONFIG, else ~/.kube/config (exec plugins work)."),
    ] = None,
    context: Annotated[str | None, typer.Option(help="Kubeconfig context. Default: its current-context.")] = None,
    selector: Annotated[
        str | None, typer.Option(help="Only nodes matching this label selector, e.g. agentpool=net.")
    ] = None,
    stale_after: Annotated[
        int,
        typer.Option(
            min=1,
            max=10_080,
            help="Minutes without a report after which a node's agent counts as stale (it reports every 5).",
        ),
    ] = 15,
    timeout: Annotated[
        int,
        typer.Option(
            "--timeout",
            min=1,
            max=3_600,
            help="Seconds for everything drift reads (credential plugin, every page); past it, exit 2.",
        ),
    ] = 120,
    as_json: JsonFlag = False,
) -> None:
    """Compare every node's tuning status with the profile its wirespeed.io/profile label names; list drift.

    Also reports SNAT port pressure: a destination near the ports the node's profile sized (the agent's
    SNATPortPressure condition). Exit 0 when every labelled node is tuned, 1 when any drifted or is under SNAT port
    pressure, 2 when the cluster cannot be read.
    """
    from wirespeed.deadline import DeadlineExceeded, deadline
    from wirespeed.drift import judge, profiles_from_config_maps
    from wirespeed.drift.cluster import Target, connect, list_nodes, list_profile_config_maps
    from wirespeed.errors import UserError

    target = Target(kubeconfig, context)
    try:
        # One deadline over everything: the exec credential plugin, the TLS handshake, every page of every list.
        with deadline(timeout):
            api = connect(target)
            with api:
                profiles = profiles_from_config_maps(list_profile_config_maps(api, target))
                report = judge(
                    list_nodes(api, target, selector), profiles, datetime.now(UTC), timedelta(minutes=stale_after)
                )
    except UserError as exc:
        fail(str(exc))
    except DeadlineExceeded:
        fail(
            f"{target.describe()}: the cluster was not read within --timeout {timeout:g} s (a credential plugin "
            "or the API server did not finish); nothing was judged"
        )
    emit(report, as_json)
    if report.failed:
        raise typer.Exit(1)
