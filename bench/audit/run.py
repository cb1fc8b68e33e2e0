"""Benchmark: `wirespeed audit aws` as a whole process against moto's server holding a large account.

Account (created through the AWS API, as in tests/moto_aws.py): NAT_GATEWAYS public NAT gateways, a tenth of them
with ErrorPortAllocation datapoints; INSTANCES Karpenter-launched instances; NODE_GROUPS managed node groups over
two clusters with launch templates. Method: moto's ThreadedMotoServer on 127.0.0.1 in this process; the audit runs
as a fresh `wirespeed` process (--endpoint-url, --json) N times after one warm-up; wall time by
time.perf_counter around spawn-to-exit, peak RSS from wait4(); API calls as the audit itself counts them. moto's
server time is inside the wall time (it answers in this process, on the same 2 vCPUs), so the figure is an upper
bound for the audit's own cost. Prints and (with --record) writes results/<date>-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(REPO / "tests"))
import benchlib as bl  # noqa: E402  (bench/ is not a package)
from moto_aws import TUNED_USER_DATA, UNTUNED_USER_DATA, Account, start_moto  # noqa: E402

WIRESPEED = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or "wirespeed"
NAT_GATEWAYS = 200
INSTANCES = 2_000
NODE_GROUPS = 20


def seed(account: Account) -> None:
    for index in range(NAT_GATEWAYS):
        gateway = account.nat_gateway()
        if index % 10 == 0:
            account.metric(gateway, "ErrorPortAllocation", 5 + index, hours_ago=3)
    for batch in range(INSTANCES // 100):
        account.karpenter_instances("c6in.8xlarge" if batch % 4 else "c5.large", 100, pool=f"pool-{batch % 3}")
    for index in range(NODE_GROUPS):
        tuned = index % 2 == 0
        account.node_group(
            f"cluster-{index % 2}",
            f"ng-{index}",
            ["c6in.8xlarge"] if tuned else ["m7i.large"],
            TUNED_USER_DATA if tuned else UNTUNED_USER_DATA,
        )


def measure(argv: list[str], env: dict[str, str], runs: int) -> tuple[dict[str, float], dict]:
    walls = []
    report: dict = {}
    for i in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        out, err = proc.communicate(timeout=600)
        wall = time.perf_counter() - start
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{argv} exited {proc.returncode}: {err.decode()}")
        report = json.loads(out)
        if i >= 1:
            walls.append(wall * 1000)
    walls.sort()
    return {
        "runs": runs,
        "wall_ms_median": round(statistics.median(walls), 1),
        "wall_ms_min": round(walls[0], 1),
        "wall_ms_max": round(walls[-1], 1),
    }, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--record", action="store_true", help="write results/<date>-<time>.json")
    args = parser.parse_args()

    server, moto = start_moto()
    try:
        bl.log(f"seeding {NAT_GATEWAYS} NAT gateways, {INSTANCES} instances, {NODE_GROUPS} node groups")
        started = time.perf_counter()
        seed(Account(moto))
        seed_s = time.perf_counter() - started
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | moto.env()
        argv = [WIRESPEED, "audit", "aws", "--endpoint-url", moto.url, "--region", "eu-west-1", "--json"]
        load_before = bl.loadavg()
        timing, report = measure(argv, env, args.runs)
    finally:
        server.stop()
    result = {
        "bench": "audit-aws",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "account": {
            "nat_gateways": len(report["nat_gateways"]),
            "karpenter_instances": len(report["karpenter_instances"]),
            "node_groups": len(report["node_groups"]),
            "seed_seconds": round(seed_s, 1),
        },
        "timing": timing,
        "api_calls": report["api_calls"],
        "api_calls_total": sum(report["api_calls"].values()),
        "findings": len(report["findings"]),
        "load_before": load_before,
        "load_after": bl.loadavg(),
        "machine": {k: v for k, v in bl.machine().items() if k != "go"},
        "commit": bl.source()["commit"],
    }
    print(json.dumps(result, indent=2))
    if args.record:
        bl.record(HERE, result)


if __name__ == "__main__":
    main()
