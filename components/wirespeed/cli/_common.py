"""What every command shares: one-line errors with exit 2, JSON-or-prose output, the --json flag.

The contract (tests/cli/test_cli_robustness.py holds every command to it): exit 0 on success; exit 2 with one
``error:`` line on stderr naming the flag (or file), the value and what is allowed, for anything the user can get
wrong; a traceback (exit 1) only for a bug in wirespeed. User errors are recognised by type alone
(``wirespeed.errors.UserError``), never by a broad ``ValueError``/``LookupError``, so bugs stay visible.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn, Protocol, TypeVar

import typer
from typer._click import _textwrap  # typer>=0.28 vendors click; no public alias
from typer._click.exceptions import NoArgsIsHelpError  # typer>=0.28 vendors click; no public alias
from typer.core import TyperGroup

from wirespeed.errors import UserError

T = TypeVar("T")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON (stable keys) instead of prose.")]


class Plan(Protocol):
    def to_json(self) -> dict[str, Any]: ...
    def explain(self) -> str: ...


def one_line(text: str) -> str:
    """``text`` with every line break and control character escaped, so an error stays one line of stderr
    even when it quotes a file name or JSON key the user wrote with a newline in it."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def fail(message: str) -> NoReturn:
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(2)


def fail_all(heading: str, problems: Sequence[object]) -> NoReturn:
    """Exit 2 with one ``error:`` line, ``heading``, then each problem on a line of its own, indented.

    With no problems it is :func:`fail`: the heading is the whole error.
    """
    if not problems:
        fail(heading)
    typer.echo(f"error: {one_line(heading)}:", err=True)
    for problem in problems:
        typer.echo(f"  {one_line(str(problem))}", err=True)
    raise typer.Exit(2)


def emit(plan: Plan, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(plan.to_json(), indent=2))
    else:
        typer.echo(plan.explain())


def run(build: Callable[[], T], names: Mapping[str, str] | None = None) -> T:
    """Call into the library; a :class:`UserError` becomes one stderr line and exit 2, anything else propagates.

    ``names`` maps the library's field names (``outbound_ips``) to the ones the user typed (``--outbound-ips``),
    so every message speaks the user's vocabulary.
    """
    try:
        return build()
    except UserError as exc:
        fail(exc.message_for(names or {}))


def flags_given(ctx: typer.Context, *names: str) -> list[str]:
    """Each of the parameters ``names`` the user set (on the command line or from the environment, not left at its
    default), as typed: ``--window 7d``, or ``--ena-express`` for a switch; in the order of ``names``."""
    from typer._click.core import ParameterSource  # typer>=0.28 vendors click; no public alias

    params = {p.name: p for p in ctx.command.params}
    shown = []
    for name in names:
        if ctx.get_parameter_source(name) not in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            continue
        flag, value = params[name].opts[0], ctx.params[name]
        if isinstance(value, bool):
            shown.append(flag)
        elif isinstance(value, float):
            shown.append(f"{flag} {value:g}")
        else:
            shown.append(f"{flag} {value}")
    return shown


def refuse_unused(given: Sequence[str], reason: str) -> None:
    """Exit 2 when ``given`` (from :func:`flags_given`) is not empty: flags that would be ignored, so a flag is never
    accepted and silently left out of the answer. ``reason`` says why and what to do; ``{it}`` in it becomes "it"
    or "them"."""
    if given:
        fail(f"{', '.join(given)}: {reason.format(it='it' if len(given) == 1 else 'them')}")


def readable_text(path: Path, flag: str, limit: int | None = None, what: str = "JSON file") -> str:
    """The UTF-8 text of the regular file ``path`` given as ``flag``, at most ``limit`` bytes (default: a small
    document's cap); exit 2 naming the file when it cannot be read (a FIFO, a device and a directory included)."""
    from wirespeed.io_limits import SMALL_LIMIT, InputFileError, read_text

    shown = f"{flag} {path}" if flag else str(path)
    try:
        return read_text(path, SMALL_LIMIT if limit is None else limit, shown, what)
    except InputFileError as exc:
        fail(str(exc))


def writable_file(path: Path, flag: str, suffixes: Sequence[str]) -> None:
    """Exit 2 unless ``path`` (given as ``flag``) can be created or overwritten with one of ``suffixes``.

    Checked before anything is printed, so a bad path never leaves a half-done command behind.
    """
    shown = f"{flag}: {str(path)!r}"
    if path.suffix.lower() not in suffixes:
        fail(f"{shown} is not allowed: a file name ending in {' or '.join(suffixes)}")
    try:
        parent = path.parent
        if path.is_dir():
            fail(f"{shown} is a directory; give a file name inside it")
        if not parent.is_dir():
            fail(f"{shown}: directory {str(parent)!r} does not exist")
        if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            fail(f"{shown}: not writable (permission denied)")
    except ValueError as exc:  # an embedded NUL
        fail(f"{shown} is not a file name: {exc}")


class _WholeWords(_textwrap.TextWrapper):
    """Click's help wrapper, never breaking a line inside a hyphenated word: Python's default breaks after a hyphen,
    so help text could print `--line-` and `rate-gbps` on two lines, or `auto-` `provisioned`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("break_on_hyphens", False)
        super().__init__(*args, **kwargs)


# click's wrap_text imports its TextWrapper from this module each time it wraps: the one place to change it.
_textwrap.TextWrapper = _WholeWords  # type: ignore[misc]


class WholeHelp(TyperGroup):
    """A command group whose ``--help`` lists each subcommand with its whole first sentence, wrapped: click cuts it to
    fit one line (``Size AKS load balancer outbound SNAT:...``), hiding what the command sizes."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        commands = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        rows = [(name, cmd.get_short_help_str(limit=10_000)) for name, cmd in commands if cmd and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class OneLineErrors(WholeHelp):
    """The root command group: usage errors (bad flag, bad number, missing option) as one ``error:`` line.

    Click's own handling prints a usage block and a boxed message over several lines; scripts and the robustness
    test rely on exactly one line. Only click's exceptions are handled here; anything else is a bug and
    propagates as a traceback.
    """

    def main(  # type: ignore[override]  # same parameters as click's main; the return mirrors it
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        code: Any
        try:
            code = super().main(
                args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False, **extra
            )
        except NoArgsIsHelpError as exc:
            typer.echo(exc.ctx.get_help())
            code = 0
        except typer.TyperException as exc:  # click's UsageError, BadParameter, NoSuchOption, FileError...
            typer.echo(f"error: {_usage_message(exc)}", err=True)
            code = exc.exit_code
        except typer.Abort:
            typer.echo("error: aborted", err=True)
            code = 1
        code = code if isinstance(code, int) else 0
        if not standalone_mode:
            return code
        sys.exit(code)


def _usage_message(exc: typer.TyperException) -> str:
    text = " ".join(exc.format_message().split())
    text = text[:1].lower() + text[1:]
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return one_line(text.rstrip(".") + hint)
