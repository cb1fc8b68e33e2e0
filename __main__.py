"""Root Pulumi program: plan a network-tuned node pool from stack config.

Today it sizes the workload named by ``wirespeed:workload`` (SNAT ports and IPs or NAT gateway IPs, rings,
backlog) and exports the plan, so `pulumi preview` shows what a cluster would get; the cluster components
(AKS/EKS node pools, the tuning DaemonSet) build on these outputs.
"""

from __future__ import annotations

from pathlib import Path

import pulumi

from wirespeed.workload import load_workload, plan

config = pulumi.Config("wirespeed")
workload_path = config.get("workload") or ""
result = plan(load_workload(Path(workload_path) if workload_path else None))
outputs = result.to_json()
for key in ("instance_type", "outbound", "rings", "backlog", "profile"):
    pulumi.export(key, outputs[key])
