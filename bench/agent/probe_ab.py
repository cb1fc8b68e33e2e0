#!/usr/bin/env python3
"""A/B of agent builds for the continuous probe's CPU (bench/agent/RESULTS.md, "Probe CPU: wake-ups"): the
``probe`` arm of probe_bench.py (the node probing 8 serve-only peers x 4 streams, every probe flag at its default),
run with each build in turn, round after round, in one set of namespaces, so a shared machine's load falls on
every build alike. Per arm: CPU ticks and context switches per second over the window (probe_bench.run_arm).

Usage (root): probe_ab.py AGENT[,AGENT...] --rounds N --warmup S --seconds S --json OUT
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import probe_bench as pb

import benchlib as bl


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("agents", help="comma-separated agent binaries")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    bl.require_root()
    bl.exit_on_sigterm()
    agents = [Path(p).resolve() for p in a.agents.split(",")]
    params = vars(a) | {"json": None, "agents": [bl.recorded_path(p) for p in agents]}
    result: dict[str, Any] = {
        "bench": "agent-probe-ab",
        "machine": bl.machine(),
        "source": bl.source(),
        "params": params,
    }
    result["loadavg_before"], result["cpu_busy_pct_before"] = bl.loadavg(), bl.cpu_busy_pct()
    arms = []
    with bl.scratch_dir("wsbench-probe-ab-") as tmp, bl.netns(pb.NODE, *pb.PEER_NS):
        pb.wire()
        peers = pb.start_peers(agents[0], tmp, fleet=False)
        try:
            for r in range(a.rounds):
                for agent in agents:
                    arm = pb.run_arm(agent, tmp, "probe", a.warmup, a.seconds)
                    arms.append(arm | {"agent": bl.recorded_path(agent), "round": r + 1, "loadavg": bl.loadavg()})
        finally:
            for p in peers:
                bl.terminate(p, timeout=30)
    result["arms"] = arms
    result["loadavg_after"], result["cpu_busy_pct_after"] = bl.loadavg(), bl.cpu_busy_pct()
    return bl.finish(result, a.json)


if __name__ == "__main__":
    sys.exit(main())
