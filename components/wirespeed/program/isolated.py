"""Run a Pulumi program in a child process with a deadline, so the program cannot decide how `plan` ends.

A program is arbitrary Python. In the planning process it could call ``sys.exit(0)`` or ``os._exit(0)`` and
leave with exit 0 and no verdicts (a gate that passes what it never checked), loop for ever, or wait on a socket
that never answers. In a forked child it can do none of that to the caller: the child sends back the plan or the
error, and anything else (the child exiting on its own, being killed, running past the deadline) is a
:class:`ProgramError` naming what happened. The child leads a process group of its own, killed whole when `plan`
is done with it: a process the program forked (a helper left sleeping, a server it never stopped) does not outlive
the plan. Forking keeps the in-process planning path exactly as it is
(:mod:`wirespeed.program.runner`); only the parent's side is new.

The group also ends when `plan` itself is ended, however that happens, so a program that loops cannot run on as
an orphan holding the caller's stdout and stderr open (a pipeline reading `plan` would never see end of file):

* SIGTERM, SIGINT or SIGHUP to `plan`: its handler kills the group, then `plan` dies of the same signal (the
  status a shell reports as 128 + the signal's number), as an unhandled one would have ended it;
* anything else, SIGKILL included, which no handler sees: a watcher process in the group, forked by the child
  before the program starts and blocked on a pipe whose write end only `plan` holds, reads end of file when
  `plan` is gone and kills the group. It is a process, not a thread of the child, because a program stuck in C
  code holding the GIL (json.dumps of a huge value, a regular expression backtracking) would starve a thread.
  The child itself also has the kernel's parent-death signal (SIGKILL) on Linux.

What it cannot reach is a process the program moved out of the group on purpose (``os.setsid``).
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import multiprocessing
import os
import select
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from wirespeed.program.errors import ProgramError
from wirespeed.program.model import ProgramPlan


def run_program_isolated(directory: Path, stack: str | None, timeout_s: float) -> ProgramPlan:
    """:func:`wirespeed.program.run_program` in a forked child, ended after ``timeout_s`` seconds.

    Raises :class:`ProgramError` for everything the in-process run does, and also when the program ends the
    process itself (any exit code, ``os._exit`` included) or does not finish in time; what the program printed
    is passed on to stderr. SIGTERM, SIGINT and SIGHUP while the program runs kill it and end this process by the
    same signal (when called from the main thread, the only one Python lets set handlers).
    """
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    # The lifeline: this process alone keeps the write end (the child closes its copy first thing), so the read
    # end reaches end of file exactly when this process is gone. Non-inheritable: no program exec'd later sees it.
    lifeline, lifeline_write = os.pipe()
    child = context.Process(
        target=_child, args=(send, directory, stack, os.getpid(), lifeline, lifeline_write), daemon=True
    )
    message: tuple[Any, ...] | None = None
    try:
        with _signals_end(directory, child):
            try:
                child.start()
            finally:
                send.close()  # the child's ends of both pipes: this process must not hold them
                os.close(lifeline)
            try:
                with contextlib.suppress(OSError):  # also set here, so the group exists whichever side is first
                    os.setpgid(child.pid, child.pid)  # type: ignore[arg-type]  # started: pid is set
                if receive.poll(timeout_s):
                    with contextlib.suppress(EOFError):  # EOF: the child ended without a word (os._exit, a signal)
                        message = receive.recv()
                else:
                    child.kill()
                    raise ProgramError(
                        f"{directory}: the program did not finish within --timeout {timeout_s:g} s (a loop, or a "
                        "wait on something that never answers); nothing was checked"
                    )
            finally:
                if message is None:  # kill, not is_alive(): that would reap the child while a handler can act
                    child.kill()
                _kill_group(child.pid)
        # Reaped only once no handler can act: until then its pid (and group) cannot be given to another process.
        if child.pid is not None:
            child.join()
    finally:
        receive.close()
        os.close(lifeline_write)  # after the group is gone (its watcher would kill it anyway)
    if message is None:
        code = child.exitcode or 0
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        raise ProgramError(
            f"{directory}: the program ended the process itself ({how}) before it finished registering its "
            "resources; nothing was checked"
        )
    return _result(directory, message)


# The signals that end a process by default and that a user or a job runner sends to stop `plan`: kill (TERM,
# what CI and `timeout` send), interrupt (INT, Ctrl-C), hang-up (HUP, a terminal closed).
STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@contextlib.contextmanager
def _signals_end(directory: Path, child: multiprocessing.process.BaseProcess) -> Iterator[None]:
    """While the child may run: each of :data:`STOPPING_SIGNALS` kills its group, says so on stderr and ends
    this process by that signal. A signal this process ignores (``nohup`` ignores HUP) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield  # the watcher still ends the group when this process dies
        return

    def stop(signum: int, _frame: object) -> None:
        if child.pid is not None:  # None before the fork: then the child sees this process die
            with contextlib.suppress(OSError):  # the child itself too, in case neither side set its group yet
                os.kill(child.pid, signal.SIGKILL)
            _kill_group(child.pid)
        _say(
            f"error: {directory}: stopped by {signal.Signals(signum).name} while the program ran; the program and "
            "every process it started were killed; nothing was checked\n"
        )
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    saved = {}
    try:
        for signum in STOPPING_SIGNALS:
            previous = signal.getsignal(signum)
            if previous != signal.SIG_IGN:
                saved[signum] = signal.signal(signum, stop)
        yield
    finally:
        for signum, previous in saved.items():
            signal.signal(signum, previous)


def _say(line: str) -> None:
    """Write ``line`` to stderr only if that cannot block: a process stopping must not wait on a full pipe."""
    with contextlib.suppress(OSError, ValueError):  # a closed or hung-up stderr
        _, writable, _ = select.select([], [2], [], 0)
        if writable:
            os.write(2, line.encode())


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


def _child(
    send: Connection, directory: Path, stack: str | None, parent: int, lifeline: int, lifeline_write: int
) -> None:
    os.close(lifeline_write)  # first: the lifeline ends when `plan` does, not when this copy closes
    _die_with_parent(parent)
    for signum in STOPPING_SIGNALS:  # not `plan`'s handlers (they would act for `plan`), but ignored stays ignored
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)  # a group of its own, for _kill_group and the watcher
    _start_watcher(lifeline)  # before the program runs anything
    os.close(lifeline)
    _collect_less()

    from wirespeed.program import run_program

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


# The child's cyclic-GC thresholds (gc.set_threshold; CPython's defaults are 700, 10, 10). Importing the Pulumi SDK
# modules a program uses creates hundreds of thousands of objects that live until the child exits, and at the
# defaults CPython ran five full collections over all of them during aks-dsv6's plan: about 30% of the child's CPU
# (bench/plan/RESULTS.md). Collections still run, 70x less often for the youngest generation.
CHILD_GC_THRESHOLDS = (50_000, 20, 20)


def _collect_less() -> None:
    """This process runs one program and exits: what the parent imported is never garbage (frozen: never scanned
    again), and the collector runs far less often while the SDK imports."""
    import gc

    gc.freeze()
    gc.set_threshold(*CHILD_GC_THRESHOLDS)


# <linux/prctl.h>: PR_SET_PDEATHSIG = 1.
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """SIGKILL this process when `plan` dies (Linux; the watcher covers the rest of the group, and other systems)."""
    if sys.platform == "linux":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # `plan` may have died before the signal was asked for: then it never comes.
    if os.getppid() != parent:
        os._exit(1)


def _start_watcher(lifeline: int) -> None:
    """Fork the watcher: a process of this group that kills the group once the lifeline reads end of file."""
    if os.fork() != 0:
        return
    try:
        # Hold nothing of the caller's: not its stdout and stderr (a pipeline would wait on them), not the
        # child's answer pipe (`plan` must see end of file when the child dies without a word).
        # The lifeline moved above 2 first, in case it is one of them (a caller that started `plan` with fd 0 closed).
        watch = fcntl.fcntl(lifeline, fcntl.F_DUPFD, 3)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.closerange(3, watch)
        os.closerange(watch + 1, os.sysconf("SC_OPEN_MAX"))
        while os.read(watch, 1):
            pass
        os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(0)  # nothing of the forked Python state runs: no atexit, no buffered output
