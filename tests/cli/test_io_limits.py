"""Every file a command reads is a regular file under a stated size: real FIFOs with no writer, /dev/zero,
directories, oversized (sparse) files and non-UTF-8 files are refused at once with one ``error:`` line naming
the path, through the installed console script (a hang would hit the subprocess timeout)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from clirun import WIRESPEED
from conftest import ROOT
from wirespeed.io_limits import SMALL_LIMIT, InputFileError, read_bytes, read_text

EXPORT = ROOT / "tests" / "fixtures" / "check" / "aks-export.json"
PROGRAM = ROOT / "tests" / "fixtures" / "programs" / "aks-basic"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert WIRESPEED
    return subprocess.run([WIRESPEED, *args], capture_output=True, text=True, timeout=30, check=False, cwd=cwd)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


def _bad(kind: str, tmp_path: Path) -> tuple[Path, str]:
    """A hostile input of ``kind`` and the words its error must contain."""
    if kind == "fifo":
        path = tmp_path / "pipe.json"
        os.mkfifo(path)
        return path, "is a FIFO (named pipe), not a regular file"
    if kind == "dev-zero":
        return Path("/dev/zero"), "is a character device, not a regular file"
    if kind == "directory":
        return tmp_path, "is a directory, not a regular file"
    if kind == "oversized":
        path = tmp_path / "big.json"
        with path.open("wb") as f:
            f.truncate(1024 * 1024 * 1024 + 1)  # sparse: costs no disk
        return path, "more than the"
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"name": "caf\xe9"}')
    return path, "byte 13 (0xe9) is not UTF-8"


def _argv(reader: str, path: Path) -> list[str]:
    return {
        "check": ["check", str(path)],
        "check-config": ["check", str(EXPORT), "--config", str(path)],
        "plan-workload": ["plan", "--workload", str(path)],
        "plan-compare": ["plan", str(PROGRAM), "--compare", str(path)],
        "plan-policy-config": ["plan", str(PROGRAM), "--policy-config", str(path)],
        "profile-validate": ["profile", "validate", str(path)],
        "render-profile": ["render", "node-tuning", "--profile", str(path)],
    }[reader]


READERS = ["check", "check-config", "plan-workload", "plan-compare", "plan-policy-config", "profile-validate",
           "render-profile"]  # fmt: skip
KINDS = ["fifo", "dev-zero", "directory", "oversized", "not-utf8"]


# check's own cap (1 GiB) has its own test below; the oversized case is the small readers' 1 MiB.
CASES = [(reader, kind) for reader in READERS for kind in KINDS if (reader, kind) != ("check", "oversized")]


@pytest.mark.parametrize(("reader", "kind"), CASES)
def test_every_reader_refuses_what_is_not_a_small_regular_utf8_file(reader, kind, tmp_path):
    path, words = _bad(kind, tmp_path)
    out = run(*_argv(reader, path))
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.splitlines()
    if reader == "render-profile":  # a validator: one `error:` heading, then the problem on an indented line
        assert lines[0].startswith("error: "), out.stderr
        assert lines[0].endswith(":"), out.stderr
        assert len(lines) == 2, out.stderr
        assert lines[1].startswith("  --profile[0]: "), out.stderr
    else:
        assert len(lines) == 1, out.stderr
        assert out.stderr.startswith(f"error: {path}") or out.stderr.startswith("error: --"), out.stderr
    assert str(path) in out.stderr, out.stderr
    assert words in out.stderr, out.stderr
    assert "Traceback" not in out.stdout + out.stderr


def test_check_cap_names_the_limit(tmp_path):
    path = tmp_path / "export.json"
    with path.open("wb") as f:
        f.truncate(1024 * 1024 * 1024 + 1)
    out = run("check", str(path))
    assert out.returncode == 2
    assert f"error: {path}: is 1,073,741,825 bytes, more than the 1,024 MiB a JSON or YAML file may have" in out.stderr


@pytest.mark.parametrize("name", ["Pulumi.yaml", "Pulumi.dev.yaml"])
@pytest.mark.parametrize("kind", ["fifo", "not-utf8", "oversized"])
def test_pulumi_project_and_stack_files_are_bounded(name, kind, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(PROGRAM, project)
    target = project / name
    target.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "not-utf8":
        target.write_bytes(b"name: caf\xe9\nruntime: python\n")
    else:
        with target.open("wb") as f:
            f.truncate(SMALL_LIMIT + 1)
    out = run("plan", str(project), *(["--stack", "dev"] if name != "Pulumi.yaml" else []))
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stderr.startswith("error: "), out.stderr
    assert out.stderr.count("\n") == 1, out.stderr
    assert name in out.stderr
    assert "Traceback" not in out.stderr


def test_config_that_is_not_an_object_is_refused(tmp_path):
    for text, shown in (("[]", "list"), ("null", "null"), ('"all"', "str"), ("3", "int")):
        path = tmp_path / "config.json"
        path.write_text(text)
        out = run("check", str(EXPORT), "--config", str(path))
        assert out.returncode == 2
        assert out.stderr.startswith(f"error: --config {path}: {shown} is not allowed: a JSON object"), out.stderr


def test_reader_returns_a_regular_file_and_refuses_a_fifo_without_blocking(fifo, tmp_path):
    good = tmp_path / "ok.json"
    good.write_text('{"ok": true}')
    assert read_text(good, 100) == '{"ok": true}'
    assert read_bytes(good, 12) == b'{"ok": true}'
    with pytest.raises(InputFileError, match="more than the 11 bytes"):
        read_bytes(good, 11)
    with pytest.raises(InputFileError, match="FIFO"):
        read_bytes(fifo, 100)  # no writer: an ordinary open would block here for ever


def test_a_fifo_with_a_writer_is_still_refused(fifo):
    writer = subprocess.Popen(["sh", "-c", f"yes > {fifo}"])
    try:
        with pytest.raises(InputFileError, match="not a regular file"):
            read_bytes(fifo, 100)
    finally:
        writer.kill()
        writer.wait()


def test_missing_and_unreadable_files_name_the_reason(tmp_path):
    with pytest.raises(InputFileError, match="No such file or directory"):
        read_bytes(tmp_path / "absent.json", 100, what="profile")
    with pytest.raises(InputFileError, match="is not a file name"):
        read_bytes(Path("a\0b"), 100)
