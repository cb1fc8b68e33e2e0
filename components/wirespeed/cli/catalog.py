"""`wirespeed catalog ...`: browse Azure VM sizes and AWS instance types with their network facts."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from wirespeed.cli._common import JsonFlag, WholeHelp, run

catalog_app = typer.Typer(
    rich_markup_mode=None,  # click's plain help: rich cut long flag names at 80 columns (--accept-unchecked-se…)
    cls=WholeHelp,
    help="Browse the SKU catalog (Azure VM sizes, AWS instance types).",
    no_args_is_help=True,
)


@catalog_app.command("list")
def catalog_list(
    cloud: Annotated[str | None, typer.Option(help="azure or aws.")] = None,
    network_optimised: Annotated[
        bool, typer.Option("--network-optimised", help="Only network-optimised sizes.")
    ] = False,
    min_gbps: Annotated[float | None, typer.Option(help="Only sizes with at least this bandwidth.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """List instance types with their network facts."""
    from wirespeed import catalog

    types = run(
        lambda: catalog.instance_types(
            cloud=cloud,  # type: ignore[arg-type]  # checked by instance_types: a user error names the choices
            network_optimised=True if network_optimised else None,
            min_gbps=min_gbps,
        ),
        {"cloud": "--cloud", "min_gbps": "--min-gbps"},
    )
    if as_json:
        typer.echo(json.dumps([t.to_json() for t in types], indent=2))
        return
    from wirespeed.tables import output_width, plain, render

    headers = ("name", "cloud", "vCPU", "GiB", "Gb/s (base/burst)", "NICs", "NIC", "net-opt", "extras")
    rows = []
    for t in types:
        bw = f"{t.baseline_gbps:g}" if t.burst_gbps == t.baseline_gbps else f"{t.baseline_gbps:g}/{t.burst_gbps:g}"
        flags = (("ENA Express", t.ena_express), ("EFA", t.efa), ("preview", t.preview))
        extras = ", ".join(name for name, on in flags if on)
        rows.append(
            (t.name, t.cloud, str(t.vcpu), f"{t.memory_gib:g}", bw, str(t.max_nics), t.nic,
             "yes" if t.network_optimised else "", extras)
        )  # fmt: skip
    # A size's name is what users copy into code: too narrow a terminal gets aligned text, never a cut name.
    typer.echo((render(headers, rows, output_width()) or plain(headers, rows)).rstrip("\n"))


@catalog_app.command("show")
def catalog_show(
    name: Annotated[str, typer.Argument(help="Standard_D16s_v6, D16s_v6, c6in.8xlarge, ...")],
    as_json: JsonFlag = False,
) -> None:
    """Show one instance type."""
    from wirespeed import catalog

    t = run(lambda: catalog.lookup(name))
    data = t.to_json()
    if as_json:
        typer.echo(json.dumps(data, indent=2))
    else:
        width = max(len(k) for k in data)
        for key, value in data.items():
            typer.echo(f"{key:<{width}}  {value}")
