"""Run a Pulumi program in a child process with a deadline, so the program cannot decide how `plan` ends.

A program is arbitrary Python. In the planning process it could call ``sys.exit(0)`` or ``os._exit(0)`` and
leave with exit 0 and no verdicts (a gate that passes what it never checked), loop for ever, or wait on a socket
that never answers. In a forked child it can do none of that to the caller: the child sends back the plan or the
error, and anything else (the child exiting on its own, being killed, running past the deadline) is a
:class:`ProgramError` naming what happened. The child leads a process group of its own, killed whole when `plan`
is done with it: a process the program forked (a helper left sleeping, a server it never stopped) does not outlive
the plan. Forking keeps the in-process planning path exactly as it is
(:mod:`wirespeed.program.runner`); only the parent's side is new.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import signal
import sys
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from wirespeed.program.errors import ProgramError
from wirespeed.program.model import ProgramPlan


def run_program_isolated(directory: Path, stack: str | None, timeout_s: float) -> ProgramPlan:
    """:func:`wirespeed.program.run_program` in a forked child, ended after ``timeout_s`` seconds.

    Raises :class:`ProgramError` for everything the in-process run does, and also when the program ends the
    process itself (any exit code, ``os._exit`` included) or does not finish in time; what the program printed
    is passed on to stderr.
    """
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(send, directory, stack), daemon=True)
    child.start()
    with contextlib.suppress(OSError):  # also set here, so the group exists whichever side gets there first
        os.setpgid(child.pid, child.pid)  # type: ignore[arg-type]  # started: pid is set
    send.close()
    message: tuple[Any, ...] | None = None
    try:
        if receive.poll(timeout_s):
            with contextlib.suppress(EOFError):  # EOF: the child ended without a word (os._exit, a signal)
                message = receive.recv()
        else:
            child.kill()
            raise ProgramError(
                f"{directory}: the program did not finish within --timeout {timeout_s:g} s (a loop, or a wait on "
                "something that never answers); nothing was checked"
            )
    finally:
        receive.close()
        if child.is_alive() and message is None:
            child.kill()
        _kill_group(child.pid)
        child.join()
    if message is None:
        code = child.exitcode or 0
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        raise ProgramError(
            f"{directory}: the program ended the process itself ({how}) before it finished registering its "
            "resources; nothing was checked"
        )
    return _result(directory, message)


def _kill_group(pgid: int | None) -> None:
    """Kill what is left of the child's process group (the child itself has sent its answer or been killed)."""
    if pgid is None:
        return
    with contextlib.suppress(OSError):  # ESRCH: nothing left; EPERM: a member that changed user
        os.killpg(pgid, signal.SIGKILL)


def _result(directory: Path, message: tuple[Any, ...]) -> ProgramPlan:
    kind, *rest = message
    sys.stderr.write(rest[-1])  # what the program printed, in order, before any verdict
    if kind == "plan":
        plan: ProgramPlan = rest[0]
        return plan
    if kind == "error":
        raise ProgramError(rest[0], rest[1])
    if kind == "exit":
        raise ProgramError(
            f"{directory}: the program ended the process itself (sys.exit({rest[0]!r})) before it finished "
            "registering its resources; nothing was checked"
        )
    # Not the program's failure (run_program reports those as ProgramError): a bug in wirespeed, shown as one.
    raise RuntimeError(f"planning {directory} failed in the child process:\n{rest[0]}")


def _child(send: Connection, directory: Path, stack: str | None) -> None:
    from wirespeed.program import run_program

    with contextlib.suppress(OSError):
        os.setpgid(0, 0)  # a group of its own, for _kill_group

    captured = io.StringIO()
    message: tuple[Any, ...]
    try:
        with contextlib.redirect_stderr(captured):
            plan = run_program(directory, stack)
        message = ("plan", plan, captured.getvalue())
    except ProgramError as exc:
        message = ("error", exc.message, exc.problems, captured.getvalue())
    except SystemExit as exc:
        message = ("exit", exc.code, captured.getvalue())
    except BaseException:
        message = ("crash", traceback.format_exc(), captured.getvalue())
    try:
        send.send(message)
    except BaseException:
        send.send(("crash", traceback.format_exc(), captured.getvalue()))
    finally:
        send.close()
        os._exit(0)  # no atexit handler or buffered output of the parent's copy runs twice
