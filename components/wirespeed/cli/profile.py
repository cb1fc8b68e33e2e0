"""`wirespeed profile ...`: the built-in tuning profiles, validation of your own, the shared schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from wirespeed.cli._common import WholeHelp, fail_all, readable_text, run

if TYPE_CHECKING:
    from wirespeed.profile import Profile

profile_app = typer.Typer(
    rich_markup_mode=None,  # click's plain help: rich cut long flag names at 80 columns (--accept-unchecked-se…)
    cls=WholeHelp,
    help="Built-in tuning profiles the node agent applies; validate your own.",
    no_args_is_help=True,
)


@profile_app.command("show")
def profile_show(
    name: Annotated[str, typer.Argument(help="throughput or balanced.")] = "throughput",
    as_json: Annotated[
        bool, typer.Option("--json", help="The canonical JSON document the agent reads (its ConfigMap's content).")
    ] = False,
) -> None:
    """Summarise a built-in profile: what it assumes, the rings per driver, the sysctls, MTU and outbound."""
    from wirespeed.profiles import builtin_profile

    profile = run(lambda: builtin_profile(name))
    if as_json:
        typer.echo(json.dumps(profile.to_json_dict(), indent=2))
        return
    from rich.console import Console

    from wirespeed.cli.profile_summary import summary

    Console(highlight=False).print(*summary(profile), sep="\n")


@profile_app.command("validate")
def profile_validate(path: Annotated[Path, typer.Argument(help="Profile JSON file.")]) -> None:
    """Validate a profile; every problem is listed with its JSON pointer, value and allowed range."""
    from wirespeed.profile import ProfileError, load_profile

    text = readable_text(path, "")
    try:
        profile = load_profile(text)
    except ProfileError as exc:
        # Every problem at once, as `plan` reports them: one `error:` header, then a line each naming the file.
        problems = [f"{path}{pointer}: {message}" for pointer, message in exc.problems]
        fail_all(f"{path}: not a valid profile: {len(problems)} problem(s)", problems)
    typer.echo(f"{path}: valid profile {profile.name!r}")
    for note in _unknown_driver_notes(profile):
        typer.echo(f"note: {path}: {note}", err=True)


def _unknown_driver_notes(profile: Profile) -> list[str]:
    """A driver name no NIC in the catalog has (``mlx5`` for ``mlx5_core``) is valid, since the agent can tune any
    driver, but matches only a link whose driver `ethtool -i` reports exactly so: most likely a typo, said so."""
    from wirespeed import catalog

    known = sorted(catalog.nic_drivers())
    named = [(f"rings.{d}", d) for d in profile.rings]
    named += [(f"interfaces.drivers[{i}]", d) for i, d in enumerate(profile.interfaces.drivers)]
    notes = []
    for where, driver in named:
        if driver in known:
            continue
        guesses = catalog.driver_guesses(driver, known)
        hint = f"did you mean {' or '.join(guesses)}? " if guesses else ""
        notes.append(
            f"{where}: no NIC driver wirespeed knows is called {driver!r}: {hint}the agent applies it only to links "
            f"whose driver `ethtool -i` reports as exactly {driver!r} (known: {', '.join(known)})"
        )
    return notes


@profile_app.command("schema")
def profile_schema() -> None:
    """Print the profile JSON Schema (the contract shared with the Go agent)."""
    from wirespeed.profile import render_schema

    sys.stdout.write(render_schema())
