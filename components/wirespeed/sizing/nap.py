"""How many nodes an AKS node auto-provisioning (Karpenter) NodePool can hold at peak, for outbound SNAT sizing.

A NodePool has no maxCount. Its ``spec.limits.cpu`` caps the vCPUs of the nodes it runs: Karpenter's scheduler
drops every instance type whose capacity exceeds what is left of the limit (kubernetes-sigs/karpenter v1.14.0,
pkg/controllers/provisioning/scheduling/scheduler.go, ``filterByRemainingResources``), and a node's CPU capacity
is its size's vCPUs. So the most nodes it can run is ``floor(limits.cpu / vCPUs of the smallest size its
requirements admit)``: all of them the smallest size.

While Karpenter replaces nodes (drift, consolidation) the new node launches before the old one is gone: the
disruption simulation leaves the nodes being replaced out of the limit it checks (pkg/controllers/disruption/
helpers.go, ``SimulateScheduling``), so for a while the pool holds more. How many nodes may be disrupted at once is
the NodePool's ``spec.disruption.budgets[].nodes``: a node count or a percent of the pool, rounded up
(pkg/apis/v1/nodepool.go, ``GetScaledValueFromIntOrPercent(..., roundUp=true)``), default ``10%`` (the NodePool
CRD's default). wirespeed counts those replacements as the pool's surge, as AKS counts maxSurge for an agent pool:
peak = ceiling + budget of the ceiling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from wirespeed.sizing import azure_lb
from wirespeed.sizing.errors import SizingError

# The NodePool CRD's default budget and the pattern it holds budgets to (karpenter.sh_nodepools.yaml, v1).
DEFAULT_BUDGET = "10%"
BUDGET_PATTERN = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
# Kubernetes resource.Quantity decimal suffixes (k8s.io/apimachinery/pkg/api/resource/suffix.go) a CPU limit
# may carry; binary suffixes (Ki, Mi...) make no sense for CPUs and are refused.
_CPU_SUFFIXES = {"m": Fraction(1, 1000), "": Fraction(1), "k": Fraction(1000), "M": Fraction(10**6)}
_QUANTITY = re.compile(r"^(?P<number>[0-9]+(?:\.[0-9]+)?)(?P<suffix>m|k|M)?$")


def cpu_quantity(value: object) -> Fraction | None:
    """A ``limits.cpu`` value in vCPUs (``"640"``, ``640``, ``"640000m"``, ``"1.5k"``), or None when it is not
    a CPU quantity wirespeed reads (negative, binary suffix, not a number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            number = Fraction(Decimal(str(value)))
        except (InvalidOperation, ValueError, OverflowError):  # NaN: ValueError; infinity: OverflowError
            return None
        return number if number >= 0 else None
    if not isinstance(value, str):
        return None
    found = _QUANTITY.match(value.strip())
    if found is None:
        return None
    return Fraction(Decimal(found["number"])) * _CPU_SUFFIXES[found["suffix"] or ""]


def check_budget(value: object) -> str | None:
    """Why ``value`` is not a disruption budget the NodePool CRD accepts (None when it is)."""
    if not isinstance(value, str) or not BUDGET_PATTERN.match(value):
        return f"{value!r} is not allowed: a node count ('2') or a percent from 0% to 100% ('10%'), as NodePools take"
    return None


def budget_nodes(budget: str, nodes: int) -> int:
    """How many of ``nodes`` a budget lets Karpenter disrupt at once: a percent rounded up, or the count (at most
    the nodes there are)."""
    if budget.endswith("%"):
        return -(-nodes * int(budget[:-1]) // 100)
    return min(int(budget), nodes)


@dataclass(frozen=True)
class NapCapacity:
    """One NodePool's node ceiling and replacement surge, and how they were derived."""

    name: str
    cpu_limit: Fraction
    smallest_vcpu: int
    smallest_sizes: tuple[str, ...]
    budget: str = DEFAULT_BUDGET

    @property
    def cpu_limit_text(self) -> str:
        """``limits.cpu`` in vCPUs as written back: ``640``, ``1.5``."""
        return _cpu_text(self.cpu_limit)

    @property
    def max_nodes(self) -> int:
        return int(self.cpu_limit // self.smallest_vcpu)

    @property
    def surge_nodes(self) -> int:
        return budget_nodes(self.budget, self.max_nodes)

    @property
    def nodes_at_max(self) -> int:
        return self.max_nodes + self.surge_nodes

    def sizing_pool(self) -> azure_lb.Pool:
        """The pool as the SNAT capacity rule counts it; SizingError when the ceiling is 0 or above the 1,000
        nodes wirespeed sizes per pool (azure_lb.MAX_POOL_NODES)."""
        if self.max_nodes < 1:
            raise SizingError(
                f"NodePool {self.name!r}.limits.cpu",
                _cpu_text(self.cpu_limit),
                f"at least {self.smallest_vcpu} (the smallest admitted size, {self.smallest_sizes[0]}): below it "
                "the pool can launch no node",
            )
        if self.max_nodes > azure_lb.MAX_POOL_NODES:
            raise SizingError(
                f"NodePool {self.name!r}.limits.cpu",
                _cpu_text(self.cpu_limit),
                f"at most {self.smallest_vcpu * azure_lb.MAX_POOL_NODES:,} ({azure_lb.MAX_POOL_NODES:,} nodes of "
                f"the smallest admitted size, {self.smallest_vcpu} vCPU): {self.max_nodes:,} nodes is more than "
                "wirespeed sizes per pool; lower limits.cpu or admit only larger sizes",
            )
        return azure_lb.Pool(self.max_nodes, self.surge_nodes, surge_is_percent=False, name=self.name)

    def explain(self) -> str:
        sizes = ", ".join(self.smallest_sizes[:3]) + (" ..." if len(self.smallest_sizes) > 3 else "")
        return (
            f"NodePool {self.name}: limits.cpu {_cpu_text(self.cpu_limit)} / {self.smallest_vcpu} vCPU (the smallest "
            f"size its requirements admit: {sizes}) = {self.max_nodes:,} node(s) at most, + disruption budget "
            f"{self.budget} = {self.surge_nodes:,} replacement node(s) launched before the nodes they replace are "
            f"gone: {self.nodes_at_max:,} node(s) at peak."
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cpu_limit": _cpu_text(self.cpu_limit),
            "smallest_vcpu": self.smallest_vcpu,
            "smallest_sizes": list(self.smallest_sizes),
            "max_nodes": self.max_nodes,
            "disruption_budget": self.budget,
            "surge_nodes": self.surge_nodes,
            "nodes_at_max": self.nodes_at_max,
        }


def _cpu_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"
