"""Helpers the benches share: machine facts, building the Go binaries, the host-sysctl lock, cleanup.

Benches run as root on a shared machine, so everything here is about leaving the host as it was found:
namespaces are deleted and global sysctls restored even when a step fails or the run is interrupted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
AGENT_MODULE = REPO / "agent"

# Every tool in this repository that writes a global (host netns) sysctl takes this lock, so two runs on
# the shared machine cannot save each other's temporary value as "the original" and restore it.
HOST_SYSCTL_LOCK = Path("/run/lock/wirespeed-host-sysctl.lock")


def cpu_ticks(pid: int) -> int:
    """User + system CPU ticks of a process (fields 14 and 15 of proc(5)'s /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def status_kib(pid: int, key: str) -> int:
    """A KiB field of /proc/PID/status (VmRSS, VmHWM, RssAnon...)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def rss_split_mib(pid: int) -> dict[str, float]:
    """RssAnon (heap, stacks) and RssFile (the static binary's own pages) now, in MiB: the two halves of VmRSS
    that different fixes shrink."""
    return {f"{key[3:].lower()}_mib": round(status_kib(pid, key) / 1024, 2) for key in ("RssAnon", "RssFile")}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sh(args: Sequence[str], *, check: bool = True, capture: bool = True, timeout: float = 60) -> str:
    """Run a command; on failure raise with its stderr so the report says what broke."""
    proc = subprocess.run(list(args), capture_output=capture, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {(proc.stderr or '').strip()}")
    return proc.stdout if capture else ""


def machine() -> dict[str, Any]:
    cpu_model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": os.cpu_count(),
        "kernel": platform.release(),
        "cpu_model": cpu_model,
        "os": _os_release(),
        "go": sh(["go", "env", "GOVERSION"]).strip(),
    }


def recorded_path(path: Path | str) -> str:
    """A path as a recorded result shows it: relative to the repository when inside it, so a result names no
    machine's checkout (tests/repo/test_references.py refuses paths beside the repository)."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else resolved.name


def source() -> dict[str, Any]:
    """The commit the binaries were built from, and whether the agent sources had uncommitted changes."""
    head = sh(["git", "-C", str(REPO), "rev-parse", "HEAD"], check=False).strip()
    dirty = sh(
        ["git", "-C", str(REPO), "status", "--porcelain", "--", "agent/cmd", "agent/internal", "agent/go.mod"],
        check=False,
    ).strip()
    return {"commit": head, "agent_tree_dirty": bool(dirty)}


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def cpu_busy_pct(seconds: float = 2.0) -> float:
    """Share of all CPUs busy over a short window: the load average lags by a minute, this does not."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + fields[4]  # idle + iowait
        return sum(fields), idle

    total0, idle0 = sample()
    time.sleep(seconds)
    total1, idle1 = sample()
    return round(100 * (1 - (idle1 - idle0) / max(1, total1 - total0)), 1)


def _os_release() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    return ""


def go_build(package: str, out_dir: Path) -> Path:
    """Build ./cmd/<package> of the agent module statically, the way the image build does."""
    out = out_dir / package
    env = dict(os.environ, CGO_ENABLED="0")
    log(f"building {package}")
    proc = subprocess.run(
        ["go", "build", "-o", str(out), f"./cmd/{package}"],
        cwd=AGENT_MODULE,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"go build ./cmd/{package}: {proc.stderr.strip()}")
    return out


@contextlib.contextmanager
def host_sysctl_lock(timeout: float = 120) -> Iterator[None]:
    HOST_SYSCTL_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(HOST_SYSCTL_LOCK, "w") as f:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{HOST_SYSCTL_LOCK} held by another run for {timeout:.0f}s") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def sysctl_path(name: str, root: Path = Path("/proc/sys")) -> Path:
    return root / name.replace(".", "/")


def read_sysctl(name: str) -> str:
    return sysctl_path(name).read_text().strip()


def write_sysctl(name: str, value: str | int) -> None:
    sysctl_path(name).write_text(f"{value}\n")


@contextlib.contextmanager
def restored_sysctls(names: Sequence[str]) -> Iterator[dict[str, str]]:
    """Save the host values of names and write them back on the way out, whatever happened."""
    saved = {n: read_sysctl(n) for n in names}
    log(f"saved host sysctls {saved}")
    try:
        yield saved
    finally:
        for n, v in saved.items():
            try:
                write_sysctl(n, v)
            except OSError as e:
                log(f"RESTORE FAILED for {n}={v}: {e}")
        log(f"restored host sysctls {saved}")


@contextlib.contextmanager
def netns(*names: str) -> Iterator[None]:
    """Create named network namespaces and delete them on the way out (deleting also removes their links)."""
    created: list[str] = []
    try:
        for n in names:
            sh(["ip", "netns", "add", n])
            created.append(n)
            sh(["ip", "-n", n, "link", "set", "lo", "up"])
        yield
    finally:
        for n in reversed(created):
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                sh(["ip", "netns", "del", n])
        if created:
            log(f"deleted namespaces {created}")


def terminate(proc: subprocess.Popen[Any], timeout: float = 5) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit so finally blocks (namespace deletion, sysctl restore) still run."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)


def require_root() -> None:
    if os.geteuid() != 0:
        raise SystemExit("needs root: it creates network namespaces and writes host sysctls")


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A temporary directory for built binaries and logs, removed on any exit (a build is ~25 MB)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def finish(result: dict[str, Any], json_path: Path | None) -> int:
    """Print the machine load around the run and write the raw result; every bench ends this way."""
    print(
        f"load average before/after: {result['loadavg_before']} / {result['loadavg_after']};",
        f"CPU busy before/after: {result['cpu_busy_pct_before']}% / {result['cpu_busy_pct_after']}%",
    )
    if json_path:
        json_path.write_text(dump(result) + "\n")
    return 0


def record(bench_dir: Path, result: dict[str, Any]) -> Path:
    """Write ``result`` as ``<bench_dir>/results/<UTC timestamp>.json``: one file per recorded run."""
    path = bench_dir / "results" / time.strftime("%Y-%m-%d-%H%M%S.json", time.gmtime())
    path.parent.mkdir(exist_ok=True)
    path.write_text(dump(result) + "\n")
    log(f"wrote {path}")
    return path


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=False)
