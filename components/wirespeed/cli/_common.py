"""What every command shares: one-line errors with exit 2, JSON-or-prose output, the --json flag."""

from __future__ import annotations

import json
from typing import Annotated, Any, NoReturn, Protocol

import typer

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON (stable keys) instead of prose.")]


class Plan(Protocol):
    def to_json(self) -> dict[str, Any]: ...
    def explain(self) -> str: ...


def fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def emit(plan: Plan, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(plan.to_json(), indent=2))
    else:
        typer.echo(plan.explain())


def run(build: Any) -> Any:
    """Call a sizing function, turning its input and feasibility errors into one stderr line and exit 2."""
    from wirespeed.sizing.errors import InfeasibleError, SizingError

    try:
        return build()
    except (SizingError, InfeasibleError, LookupError) as exc:
        fail(str(exc).strip("'\""))
