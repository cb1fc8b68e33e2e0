#!/usr/bin/env python3
"""Benchmark: fresh clone to first plan, the README's `make demo` on a machine that has only Python.

Each run: `git clone` of a commit into a new temporary folder, then `make demo` there with package caches that are
either EMPTY (new folders: every package is downloaded, as on a fresh machine) or WARM (the folders a cold run just
filled: a second clone on the same machine). The caches are pointed at with UV_CACHE_DIR and PIP_CACHE_DIR, so the
same method measures the pip-based Makefile of older commits. `--bootstrap-uv` makes the Makefile install its own uv
(`make UV=<clone>/.tools/uv/bin/uv`), as on a machine without uv on PATH; pip then runs with PIP_NO_CACHE_DIR in the
cold case. No other cache (Go, apt) is involved: `make demo` builds nothing else.

Reported per run: wall time of the clone and of `make demo`, when each step of `make demo` started (every output line
is timestamped as it arrives, so a step is the time between two `==>` lines), CPU time of the whole make (children's
rusage), bytes received by the machine during the run (/proc/net/dev, all interfaces but lo: other traffic on a shared
machine counts too), the virtualenv's size and the exit status. With --record, results/<date>-<time>.json.

Usage: bench/setup/run.py [--ref COMMIT] [--runs N] [--bootstrap-uv] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import benchlib as bl  # noqa: E402  (bench/ is not a package; the benches share this module)


def rx_bytes() -> int:
    total = 0
    for line in Path("/proc/net/dev").read_text().splitlines()[2:]:
        name, counters = line.split(":", 1)
        if name.strip() != "lo":
            total += int(counters.split()[0])
    return total


def du(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) if path.exists() else 0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def steps(lines: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """The set-up part of make's output (its commands and messages, not uv's package list) up to the plan's header."""
    out = []
    for t, text in lines:
        if text.startswith("# Pulumi project"):
            out.append((t, "(the plan starts printing)"))
            break
        if not text.startswith((" + ", " - ")):
            out.append((t, text))
    return out


def one_run(ref: str, caches: Path, cache_state: str, bootstrap_uv: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="wirespeed-setup-") as scratch:
        clone = Path(scratch) / "wirespeed"
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH", "UV_", "PIP_FIND"))
        }
        env.update(UV_CACHE_DIR=str(caches / "uv"), PIP_CACHE_DIR=str(caches / "pip"))
        if bootstrap_uv and cache_state == "empty":
            env["PIP_NO_CACHE_DIR"] = "1"
        received, cpu = rx_bytes(), children_cpu()
        start = time.perf_counter()
        subprocess.run(["git", "clone", "-q", str(bl.REPO), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", ref], check=True)
        cloned = time.perf_counter() - start
        make = ["make", "demo"] + ([f"UV={clone}/.tools/uv/bin/uv"] if bootstrap_uv else [])
        lines: list[tuple[float, str]] = []
        with subprocess.Popen(
            make, cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append((round(time.perf_counter() - start - cloned, 2), line.rstrip("\n")))
        total = time.perf_counter() - start
        return {
            "cache": cache_state,
            "bootstrap_uv": bootstrap_uv,
            "exit_status": proc.returncode,
            "clone_s": round(cloned, 2),
            "make_demo_s": round(total - cloned, 2),
            "clone_to_plan_s": round(total, 2),
            "cpu_s": round(children_cpu() - cpu, 2),
            "received_mb": round((rx_bytes() - received) / 1e6, 1),
            "venv_mb": round(du(clone / ".venv") / 1e6, 1),
            "steps": steps(lines),
            "output": lines,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ref", default="HEAD", help="commit to clone (default HEAD of this checkout)")
    parser.add_argument("--runs", type=int, default=1, help="cold+warm pairs")
    parser.add_argument("--bootstrap-uv", action="store_true", help="ignore uv on PATH: the Makefile installs it")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    ref = bl.sh(["git", "-C", str(bl.REPO), "rev-parse", args.ref]).strip()
    report: dict[str, Any] = {
        "bench": "setup",
        "ref": ref,
        "machine": {**bl.machine(), "python": sys.version.split()[0], "uv_on_path": shutil.which("uv")},
        "load_before": bl.loadavg(),
        "cpu_busy_pct_before": bl.cpu_busy_pct(),
        "runs": [],
    }
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="wirespeed-caches-") as caches:
            for state in ("empty", "warm"):
                bl.log(f"{ref[:12]}: fresh clone, make demo, {state} package caches")
                run = one_run(ref, Path(caches), state, args.bootstrap_uv)
                report["runs"].append(run)
                bl.log(
                    f"  exit {run['exit_status']}: clone {run['clone_s']} s + make demo {run['make_demo_s']} s = "
                    f"{run['clone_to_plan_s']} s; CPU {run['cpu_s']} s; received {run['received_mb']} MB; "
                    f".venv {run['venv_mb']} MB"
                )
                for t, text in run["steps"]:
                    bl.log(f"    {t:7.2f} s  {text[:110]}")
    report["load_after"] = bl.loadavg()
    print(json.dumps(report, indent=2))
    if args.record:
        out = HERE / "results" / time.strftime("%Y-%m-%d-%H%M%S.json", time.gmtime())
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        bl.log(f"recorded {out.relative_to(bl.REPO)}")


if __name__ == "__main__":
    main()
