"""Pure validation and derivation behind the AKS components: no Pulumi import.

The whole cluster: pools (:mod:`wirespeed.azure.pools`), outbound and alert (:mod:`wirespeed.azure.outbound`),
checked together. Every function takes plain values (the args dataclasses of :mod:`wirespeed.azure.spec`), checks every
field, and either returns a plan (what the components register) or raises one :class:`InvalidArgsError` listing
every problem as (property path, reason naming the value and the allowed range). The components turn that into
a single ``pulumi.InputPropertiesError`` before any resource registers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from wirespeed.azure.nap import NapPlan, check_nap
from wirespeed.azure.outbound import (
    IDLE_TIMEOUT_RANGE,
    OutboundPlan,
    SnatAlertPlan,
    check_alert,
    check_outbound,
    plan_outbound,
)
from wirespeed.azure.pools import (
    REPLACE_ON_CHANGE,
    PoolPlan,
    accelerated_networking,
    check_pool,
    plan_pool,
    resolve_profile,
)
from wirespeed.azure.problems import Collector, InvalidArgsError, join
from wirespeed.azure.spec import ClusterSpec
from wirespeed.manifests.access import ADMISSION_POLICY_MIN_KUBERNETES, admission_policy_supported
from wirespeed.manifests.options import DEFAULT_IMAGE, NodeTuningOptions, check_options
from wirespeed.problems import Problem
from wirespeed.profile import Profile, with_outbound
from wirespeed.rules._accepted_args import accepted_advisories_problems

__all__ = [
    "IDLE_TIMEOUT_RANGE",
    "REPLACE_ON_CHANGE",
    "ClusterPlan",
    "InvalidArgsError",
    "NapPlan",
    "OutboundPlan",
    "PoolPlan",
    "Problem",
    "SnatAlertPlan",
    "accelerated_networking",
    "check_pool",
    "plan_cluster",
    "plan_outbound",
    "plan_pool",
    "resolve_profile",
]


@dataclass(frozen=True)
class ClusterPlan:
    system_pool: PoolPlan
    pools: tuple[PoolPlan, ...]
    outbound: OutboundPlan
    snat_alert: SnatAlertPlan | None
    profiles: tuple[Profile, ...]
    auto_provisioned: tuple[NapPlan, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "system_pool": self.system_pool.to_json(),
            "pools": [p.to_json() for p in self.pools],
            "auto_provisioned_pools": [p.to_json() for p in self.auto_provisioned],
            "outbound": self.outbound.to_json(),
            "snat_alert": None
            if self.snat_alert is None
            else {
                "threshold_percent": self.snat_alert.threshold_percent,
                "threshold_ports": self.snat_alert.threshold_ports,
            },
            "profiles": [p.name for p in self.profiles],
        }


def _unique_names(out: Collector, named: Iterable[tuple[str, str]]) -> None:
    seen: dict[str, str] = {}
    for path, name in named:
        if name in seen:
            out.add(path, f"{name!r} is not allowed: {seen[name]} already uses that pool name")
        else:
            seen[name] = path


def _distinct_profiles(out: Collector, pools: Sequence[tuple[str, PoolPlan | NapPlan | None]]) -> dict[str, Profile]:
    """One profile per name: the DaemonSet of a name applies one document to every node labelled with it."""
    profiles: dict[str, Profile] = {}
    for path, plan in pools:
        if plan is None:
            continue
        seen = profiles.setdefault(plan.profile.name, plan.profile)
        if seen != plan.profile:
            out.add(
                join(path, "profile"),
                f"{plan.profile.name!r} is not allowed: another pool uses a different profile of that name "
                "(the DaemonSet for a name applies one profile); rename one",
            )
    return profiles


def _check_admission_policy_version(out: Collector, spec: ClusterSpec) -> None:
    """The agent's admission policy is refused by an API server before 1.30: say so before anything registers."""
    version = spec.kubernetes_version
    if not spec.tuning_admission_policy or not isinstance(version, str):
        return
    if admission_policy_supported(version) is False:
        out.add(
            "kubernetes_version",
            f"{version!r} is not allowed with tuning_admission_policy: the agent's admission policy needs Kubernetes "
            f"{ADMISSION_POLICY_MIN_KUBERNETES} or later; upgrade, or set tuning_admission_policy=False (the agent's "
            "RBAC then lets it patch any Node)",
        )


def _auto_provisioned(out: Collector, spec: ClusterSpec) -> list[NapPlan]:
    """Each NAP pool checked, names unique; with any, every agent pool fixed-size: AKS cannot enable node
    auto-provisioning on a cluster running the cluster autoscaler (learn.microsoft.com/azure/aks/
    node-auto-provisioning, "Limitations and unsupported features"; the API's NodeProvisioningMode ``Auto``:
    "Fixed size Node Pools can still be created, but autoscaling Node Pools cannot be", 2025-09-01)."""
    plans: list[NapPlan] = []
    for i, nap in enumerate(spec.auto_provisioned_pools):
        plan, problems = check_nap(nap, f"auto_provisioned_pools[{i}]")
        out.problems.extend(problems)
        if plan is not None:
            plans.append(plan)
    named = [(f"auto_provisioned_pools[{i}].name", p.name) for i, p in enumerate(spec.auto_provisioned_pools)]
    _unique_names(out, named)
    if spec.auto_provisioned_pools:
        pools = [("system_pool", spec.system_pool)] + [(f"pools[{i}]", p) for i, p in enumerate(spec.pools)]
        for path, pool in pools:
            if pool.min_count != pool.max_count:
                out.add(
                    join(path, "min_count"),
                    f"{pool.min_count!r} is not allowed with auto_provisioned_pools: equal to max_count "
                    f"({pool.max_count!r}); AKS cannot enable node auto-provisioning on a cluster whose pools run "
                    "the cluster autoscaler, so keep agent pools fixed-size and let NAP scale",
                )
    return plans


def plan_cluster(spec: ClusterSpec) -> ClusterPlan:
    """Validate a whole cluster (system pool, user pools, NAP pools, outbound, alert); one InvalidArgsError with
    every problem. Outbound is sized over every agent pool at maxCount + surge and every NAP pool at its node
    ceiling + disruption budget."""
    out = Collector()
    out.problems.extend(accepted_advisories_problems(spec.accepted_advisories))
    system, problems = check_pool(spec.system_pool, "system_pool", system=True)
    out.problems.extend(problems)
    plans: list[PoolPlan] = []
    for i, pool in enumerate(spec.pools):
        plan, problems = check_pool(pool, f"pools[{i}]")
        out.problems.extend(problems)
        if plan is not None:
            plans.append(plan)
    _unique_names(
        out,
        [("system_pool.name", spec.system_pool.name)]
        + [(f"pools[{i}].name", p.name) for i, p in enumerate(spec.pools)],
    )
    naps = _auto_provisioned(out, spec)
    all_valid = not out.problems and system is not None
    sizing = (
        [p.sizing_pool for p in ([system] if system else []) + plans] + [n.sizing_pool for n in naps]
        if all_valid
        else None
    )
    outbound = check_outbound(out, spec.outbound, sizing)
    alert = check_alert(out, spec.snat_alert, outbound, spec.outbound.type)
    if not isinstance(spec.location, str) or not spec.location.strip():
        out.add("location", f"{spec.location!r} is not allowed: an Azure region name, e.g. 'westeurope'")
    profiles = _distinct_profiles(
        out,
        [("system_pool", system)]
        + [(f"pools[{i}]", p) for i, p in enumerate(plans)]
        + [(f"auto_provisioned_pools[{i}]", n) for i, n in enumerate(naps)],
    )
    if spec.tuning:
        # NodeTuning checks these itself, but only after the cluster has registered: check them first, as NodeTuning
        # will get them (only an absent image takes the default; an empty one is the caller's, and refused).
        image = DEFAULT_IMAGE if spec.tuning_image is None else spec.tuning_image
        options = NodeTuningOptions(image=image, namespace=spec.tuning_namespace)
        for problem in check_options(options):
            out.add(f"tuning_{problem.field}", f"{problem.value!r} is not allowed: {problem.allowed}")
        _check_admission_policy_version(out, spec)
    if out.problems or system is None or outbound is None:
        raise InvalidArgsError("NetworkOptimizedCluster", out.problems)
    # Every node of the cluster egresses the same way, so every profile the DaemonSets apply carries the outbound
    # sizing: the agent's SNATPortPressure condition compares each destination's ports with it.
    tuned = tuple(with_outbound(p, outbound.profile_outbound(p.outbound)) for p in profiles.values())
    return ClusterPlan(
        system_pool=system,
        pools=tuple(plans),
        outbound=outbound,
        snat_alert=alert,
        profiles=tuned,
        auto_provisioned=tuple(naps),
    )
