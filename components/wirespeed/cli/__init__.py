"""`wirespeed` command line: sizing, catalog and profile tools for platform engineers.

Exit codes: 0 when the plan is feasible; 2 for bad input or an infeasible plan, with one ``error:`` line on
stderr that names the flag (or file), the value and what is allowed, or the required and available amounts; 1
with a traceback only for a bug in wirespeed. Heavy modules (pydantic, matplotlib, rich
tables) are imported only by the commands that need them so `--json` answers stay fast in CI loops.
"""

from __future__ import annotations

from typing import Annotated

import typer

from wirespeed.cli._common import OneLineErrors
from wirespeed.cli.audit import audit_app
from wirespeed.cli.catalog import catalog_app
from wirespeed.cli.check import register as register_check
from wirespeed.cli.drift import register as register_drift
from wirespeed.cli.plan import register as register_plan
from wirespeed.cli.profile import profile_app
from wirespeed.cli.prove import register as register_prove
from wirespeed.cli.render import render_app
from wirespeed.cli.render_nap import register as register_render_nap
from wirespeed.cli.size import size_app

app = typer.Typer(
    rich_markup_mode=None,  # click's plain help: rich cut long flag names at 80 columns (--accept-unchecked-se…)
    name="wirespeed",
    help="Network-optimised Kubernetes node pools on AKS and EKS: size SNAT, rings and backlog; browse SKUs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=OneLineErrors,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        from wirespeed import __version__

        try:
            installed = version("wirespeed")
        except PackageNotFoundError:  # run from a source tree without installing
            installed = __version__
        typer.echo(f"wirespeed {installed}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print wirespeed's version and exit."),
    ] = False,
) -> None:
    """Network-optimised Kubernetes node pools on AKS and EKS: size SNAT, rings and backlog; browse SKUs."""


app.add_typer(size_app, name="size")
app.add_typer(catalog_app, name="catalog")
app.add_typer(profile_app, name="profile")
register_render_nap(render_app)
app.add_typer(render_app, name="render")
app.add_typer(audit_app, name="audit")
register_plan(app)
register_check(app)
register_drift(app)
register_prove(app)


def main() -> None:
    app()
