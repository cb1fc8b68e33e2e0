"""`wirespeed plan DIR` always ends with its verdicts or exit 2 saying why: a program that calls ``sys.exit(0)`` or
``os._exit(0)``, loops for ever or sleeps past ``--timeout`` cannot give exit 0 without verdicts (programs run
under the Pulumi SDK's mocks in a forked child; the installed console script, as CI runs it)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from clirun import WIRESPEED, running
from conftest import ROOT

BASIC = ROOT / "tests" / "fixtures" / "programs" / "aks-basic"


def project_with(tmp_path: Path, tail: str) -> Path:
    """aks-basic with ``tail`` appended to its program (after it registered everything)."""
    project = tmp_path / "project"
    shutil.copytree(BASIC, project)
    # The copy's virtualenv path (relative in Pulumi.yaml) is never used: plan runs in this interpreter.
    main = project / "__main__.py"
    main.write_text(main.read_text() + "\n" + tail + "\n")
    return project


def plan(project: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    assert WIRESPEED
    return subprocess.run(
        [WIRESPEED, "plan", str(project), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.mark.parametrize(
    ("tail", "words"),
    [
        ("import sys; sys.exit(0)", "the program ended the process itself (sys.exit(0))"),
        ("raise SystemExit", "the program ended the process itself (sys.exit(None))"),
        ("import os; os._exit(0)", "the program ended the process itself (exit code 0)"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "the program ended the process itself (signal 9)"),
    ],
    ids=["sys.exit", "SystemExit", "os._exit", "SIGKILL"],
)
def test_a_program_cannot_end_plan_with_exit_0(tmp_path, tail, words):
    out = plan(project_with(tmp_path, tail))
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stdout == ""  # no plan and no verdicts were printed
    assert out.stderr == f"error: {tmp_path / 'project'}: {words} before it finished registering its resources; " \
        "nothing was checked\n"  # fmt: skip


@pytest.mark.parametrize(
    ("raised", "name"),
    [
        ("KeyboardInterrupt", "KeyboardInterrupt"),
        ("GeneratorExit('closed early')", "GeneratorExit: closed early"),
        ("Stop('the program stops here')", "Stop: the program stops here"),
    ],
    ids=["KeyboardInterrupt", "GeneratorExit", "own-BaseException"],
)
def test_a_base_exception_the_program_raises_is_its_failure_not_a_crash(tmp_path, raised, name):
    """Not SystemExit (the program ending the process, above) but the others: the program's failure as an
    Exception is, its last frames under the line (in `plan` no terminal's Ctrl-C reaches the program)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: stops\nruntime: python\n")
    (project / "__main__.py").write_text(
        f"class Stop(BaseException):\n    pass\n\n\ndef stop():\n    raise {raised}\n\n\nstop()\n"
    )
    out = plan(project)
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    assert out.stderr == (
        f"error: {project / '__main__.py'}: __main__.py:6: {name}:\n"
        "  __main__.py:9 in <module>: stop()\n"
        f"  __main__.py:6 in stop: raise {raised}\n"
    )


@pytest.mark.parametrize("tail", ["while True:\n    pass", "import time\ntime.sleep(3600)"], ids=["loop", "sleep"])
def test_plan_timeout_ends_a_program_that_never_finishes(tmp_path, tail):
    started = time.monotonic()
    out = plan(project_with(tmp_path, tail), "--timeout", "3", timeout=60)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stderr == (
        f"error: {tmp_path / 'project'}: the program did not finish within --timeout 3 s (a loop, or a wait on "
        "something that never answers); nothing was checked\n"
    )
    assert time.monotonic() - started < 50  # ended by --timeout, not the subprocess guard


def test_what_the_program_prints_and_its_plan_still_come_through(tmp_path):
    out = plan(project_with(tmp_path, "print('hello from the program')"), "--json")
    assert "hello from the program" in out.stderr
    assert out.returncode == 2
    assert "policy:" in out.stderr
    assert '"policy"' in out.stdout


def test_timeout_is_validated():
    out = plan(BASIC, "--timeout", "0")
    assert out.returncode == 2
    assert out.stderr.startswith("error: ")
    assert "--timeout" in out.stderr


@pytest.mark.parametrize(
    ("then", "args"), [("", ()), ("while True:\n    pass", ("--timeout", "20"))], ids=["finished", "timed-out"]
)
def test_nothing_the_program_forked_outlives_the_plan(tmp_path, then, args):
    pids = tmp_path / "forked"
    tail = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        f"    open({str(pids)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(3600)\n"
        "    os._exit(0)\n"
        "while not os.path.exists(" + repr(str(pids)) + "):\n"
        "    time.sleep(0.01)\n"
        f"{then}"
    )
    out = plan(project_with(tmp_path, tail), *args, timeout=60)
    assert "Traceback" not in out.stderr
    assert out.returncode == 2, (out.stdout, out.stderr)  # aks-basic's verdicts, or the timeout
    forked = int(pids.read_text())
    deadline = time.monotonic() + 10
    while running(forked) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(forked), f"the program's forked process {forked} is still running after plan ended"
