"""Benchmark: the real-API-server test fixture (tests/apiserver.py): build cost and start-to-ready time.

Method:
- build: `builders/apiserver/build.sh` as a child process; wall time by time.perf_counter, peak RSS of the largest
  process in the build (the compiler or the linker) from getrusage(RUSAGE_CHILDREN).ru_maxrss. `--cold` builds
  with an empty temporary GOCACHE (the module cache is kept: downloads are measured separately by whoever warms
  it); without it, the warm rebuild every later `make test` pays.
- start-to-ready: N times, certificates + etcd + kube-apiserver started by tests/apiserver.running() until
  /readyz answers 200 (every post-start hook done), then torn down; the certificate generation and the
  readiness wait are timed separately.
Prints and (with --record) writes results/<date>-<time>.json with the machine, the commit and the load.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "tests"))
import apiserver as fixture  # noqa: E402  (tests/apiserver.py: the fixture itself is what is measured)
import benchlib as bl  # noqa: E402  (bench/ is not a package; the benches share this module)

BUILD = bl.REPO / "builders" / "apiserver" / "build.sh"


def measure_build(cold: bool) -> dict[str, float | bool]:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="gocache-") as cache:
        if cold:
            env["GOCACHE"] = cache
        start = time.perf_counter()
        subprocess.run([str(BUILD)], check=True, env=env, capture_output=True, timeout=3600)
        wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"cold_gocache": cold, "wall_s": round(wall, 1), "peak_rss_mib": round(peak)}


def measure_start(runs: int) -> dict[str, float | int]:
    totals, certs, ready = [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            fixture.generate_certificates(d)
            cert_s = time.perf_counter() - start
            (d / "tokens.csv").write_text('bench-token,admin,admin,"system:masters"\n')
            server = fixture.ApiServer(d, fixture.free_port(), fixture.free_port(), fixture.free_port(), "bench-token")
            try:
                server.start_etcd()
                server.start_apiserver()
                ready_s = server.wait_ready()
            finally:
                server.stop()
        totals.append(cert_s + ready_s)
        certs.append(cert_s)
        ready.append(ready_s)
    return {
        "runs": runs,
        "start_to_ready_s_median": round(statistics.median(totals), 2),
        "start_to_ready_s_max": round(max(totals), 2),
        "certificates_s_median": round(statistics.median(certs), 2),
        "processes_to_ready_s_median": round(statistics.median(ready), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="build with an empty GOCACHE (minutes, ~2 GB)")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    reason = fixture.missing_prerequisite() if args.skip_build else None
    if reason:
        raise SystemExit(reason)
    result: dict[str, object] = {"machine": bl.machine(), "source": bl.source(), "load_before": bl.loadavg()}
    if not args.skip_build:
        bl.log("building kube-apiserver" + (" with an empty GOCACHE" if args.cold else ""))
        result["build"] = measure_build(args.cold)
    bl.log(f"start-to-ready x{args.runs}")
    result["start"] = measure_start(args.runs)
    result["load_after"] = bl.loadavg()
    print(bl.dump(result))
    if args.record:
        bl.record(HERE, result)


if __name__ == "__main__":
    main()
