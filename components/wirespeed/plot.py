"""`wirespeed size ... --plot`: SNAT port demand and capacity against node count (azure-lb), and with
`--from-prometheus --by-workload` the top workloads' ports over the measured window (every command)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wirespeed.measure.snat import iso
from wirespeed.measure.workloads import Attribution
from wirespeed.sizing.azure_lb import (
    DYNAMIC_DEFAULT_TABLE,
    PORTS_PER_IP,
    LoadBalancerPlan,
    dynamic_default_ports,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from wirespeed.measure.probe import Proof

# The id of the shading that marks a plan which does not fit (tests find the marker by it).
DOES_NOT_FIT_GID = "wirespeed-does-not-fit"


def plot_load_balancer(plan: LoadBalancerPlan, path: Path, workloads: Attribution | None = None) -> None:
    """Write a PNG: explicit-port demand, IP capacity, and what the dynamic default would give in total; with
    ``workloads``, a third panel of the top workloads over the measured window."""
    import matplotlib.pyplot as plt

    fig = draw_load_balancer(plan, workloads)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_load_balancer(plan: LoadBalancerPlan, workloads: Attribution | None = None) -> Figure:
    """The figure :func:`plot_load_balancer` writes (the caller closes it)."""
    import matplotlib

    matplotlib.use("Agg")  # no display on CI runners or build agents
    import matplotlib.pyplot as plt

    top = min(DYNAMIC_DEFAULT_TABLE[-1][0], max(60, int(plan.max_nodes_supported * 1.2), plan.nodes_at_max + 10))
    nodes = list(range(1, top + 1))

    if workloads is None:
        fig, (total_ax, node_ax) = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    else:
        fig = plt.figure(figsize=(12, 10.5))
        grid = fig.add_gridspec(3, 1)
        total_ax = fig.add_subplot(grid[0])
        node_ax = fig.add_subplot(grid[1], sharex=total_ax)
        draw_workloads(fig.add_subplot(grid[2]), workloads)
    _draw_totals(total_ax, plan, nodes, top)
    _draw_per_node(node_ax, plan, nodes, top)
    fig.tight_layout()
    return fig


def plot_workloads(attributions: Sequence[Attribution], path: Path) -> None:
    """Write a PNG of the top workloads over the window, one panel per peak (an AZ each for AWS)."""
    import matplotlib.pyplot as plt

    fig = draw_workload_panels(attributions)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_workload_panels(attributions: Sequence[Attribution]) -> Figure:
    """The figure :func:`plot_workloads` writes (the caller closes it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    count = max(1, len(attributions))
    fig, axes = plt.subplots(count, 1, figsize=(12, 3.5 * count + 0.5), squeeze=False)
    for ax, attribution in zip(axes[:, 0], attributions, strict=False):
        draw_workloads(ax, attribution)
    fig.tight_layout()
    return fig


def draw_workloads(ax: Axes, attribution: Attribution) -> None:
    """Each top workload's ports over the window (each point the highest of its slice, drawn over the slice it
    closes), the allocation the peak is sized against, and the peak's moment; time runs to the window's end."""
    from matplotlib.ticker import StrMethodFormatter

    peak = attribution.found.peak
    stamps = [t for line in attribution.timelines for t, _ in line.points] or [peak.time]
    end, start = max(*stamps, peak.time), min(stamps)
    span = end - start
    unit, size = ("hours", 3_600.0) if span >= 2 * 3_600 else ("minutes", 60.0) if span >= 120 else ("seconds", 1.0)
    for line in attribution.timelines:
        ax.step([(t - end) / size for t, _ in line.points], [v for _, v in line.points], where="pre",
                label=f"{line.row.name} to {line.row.destination}")  # fmt: skip
    if attribution.allocation:
        ax.axhline(attribution.allocation, color="tab:red", linestyle="--",
                   label=f"allocation {attribution.allocation:,}: {attribution.allocation_of}")  # fmt: skip
    ax.axvline((peak.time - end) / size, color="grey", linestyle=":",
               label=f"peak {peak.value:,} at {iso(peak.time)}")  # fmt: skip
    if not attribution.timelines:
        ax.text(0.5, 0.5, "no by-workload series over the window", transform=ax.transAxes, ha="center", va="center")
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.set_ylabel("SNAT ports")
    ax.set_xlabel(f"{unit} before {iso(end)}")
    ax.set_title(f"Top workloads {attribution.where}", fontsize="medium")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")


def _draw_totals(total_ax: Axes, plan: LoadBalancerPlan, nodes: list[int], top: int) -> None:
    """The capacity rule: ports required by node count against the IPs' ports, the peak and AKS's ceiling."""
    from matplotlib.ticker import StrMethodFormatter

    demand = [plan.allocated_outbound_ports * n for n in nodes]
    capacity = plan.outbound_ips * PORTS_PER_IP
    total_ax.plot(nodes, demand, label=f"required: {plan.allocated_outbound_ports:,} ports x nodes")
    total_ax.axhline(
        capacity, color="tab:green", linestyle="--", label=f"available: {plan.outbound_ips} IP(s) x {PORTS_PER_IP:,}"
    )
    total_ax.axvline(
        plan.nodes_at_max,
        color="tab:red",
        linestyle=":",
        label=f"peak nodes (maxCount + surge) = {plan.nodes_at_max:,}",
    )
    if plan.max_nodes_supported < top:
        total_ax.axvline(
            plan.max_nodes_supported,
            color="tab:green",
            alpha=0.5,
            label=f"AKS rejects the profile above {plan.max_nodes_supported:,} nodes",
        )
    total_ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    total_ax.set_ylabel("SNAT ports (all nodes)")
    if plan.feasible:
        total_ax.set_title("AKS outbound SNAT: capacity rule")
    else:
        # A plan AKS would reject must not look like one that fits: the nodes past the last one the IPs carry are
        # shaded, and the title says so with the numbers (the same ones the command's error line gives).
        total_ax.axvspan(
            plan.max_nodes_supported + 0.5, top, color="tab:red", alpha=0.15, gid=DOES_NOT_FIT_GID, label="does not fit"
        )
        total_ax.set_title(
            f"DOES NOT FIT: {plan.ports_required:,} ports required, {plan.ports_available:,} available",
            color="tab:red",
            fontweight="bold",
        )
    # Legends beside the axes, not in them: inside, one always covered a line (the explicit ports or the capacity)
    # for some plan, since where the lines run depends on the numbers.
    total_ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")


def _draw_per_node(node_ax: Axes, plan: LoadBalancerPlan, nodes: list[int], top: int) -> None:
    """Ports per node: the explicit value against Azure's dynamic default, which halves as the pool grows."""
    from matplotlib.ticker import StrMethodFormatter

    per_node_default = [dynamic_default_ports(n) for n in nodes]
    node_ax.step(
        nodes,
        per_node_default,
        where="post",
        color="tab:orange",
        label="allocatedOutboundPorts = 0 (Azure dynamic default)",
    )
    node_ax.axhline(
        plan.allocated_outbound_ports, color="tab:blue", label=f"explicit: {plan.allocated_outbound_ports:,} per node"
    )
    for upper, _ in DYNAMIC_DEFAULT_TABLE[:-1]:
        if upper < top:
            node_ax.axvline(upper + 1, color="tab:orange", alpha=0.3, linestyle=":")
            node_ax.annotate(
                f"halves at {upper + 1}",
                (upper + 1, dynamic_default_ports(upper + 1)),
                # Right of the drop and above the new level, so the label does not sit on the step it names.
                xytext=(3, 4),
                textcoords="offset points",
                fontsize="x-small",
                rotation=90,
                va="bottom",
            )
    node_ax.set_yscale("log", base=2)
    node_ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    node_ax.set_xlabel("nodes in the backend pool")
    node_ax.set_ylabel("ports per node")
    node_ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")


def plot_proof(proof: Proof, path: Path) -> None:
    """Write a PNG: per group of `wirespeed prove`, its percentiles before and after (log scale), with the 200 ms
    minimum RTO marked (a tail above it waited out a retransmission timeout)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from wirespeed.measure.probe import QUANTILE_NAMES

    groups = proof.groups or []
    fig, axes = plt.subplots(1, max(len(groups), 1), figsize=(4.5 * max(len(groups), 1), 4), squeeze=False)
    for ax, group in zip(axes[0], groups, strict=False):
        names = list(QUANTILE_NAMES)
        for offset, (label, arm) in enumerate((("before", group.before), ("after", group.after))):
            found = {p.name: p.seconds for p in arm.percentiles()}
            xs = [i + (offset - 0.5) * 0.4 for i in range(len(names))]
            ax.bar(xs, [found.get(n, 0.0) for n in names], width=0.4, label=label)
        ax.set_yscale("log")
        ax.axhline(0.2, color="grey", linestyle="--", linewidth=1, label="200 ms minimum RTO")
        ax.set_xticks(range(len(names)), [QUANTILE_NAMES[n] for n in names])
        ax.set_ylabel("round trip (s)")
        ax.set_title(f"{proof.by} {group.name}" if group.name else f"no {proof.by} label")
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
