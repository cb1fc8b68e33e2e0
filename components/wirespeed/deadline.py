"""One total deadline for a command that talks to the network, whatever it is waiting on.

Per-socket timeouts do not bound a call: a server that drip-feeds one byte per read, a ``continue`` token that
never ends, or a kubeconfig exec credential plugin that sleeps each keeps a command alive for ever. A real-time
interval timer (``SIGALRM``) interrupts whichever of those the main thread is blocked in; the exception derives
from ``BaseException`` so no client library's ``except Exception`` swallows it. Child processes started inside the
block and still running when it fires (an exec plugin) are killed with everything they started (a plugin that is a
shell script waits on its own children, which would otherwise be left running): nothing outlives the command, and
nothing the caller started before is touched.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType


class DeadlineExceeded(BaseException):
    """The command's total deadline passed."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`DeadlineExceeded` in the main thread once ``seconds`` have passed inside the block.

    Outside the main thread (no signals there) the block runs unbounded: the CLI always calls from the main
    thread, and library callers keep their own timeouts.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    before = _children()

    def expire(signum: int, frame: FrameType | None) -> None:
        # The whole tree is listed before anything is killed: a killed parent's children are re-parented and
        # could no longer be found through it.
        for pid in _descendants(_children() - before):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        raise DeadlineExceeded

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _children(pid: int | str = "self") -> set[int]:
    """The direct children of process ``pid`` (Linux lists them per thread under /proc/PID/task)."""
    found: set[int] = set()
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError, ValueError):
            found.update(int(child) for child in children.read_text().split())
    return found


def _descendants(roots: set[int]) -> list[int]:
    """``roots`` and every process below them, parents first."""
    found: list[int] = []
    queue = sorted(roots)
    while queue:
        pid = queue.pop(0)
        if pid in found:
            continue
        found.append(pid)
        queue.extend(sorted(_children(pid)))
    return found
