"""A Pulumi program never outlives `wirespeed plan`, whatever ends `plan`: SIGTERM, SIGINT and SIGHUP (plan kills
the program's process group, says so in one line and dies of the same signal) and SIGKILL (which nothing in `plan`
sees: the child's watcher process and its parent-death signal end the group). Real processes throughout: the
installed console script runs a program that loops, one that forks a grandchild that loops, and one stuck in C
code holding the GIL (as a child was stuck encoding a "billion laughs" stack file); the test kills `plan`, then
waits, bounded and generously for a loaded machine, until no process of the program's group is left and a pipe
reading `plan`'s stdout and stderr reaches end of file."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clirun import WIRESPEED

# Generous bounds for a 2-core machine shared with other work: they bound a hang, they do not measure speed.
START_S = 180  # `plan` starts and its child imports the Pulumi SDK before the program runs
END_S = 60

# Each program writes where it runs (its pid and process group, and its grandchild's pid) once it is running,
# then never finishes on its own.
LOOP = """
import json, os
json.dump({"pid": os.getpid(), "pgid": os.getpgrp()}, open(MARKER + ".tmp", "w"))
os.rename(MARKER + ".tmp", MARKER)
while True:
    pass
"""
GRANDCHILD = """
import json, os, time
child = os.fork()
if child == 0:
    while True:
        pass
json.dump({"pid": os.getpid(), "pgid": os.getpgrp(), "grandchild": child}, open(MARKER + ".tmp", "w"))
os.rename(MARKER + ".tmp", MARKER)
while True:
    time.sleep(1)
"""
# sum() over a range runs in C without ever releasing the GIL or returning to the interpreter: a thread of the
# child watching for `plan`'s end would never run.
GIL_HELD = """
import json, os
json.dump({"pid": os.getpid(), "pgid": os.getpgrp()}, open(MARKER + ".tmp", "w"))
os.rename(MARKER + ".tmp", MARKER)
sum(range(10**18))
"""
PROGRAMS = {"loop": LOOP, "grandchild": GRANDCHILD, "gil-held": GIL_HELD}


def project(tmp_path: Path, program: str) -> tuple[Path, Path]:
    directory = tmp_path / "project"
    directory.mkdir()
    marker = tmp_path / "running.json"
    (directory / "Pulumi.yaml").write_text("name: lifetime\nruntime: python\n")
    (directory / "__main__.py").write_text(f"MARKER = {str(marker)!r}\n{program}")
    return directory, marker


def group_members(pgid: int) -> list[int]:
    """The live processes (zombies left for a PID 1 that does not reap are not) whose process group is ``pgid``."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(stat.parent.name))
    return members


def wait_until_gone(pgid: int) -> list[int]:
    deadline = time.monotonic() + END_S
    while (left := group_members(pgid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def default_dispositions() -> None:
    """In `plan`, before it execs: the stopping signals as a shell's foreground job has them (a background job
    of a shell without job control would start with SIGINT ignored, and `plan` rightly keeps it so)."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


@contextlib.contextmanager
def running_plan(
    directory: Path, marker: Path, dispositions: Callable[[], None] = default_dispositions
) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, int]]]:
    """`wirespeed plan DIR` with its program running; whatever is left of the program is killed afterwards, so a
    failing test leaves nothing spinning on the machine."""
    assert WIRESPEED
    plan = subprocess.Popen(
        [WIRESPEED, "plan", str(directory), "--timeout", "3600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=dispositions,  # only signal calls: safe between fork and exec
    )
    where: dict[str, int] = {}
    try:
        deadline = time.monotonic() + START_S
        while not marker.exists():
            assert plan.poll() is None, f"plan ended before its program ran: {plan.communicate()}"
            assert time.monotonic() < deadline, f"the program did not start within {START_S} s"
            time.sleep(0.1)
        where = json.loads(marker.read_text())
        assert where["pgid"] == where["pid"]  # the program's process leads a group of its own
        yield plan, where
    finally:
        with contextlib.suppress(OSError):
            plan.kill()
        if "pgid" in where:
            with contextlib.suppress(OSError):
                os.killpg(where["pgid"], signal.SIGKILL)
        if "grandchild" in where:
            with contextlib.suppress(OSError):
                os.kill(where["grandchild"], signal.SIGKILL)
        plan.communicate()


@pytest.mark.parametrize(
    ("program", "signum"),
    [
        *[("loop", s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL)],
        *[("grandchild", s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL)],
        ("gil-held", signal.SIGKILL),
        ("gil-held", signal.SIGTERM),
    ],
    ids=lambda v: v.name if isinstance(v, signal.Signals) else v,
)
def test_the_program_and_what_it_forked_end_with_plan(tmp_path, program, signum):
    directory, marker = project(tmp_path, PROGRAMS[program])
    with running_plan(directory, marker) as (plan, where):
        plan.send_signal(signum)
        try:
            # communicate() returns only once both pipes reach end of file: no process is left holding them.
            stdout, stderr = plan.communicate(timeout=END_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"plan's stdout/stderr still open {END_S} s after {signum.name}: a process holds them")
        assert plan.returncode == -signum  # died of the signal, as an unhandled one would have ended it
        left = wait_until_gone(where["pgid"])
        assert left == [], f"processes of the program's group {where['pgid']} outlived plan: {left}"
        assert stdout == b""
        if signum == signal.SIGKILL:
            assert stderr == b""
        else:
            assert stderr.decode() == (
                f"error: {directory}: stopped by {signum.name} while the program ran; the program and every "
                "process it started were killed; nothing was checked\n"
            )


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_plan_stopped_while_its_child_still_reads_the_stack_file(tmp_path, signum):
    """A stack file of 900 KB (under the 1 MiB cap) takes the child seconds to read (pure-Python YAML), before
    the program or the Pulumi SDK is loaded: `plan` stopped then leaves nothing behind either."""
    directory, marker = project(tmp_path, LOOP)
    (directory / "Pulumi.dev.yaml").write_text("config:\n  lifetime:list: [" + ", ".join(["0"] * 300_000) + "]\n")
    assert WIRESPEED
    plan = subprocess.Popen(
        [WIRESPEED, "plan", str(directory), "--stack", "dev", "--timeout", "3600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_dispositions,  # only signal calls: safe between fork and exec
    )
    child = 0
    try:
        deadline = time.monotonic() + START_S
        # Once the child leads a group of its own it reads the project's files first.
        while not (child and group_members(child)):
            assert plan.poll() is None, f"plan ended before its child started: {plan.communicate()}"
            assert time.monotonic() < deadline, f"plan's child did not start within {START_S} s"
            time.sleep(0.05)
            child = next(iter(children(plan.pid)), 0)
        plan.send_signal(signum)
        try:
            plan.communicate(timeout=END_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"plan's stdout/stderr still open {END_S} s after {signum.name}: a process holds them")
        assert plan.returncode == -signum
        assert wait_until_gone(child) == [], f"processes of the child's group {child} outlived plan"
        assert not marker.exists(), "the program ran: plan was not stopped while the stack file was read"
    finally:
        with contextlib.suppress(OSError):
            plan.kill()
        if child:
            with contextlib.suppress(OSError):
                os.killpg(child, signal.SIGKILL)
        plan.communicate()


def test_a_hangup_plan_ignores_stays_ignored(tmp_path):
    """`nohup wirespeed plan ...` must survive the terminal closing: plan does not take over an ignored SIGHUP."""
    directory, marker = project(tmp_path, LOOP)

    def hangup_ignored() -> None:
        default_dispositions()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    with running_plan(directory, marker, hangup_ignored) as (plan, where):
        plan.send_signal(signal.SIGHUP)
        time.sleep(2)  # long enough for a handler to have acted; what is checked is that nothing ended
        assert plan.poll() is None, "plan ended on a SIGHUP it was started to ignore"
        assert group_members(where["pgid"]) != []
        plan.send_signal(signal.SIGTERM)
        plan.communicate(timeout=END_S)
        assert plan.returncode == -signal.SIGTERM
        assert wait_until_gone(where["pgid"]) == []
