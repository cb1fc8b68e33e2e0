"""The top of `wirespeed plan`: what a reviewer decides on (resources, pools, outbound fit, the policy verdicts with
their levels) before the detail that supports it. Pure (no Pulumi import)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from wirespeed.program.model import STACK_TYPE, ProgramPlan
from wirespeed.program.sections import OutboundReview, PoolReview
from wirespeed.program.summaries import summarise
from wirespeed.program.text import fmt
from wirespeed.rules import Violation


class PlanReview(Protocol):
    """What the summary reads of ``wirespeed.program.review.PlanReview`` (a Protocol: review imports this module)."""

    @property
    def plan(self) -> ProgramPlan: ...
    @property
    def pools(self) -> tuple[PoolReview, ...]: ...
    @property
    def outbound(self) -> tuple[OutboundReview, ...]: ...
    def hidden_details(self) -> list[str]: ...


POLICY_HEADING = "Policy (wirespeed's rules, as the policy pack runs them)"
# The pools a program can register beside AKS's agent pools (which PlanReview.pools reviews in full): EKS managed
# node groups and Karpenter NodePools (AKS node auto-provisioning's included), each summarised by
# wirespeed.program.summaries.
NODE_POOL_TYPES = ("aws:eks/nodeGroup:NodeGroup", "kubernetes:karpenter.sh/v1:NodePool")
NAT_GATEWAY_TYPE = "aws:ec2/natGateway:NatGateway"
# The rules that judge AWS NAT egress: an AWS gateway's fit is theirs to say (the plan has no demand to check).
AWS_NAT_RULES = "aws-natgw-*"


def ordered(found: Sequence[Violation]) -> list[Violation]:
    """Mandatory first, then by rule and resource: the order both the summary and the full list use."""
    return sorted(found, key=lambda v: (v.enforcement != "mandatory", v.rule_id, v.resource_urn))


def _resources(review: PlanReview) -> str:
    resources = [r for r in review.plan.resources if r.type != STACK_TYPE]
    components = [r.name for r in resources if not r.custom]
    under = f", under {len(components)} component(s): {', '.join(components)}" if components else ""
    return f"Resources: {len(resources)}{under} (the tree follows)."


def _pools(review: PlanReview) -> list[str]:
    lines = [f"- {p.name} (cluster {p.cluster}): {p.to_json()['vm_size']}; {p.nodes()}" for p in review.pools]
    for r in review.plan.resources:
        if r.type in NODE_POOL_TYPES:
            said = summarise(r, review.plan)
            lines.append(f"- {r.name} ({r.type.rsplit(':', 1)[-1]})" + (f": {said}" if said else ""))
    return ["Pools: none registered."] if not lines else ["Pools:", *lines]


def _fit(outbound: OutboundReview) -> str:
    plan = outbound.lb_plan
    if plan is None:
        ips = f", {fmt(outbound.ip_count)} IP(s)" if outbound.ip_count is not None else ""
        return f"- cluster {outbound.cluster}: outboundType {outbound.outbound_type}{ips}"
    head = (
        f"- cluster {outbound.cluster}: {plan.allocated_outbound_ports:,} ports x {plan.nodes_at_max:,} nodes = "
        f"{plan.ports_required:,} of {plan.ports_available:,} on {plan.outbound_ips} IP(s)"
    )
    fix = plan.fix()
    if fix is None:
        return f"{head}: fits, room for {plan.max_nodes_supported:,} nodes"
    return f"{head}: does NOT fit; to fit, {fix.aks_text()}"


def _outbound(review: PlanReview) -> list[str]:
    lines = [_fit(o) for o in review.outbound]
    gateways = [r for r in review.plan.resources if r.type == NAT_GATEWAY_TYPE]
    lines.extend(f"- NAT gateway {g.name}: {summarise(g, review.plan)}" for g in gateways)
    if gateways:
        lines.append(f"  (whether they carry the peak is the {AWS_NAT_RULES} rules' verdict below)")
    return ["Outbound: nothing registered egresses through a sized gateway."] if not lines else ["Outbound:", *lines]


def _accepted_line(accepted: Sequence[Violation]) -> str:
    return f"{len(accepted)} advisory finding(s) accepted with a written reason" if accepted else ""


def _verdicts(all_found: Sequence[Violation]) -> list[str]:
    found = [v for v in all_found if not v.accepted]
    accepted = [v for v in all_found if v.accepted]
    kept = [f"- accepted {v.rule_id} on {v.resource_name}: {v.accepted}" for v in ordered(accepted)]
    if not found:
        said = f"; {_accepted_line(accepted)}:" if accepted else "."
        return [f"{POLICY_HEADING}: no violations{said}", *kept]
    levels = Counter(v.enforcement for v in found)
    # Mandatory and advisory always (the two a reviewer weighs), any other level only when it occurs.
    shown = ["mandatory", "advisory", *sorted(set(levels) - {"mandatory", "advisory"})]
    counted = ", ".join(f"{levels[level]} {level}" for level in shown)
    lines = [f"{POLICY_HEADING}: {len(found)} violation(s), {counted} (each in full under ## Policy):"]
    # One line per rule and resource: a rule that breaks on several fields of one resource is counted, not repeated.
    named = Counter(f"{v.enforcement} {v.rule_id} on {v.resource_name}" for v in ordered(found))
    lines.extend(f"- {said}" + (f" ({n} findings)" if n > 1 else "") for said, n in named.items())
    if accepted:
        lines.extend([f"{_accepted_line(accepted)}:", *kept])
    return lines


def summary_section(review: PlanReview, found: Sequence[Violation] | None, details: bool) -> str:
    """## Summary: one screen a reviewer reads first; ``found`` None when the policy was not evaluated."""
    lines = [_resources(review), *_pools(review), *_outbound(review)]
    if found is not None:
        lines.extend(_verdicts(found))
    if not details and review.hidden_details():
        lines.append(
            f"Not shown: {', '.join(review.hidden_details())}; `wirespeed plan --details` prints them, and "
            "`--json` always carries them."
        )
    return "## Summary\n" + "\n".join(lines)


def policy_section(found: Sequence[Violation]) -> str:
    """## Policy: every verdict with its message, mandatory first (the summary lists them by name)."""
    violations = [v for v in found if not v.accepted]
    accepted = [v for v in found if v.accepted]
    lines = [
        f"{POLICY_HEADING}: {len(violations)} violation(s):" if violations else f"{POLICY_HEADING}: no violations."
    ]
    lines.extend(
        f"  {v.enforcement} {v.rule_id} on {v.resource_name} ({v.resource_type}): {v.message}"
        for v in ordered(violations)
    )
    if accepted:
        lines.append(f"{_accepted_line(accepted)} (each reason is written on its resource):")
        lines.extend(
            f"  accepted {v.rule_id} on {v.resource_name} ({v.resource_type}): {v.accepted}. The finding: {v.message}"
            for v in ordered(accepted)
        )
    return "## Policy\n" + "\n".join(lines)
