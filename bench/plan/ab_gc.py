"""A/B: `wirespeed plan DIR --json` CPU time with the child's GC tuning (wirespeed.program.isolated._collect_less)
and without it, interleaved run by run, so both sides see the same load on the shared machine.

Each project (the root one and every examples/*/Pulumi.yaml) runs 1 warm-up and --runs timed runs per side; CPU
time (user + system of `plan` and its children) from wait4()'s rusage. The "default-gc" side replaces
_collect_less with a no-op before the CLI forks its child; nothing else differs. Prints the medians and the load;
with --record writes results/<date>-<time>-ab-gc.json.

Usage: bench/plan/ab_gc.py [--runs N] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CODE = """
import sys
import wirespeed.program.isolated as isolated
if sys.argv[1] == "default-gc":
    isolated._collect_less = lambda: None
sys.argv = ["wirespeed", "plan", sys.argv[2], "--json"]
from wirespeed.cli import main
main()
"""
SIDES = ("default-gc", "tuned-gc")


def cpu_s(side: str, project: Path) -> float:
    proc = subprocess.Popen(
        [sys.executable, "-c", CODE, side, str(project)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"plan {project} ({side}) failed")
    return round(usage.ru_utime + usage.ru_stime, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    projects = [REPO, *sorted(p.parent for p in (REPO / "examples").glob("*/Pulumi.yaml"))]
    load_before = os.getloadavg()
    results: dict[str, dict[str, list[float]]] = {}
    for project in projects:
        name = "root project" if project == REPO else str(project.relative_to(REPO))
        runs: dict[str, list[float]] = {side: [] for side in SIDES}
        for i in range(args.runs + 1):
            for side in SIDES:
                cpu = cpu_s(side, project)
                if i:  # the first round warms the page cache
                    runs[side].append(cpu)
        results[name] = runs
        a, b = (statistics.median(runs[side]) for side in SIDES)
        print(f"{name:34s} default-gc {a:.2f} s  tuned-gc {b:.2f} s  ({(b - a) / a * 100:+.0f}%)")
    load_after = os.getloadavg()
    print(f"load average before/after: {load_before} / {load_after}")
    if args.record:
        path = HERE / "results" / time.strftime("%Y-%m-%d-%H%M%S-ab-gc.json", time.gmtime())
        doc = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "method": __doc__.split("\n\n")[1].replace("\n", " "),
            "loadavg_before": load_before,
            "loadavg_after": load_after,
            "cpu_s": results,
        }
        path.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
