"""Benchmark: wall time and peak RSS of the `wirespeed` CLI as a whole process, and of `import wirespeed.sizing`.

Method: N runs each (after 3 warm-ups) via subprocess; wall time by time.perf_counter around the child;
peak RSS from wait4()'s ru_maxrss of each child. Prints and (with --record) writes results/<date>-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import benchlib as bl  # noqa: E402  (bench/ is not a package; the benches share this module)

WIRESPEED = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"

CASES = {
    "size azure-lb --json": [
        WIRESPEED,
        "size",
        "azure-lb",
        "--pool",
        "100:2",
        "--pool",
        "20:10%",
        "--connections-per-second",
        "12",
        "--json",
    ],
    "import wirespeed.sizing": [sys.executable, "-c", "import wirespeed.sizing"],
    "python -c pass (interpreter floor)": [sys.executable, "-c", "pass"],
}


def measure(argv: list[str], runs: int) -> dict[str, float]:
    walls, rss = [], []
    for i in range(runs + 3):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{argv} failed")
        if i >= 3:
            walls.append(wall * 1000)
            rss.append(usage.ru_maxrss / 1024)
    walls.sort()
    return {
        "runs": runs,
        "wall_ms_median": round(statistics.median(walls), 1),
        "wall_ms_p90": round(walls[int(0.9 * (len(walls) - 1))], 1),
        "wall_ms_min": round(walls[0], 1),
        "peak_rss_mib_max": round(max(rss), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--record", action="store_true", help="write results/<date>-<time>.json")
    args = parser.parse_args()
    load_before = bl.loadavg()
    results = {name: measure(argv, args.runs) for name, argv in CASES.items()}
    doc = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {**bl.machine(), "python": platform.python_version()},
        "source": bl.source(),
        "loadavg_before": load_before,
        "loadavg_after": bl.loadavg(),
        "results": results,
    }
    print(json.dumps(doc, indent=2))
    if args.record:
        bl.record(HERE, doc)


if __name__ == "__main__":
    main()
