"""Turn what a program registered into a plan a platform engineer can review in a pull request.

Pure (no Pulumi import). The sizing is recomputed here with :mod:`wirespeed.sizing` from the inputs that
actually registered (ports, IP counts, every pool's maxCount and surge), not read back from what components
say about themselves: a program that bypasses the components, or a component with a bug, is checked the same.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from wirespeed import catalog, tuning_paths
from wirespeed.manifests.node_tuning import PROFILE_KEY, PROFILE_LABEL
from wirespeed.names import CLUSTER_TYPE
from wirespeed.profile import Outbound
from wirespeed.program.aws_review import eks_operating_systems, karpenter_user_data, user_data_section
from wirespeed.program.create_only import AGENT_POOL_CREATE_ONLY
from wirespeed.program.model import STACK_TYPE, ProgramPlan, RegisteredResource
from wirespeed.program.nap_review import nap_reviews
from wirespeed.program.project import DEFAULT_STACK, SECRET_PLACEHOLDER
from wirespeed.program.sections import Change, NapReview, OutboundReview, PoolReview, Replacement, TuningReview
from wirespeed.program.summaries import lb_ips, namespaced, summarise
from wirespeed.program.text import fmt, wrap_prose
from wirespeed.rules import Violation
from wirespeed.sizing import azure_lb, nat_gateway
from wirespeed.sizing.errors import SizingError
from wirespeed.values import get, plain_numbers, whole

JSON_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class PlanReview:
    """The reviewable plan of one program run; ``to_json`` keys are documented in docs/cli-json.md."""

    plan: ProgramPlan
    pools: tuple[PoolReview, ...]
    outbound: tuple[OutboundReview, ...]
    tuning: tuple[TuningReview, ...]
    findings: tuple[str, ...] = field(default_factory=tuple)
    replacements: tuple[Replacement, ...] = ()
    """Set by :func:`wirespeed.program.compare.compare_with`: pools whose create-only inputs changed."""
    compared: bool = False
    changes: tuple[Change, ...] = ()
    """Set by :func:`wirespeed.program.compare.compare_with`: outbound, alert and address changes."""
    auto_provisioned: tuple[NapReview, ...] = ()
    """AKS node auto-provisioning NodePools with their node class and node ceiling."""

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        project = self.plan.project
        return {
            "schema_version": JSON_SCHEMA_VERSION,
            "mode": "program",
            "project": project.name,
            "stack": project.stack if project.stack_file else None,
            "config": {k: (SECRET_PLACEHOLDER if k in project.secret_keys else v) for k, v in project.config.items()},
            "resources": [
                {
                    "urn": r.urn,
                    "type": r.type,
                    "name": r.name,
                    "parent": r.parent,
                    "custom": r.custom,
                    "read": r.read,
                    "id": r.id,
                    "provider": r.provider,
                    "inputs": plain_numbers(r.inputs),
                    "outputs": plain_numbers(_computed(r)),
                }
                for r in self.plan.resources
            ],
            "stack_outputs": plain_numbers(self.plan.stack_outputs),
            "invokes": [i.token for i in self.plan.invokes],
            "pools": [p.to_json() for p in self.pools],
            "auto_provisioned_pools": [n.to_json() for n in self.auto_provisioned],
            "outbound": [o.to_json() for o in self.outbound],
            "tuning": [t.to_json() for t in self.tuning],
            "create_only_inputs": [
                {"input": c.input, "why": c.why, "source": c.source} for c in AGENT_POOL_CREATE_ONLY
            ],
            "compared": self.compared,
            "replacements": [r.to_json() for r in self.replacements],
            "changes": [c.to_json() for c in self.changes],
            "tuning_paths": [p.to_json() for p in tuning_paths.paths_for(self.tuning_platforms())],
            "findings": list(self.findings),
            "log": [{"severity": s, "message": m} for s, m in self.plan.log],
        }

    # ------------------------------------------------------------------ text
    def explain(
        self,
        location: str = ".",
        found: Sequence[Violation] | None = None,
        *,
        details: bool = False,
        width: int | None = None,
    ) -> str:
        """The plan as text: the summary first (with the policy verdicts ``found``, when evaluated), then the
        sections; user data and the tuning paths only with ``details``. ``location`` is the project directory as the
        user named it; ``width`` wraps prose lines (never a user data script), None leaves them whole."""
        from wirespeed.program.summary import policy_section, summary_section

        project = self.plan.project
        stack = f"stack {project.stack} ({project.stack_file.name})" if project.stack_file else "Pulumi.yaml defaults"
        resources = [r for r in self.plan.resources if r.type != STACK_TYPE]
        sections = [
            f"# Pulumi project {project.name} in {location}, {stack}: {len(resources)} resources, planned offline "
            "under Pulumi's mocks (no cloud account; IDs and addresses are invented)",
            summary_section(self, found, details),
            "## Resources\n" + "\n".join(self.tree()),
        ]
        if self.pools or self.auto_provisioned:
            lines = self._pool_lines() + [n.explain() for n in self.auto_provisioned]
            sections.append("## Node pools\n" + "\n".join(lines))
        if self.outbound:
            sections.append("## Outbound\n" + "\n\n".join(o.explain() for o in self.outbound))
        if self.tuning:
            sections.append("## Node tuning\n" + "\n".join(t.explain() for t in self.tuning))
        eks_user_data = user_data_section(self.plan) + karpenter_user_data(self.plan)
        if eks_user_data and details:
            sections.append("## EKS user data\n" + "\n".join(eks_user_data))
        if self.compared:
            changes = [c.explain() for c in self.changes] or ["- no outbound setting, alert or address changed"]
            sections.append("## Outbound, alert and address changes since the previous plan\n" + "\n".join(changes))
        platforms = self.tuning_platforms()
        if platforms and details:
            sections.append("## Tuning paths\n" + "\n".join(tuning_paths.plan_lines(platforms)))
        if self.pools or self.auto_provisioned:
            sections.append("## Changes that replace a pool\n" + "\n".join(self._replacement_lines()))
        if self.plan.stack_outputs:
            outputs = plain_numbers(self.plan.stack_outputs)
            sections.append("## Stack outputs\n" + "\n".join(f"{k}: {_short(v)}" for k, v in sorted(outputs.items())))
        notes = self._notes()
        if notes:
            sections.append("## Notes\n" + "\n".join(f"- {n}" for n in notes))
        if found is not None:
            sections.append(policy_section(found))
        text = "\n\n".join(sections)
        return text if width is None else wrap_prose(text, width)

    def hidden_details(self) -> list[str]:
        """What the text plan leaves to ``--details`` for this program (both always in ``--json``)."""
        hidden = []
        scripts = user_data_section(self.plan)
        if scripts:
            hidden.append(f"the launch templates' user data ({len(scripts):,} lines)")
        if karpenter_user_data(self.plan):
            hidden.append("the EC2NodeClasses' user data parts")
        if self.tuning_platforms():
            hidden.append("the tuning paths (which mechanism sets each setting, per platform)")
        return hidden

    def tuning_platforms(self) -> tuple[tuning_paths.Platform, ...]:
        """The platforms this program tunes nodes on, for the "Tuning paths" section (wirespeed.tuning_paths)."""
        found: list[tuning_paths.Platform] = []
        if self.pools:
            found.append("aks-node-pool")
        if self.auto_provisioned:
            found.append("aks-nap")
        systems = eks_operating_systems(self.plan)
        if "al2023" in systems:
            found.append("eks-al2023")
        if "bottlerocket" in systems:
            found.append("eks-bottlerocket")
        if self.tuning:
            found.append("agent-daemonset")
        return tuple(found)

    def tree(self) -> list[str]:
        by_parent: dict[str | None, list[RegisteredResource]] = {}
        for r in self.plan.resources:
            by_parent.setdefault(r.parent, []).append(r)
        roots = [r for r in self.plan.resources if r.parent is None or r.parent not in self.plan.by_urn()]
        lines: list[str] = []

        def walk(r: RegisteredResource, prefix: str, last: bool, depth: int) -> None:
            branch = "" if depth == 0 else ("└─ " if last else "├─ ")
            summary = summarise(r, self.plan)
            lines.append(f"{prefix}{branch}{r.type} {r.name}" + (f"  [{summary}]" if summary else ""))
            kids = by_parent.get(r.urn, [])
            child_prefix = prefix if depth == 0 else prefix + ("   " if last else "│  ")
            for i, kid in enumerate(kids):
                walk(kid, child_prefix, i == len(kids) - 1, depth + 1)

        for root in roots:
            walk(root, "", True, 0)
        return lines

    def _pool_lines(self) -> list[str]:
        lines = []
        for p in self.pools:
            data = p.to_json()
            nic = ""
            if p.instance is not None:
                optimised = "network-optimised" if p.instance.network_optimised else "NOT network-optimised"
                nic = f", {p.instance.max_bandwidth_mbps:,} Mb/s, NIC {p.instance.nic}, {optimised}"
            surge = f"surge {p.max_surge} = {fmt(data['surge_nodes'])} node(s)"
            zones = f", zones {','.join(data['zones'])}" if data["zones"] else ""
            sysctls = ", ".join(f"{k}={v}" for k, v in p.sysctls.items()) or "none"
            lines.append(
                f"- {p.name} (cluster {p.cluster}, {p.source}): {data['vm_size']}{nic}; {p.nodes()}, {surge}{zones}; "
                f"osSKU {data['os_sku'] or 'default'}; profile {p.profile or 'none'}; linuxOSConfig.sysctls {sysctls}"
            )
        return lines

    def _replacement_lines(self) -> list[str]:
        lines: list[str] = []
        if self.compared:
            lines.extend(r.explain() for r in self.replacements)
            if not self.replacements:
                lines.append("- compared with the previous plan: no create-only input changed, no pool is replaced")
        if self.pools:
            # Every create-only input, set or not: moving an unset one (maxPods) off AKS's default replaces too.
            inputs = [c.input for c in AGENT_POOL_CREATE_ONLY]
            lines.append(
                f"- {', '.join(p.name for p in self.pools)}: changing {', '.join(inputs[:-1])} or {inputs[-1]} "
                "replaces the pool (unset ones included: moving them off AKS's default is a change)"
            )
            lines.append("AKS takes these only when a pool is created (a change means new VMs and drained workloads):")
            lines.extend(f"  {c.input}: {c.why}. Source: {c.source}" for c in AGENT_POOL_CREATE_ONLY)
        lines.extend(
            f"- {n.name} (NodePool): changing its AKSNodeClass {n.node_class or '?'} (linuxOSConfig, imageFamily, "
            "maxPods) drifts its nodes: Karpenter replaces them, at most its disruption budget at a time"
            for n in self.auto_provisioned
        )
        return lines

    def _notes(self) -> list[str]:
        notes = list(self.findings)
        notes.extend(self.plan.project.notes)
        notes.extend(f"program {severity}: {message}" for severity, message in self.plan.log)
        if self.plan.unmocked_invokes:
            calls = ", ".join(sorted(set(self.plan.unmocked_invokes)))
            notes.append(f"invokes answered by echoing their arguments (no realistic fake): {calls}")
        if not self.plan.project.stack_file:
            notes.append(f"no --stack given: config from Pulumi.yaml defaults, stack name {DEFAULT_STACK!r}")
        return notes


def _computed(r: RegisteredResource) -> dict[str, Any]:
    """A custom resource's outputs the provider computed (inputs it echoed left out); a component's all."""
    if not r.custom:
        return r.outputs
    return {k: v for k, v in r.outputs.items() if r.inputs.get(k) != v}


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = " / ".join(line.strip() for line in text.splitlines())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _instance(vm_size: object) -> catalog.InstanceType | None:
    if not isinstance(vm_size, str):
        return None
    try:
        return catalog.lookup(vm_size)
    except LookupError:
        return None


def _clusters(plan: ProgramPlan) -> list[tuple[str, str, RegisteredResource | None, Mapping[str, Any]]]:
    """(name, resource group, registered resource or None for a looked-up one, its inputs or lookup result)."""
    found: list[tuple[str, str, RegisteredResource | None, Mapping[str, Any]]] = []
    for r in plan.of_type("containerservice", "ManagedCluster"):
        name = str(r.outputs.get("name") or r.inputs.get("resourceName") or r.name)
        found.append((name, str(r.inputs.get("resourceGroupName") or ""), r, r.inputs))
    for call in plan.invokes:
        if call.token.endswith(":getManagedCluster"):
            name = str(call.args.get("resourceName"))
            if all(name != c[0] for c in found):
                found.append((name, str(call.args.get("resourceGroupName") or ""), None, call.result))
    return found


def review(plan: ProgramPlan) -> PlanReview:
    """Everything the text and JSON plans show, recomputed from the registered inputs."""
    findings: list[str] = []
    clusters = _clusters(plan)
    pools: list[PoolReview] = []
    for name, _rg, resource, inputs in clusters:
        if resource is None:
            continue
        for index, profile in enumerate(inputs.get("agentPoolProfiles") or []):
            if isinstance(profile, Mapping):
                pools.append(
                    PoolReview(
                        str(profile.get("name")),
                        name,
                        resource.urn,
                        f"agentPoolProfiles[{index}]",
                        dict(profile),
                        _instance(profile.get("vmSize")),
                    )
                )
    for r in plan.of_type("containerservice", "AgentPool"):
        cluster = str(r.inputs.get("resourceName") or "?")
        pools.append(
            PoolReview(
                str(r.inputs.get("agentPoolName") or r.name),
                cluster,
                r.urn,
                "AgentPool",
                r.inputs,
                _instance(r.inputs.get("vmSize")),
            )
        )
    for p in pools:
        vm_size = p.inputs.get("vmSize")
        if p.instance is None and isinstance(vm_size, str):
            findings.append(f"pool {p.name}: vmSize {vm_size!r} is not in the wirespeed catalog (bandwidth unknown)")
        elif p.instance is not None and not p.instance.network_optimised:
            findings.append(f"pool {p.name}: {p.instance.name} is not network-optimised")

    naps = nap_reviews(plan, [(name, resource) for name, _rg, resource, _ in clusters if resource is not None])
    for n in naps:
        findings.extend(n.findings)
        slow = sorted({t.family for t in n.sizes if not t.network_optimised})
        if slow:
            findings.append(f"NodePool {n.name}: admits {', '.join(slow)}, not network-optimised")
    outbound = []
    for name, _rg, resource, inputs in clusters:
        cluster_pools = [p for p in pools if p.cluster == name]
        if resource is None:
            added = [p for p in cluster_pools if p.source == "AgentPool"]
            if added:
                nodes = 0
                for p in added:
                    with contextlib.suppress(SizingError):
                        nodes += p.sizing_pool().nodes_at_max
                findings.append(
                    f"cluster {name} is looked up, not managed here: this program adds {nodes:,} node(s) at peak "
                    "(maxCount + surge) to its outbound; check its allocatedOutboundPorts x all nodes <= "
                    f"{azure_lb.PORTS_PER_IP:,} x outbound IPs (`wirespeed size azure-lb`)"
                )
            continue
        cluster_naps = [n for n in naps if n.cluster == name]
        reviewed = _outbound(name, inputs, cluster_pools, plan, cluster_naps, resource.urn)
        outbound.append(_with_measurement(reviewed, resource, plan))

    tuning = _tuning(plan)
    profiles_run = {t.profile for t in tuning if t.daemon_set}
    labelled_pools: list[PoolReview | NapReview] = [*pools, *naps]
    for labelled in labelled_pools:
        if labelled.profile and tuning and labelled.profile not in profiles_run:
            findings.append(
                f"pool {labelled.name}: labelled {PROFILE_LABEL}={labelled.profile} but no DaemonSet runs that profile"
            )
    return PlanReview(plan, tuple(pools), tuple(outbound), tuple(tuning), tuple(findings), auto_provisioned=tuple(naps))


def _outbound(
    name: str,
    inputs: Mapping[str, Any],
    pools: Sequence[PoolReview],
    plan: ProgramPlan,
    naps: Sequence[NapReview] = (),
    r_urn: str = "",
) -> OutboundReview:
    """The cluster's outbound as registered, recomputed over its agent pools at maxCount + surge and its NAP
    NodePools at node ceiling + disruption budget."""
    network = inputs.get("networkProfile") if isinstance(inputs.get("networkProfile"), Mapping) else {}
    outbound_type = str(get(network, "outboundType") or "loadBalancer")
    findings: list[str] = []
    sizing_pools: list[azure_lb.Pool] = []
    counted_pools: list[PoolReview | NapReview] = [*pools, *naps]
    for p in counted_pools:
        try:
            sizing_pools.append(p.sizing_pool())
        except SizingError as exc:
            findings.append(f"pool {p.name}: {exc}")
    counted = tuple(n.capacity for n in naps if n.capacity is not None)
    if outbound_type == "loadBalancer":
        lb = get(network, "loadBalancerProfile") or {}
        ports = whole(lb.get("allocatedOutboundPorts"))
        count, source, addresses = lb_ips(lb, plan)
        idle = whole(lb.get("idleTimeoutInMinutes"))
        lb_plan = _load_balancer_plan(plan, r_urn, sizing_pools, ports, count, findings)
        return OutboundReview(
            name,
            outbound_type,
            ports,
            count,
            source,
            addresses,
            idle,
            tuple(sizing_pools),
            lb_plan,
            tuple(findings),
            auto_provisioned=counted,
        )
    if outbound_type == "managedNATGateway":
        nat = get(network, "natGatewayProfile") or {}
        given = whole(get(nat, "managedOutboundIPProfile", "count"))
        # An absent count is AKS's default, 1 (ManagedClusterManagedOutboundIPProfile.count in the AKS API, e.g.
        # learn.microsoft.com/dotnet/api/microsoft.azure.management.containerservice.models.
        # managedclustermanagedoutboundipprofile.count: "range of 1 to 16 (inclusive). The default value is 1."); an
        # explicit 0 stays 0, which AKS refuses.
        count = 1 if given is None else given
        nodes = sum(p.nodes_at_max for p in sizing_pools)
        findings.append(
            f"NAT gateway ports are shared on demand: {count} IP(s) x {nat_gateway.AZURE_PORTS_PER_IP:,} = "
            f"{count * nat_gateway.AZURE_PORTS_PER_IP:,} concurrent flows for {nodes:,} node(s) at peak "
            "(no per-node allocation to size)"
        )
        return OutboundReview(
            name,
            outbound_type,
            ip_count=count,
            ip_source="managedOutboundIPProfile.count",
            idle_timeout_minutes=whole(nat.get("idleTimeoutInMinutes")),
            pools=tuple(sizing_pools),
            findings=tuple(findings),
            auto_provisioned=counted,
        )
    findings.append(f"outbound type {outbound_type}: egress is outside the cluster; not sized here")
    return OutboundReview(
        name, outbound_type, pools=tuple(sizing_pools), findings=tuple(findings), auto_provisioned=counted
    )


def _with_measurement(review: OutboundReview, cluster: RegisteredResource, plan: ProgramPlan) -> OutboundReview:
    """The outbound review with the measured peak a wirespeed component sized it from (``_derivation`` rechecks a
    workload's): the capacity is still recomputed from what registered; only the reason for the number comes from the
    component, and only while the number it reports is the one that registered."""
    parent = plan.by_urn().get(cluster.parent or "")
    sized = parent.outputs.get("outbound") if parent is not None and parent.type == CLUSTER_TYPE else None
    if not isinstance(sized, Mapping):
        return review
    lb = sized.get("load_balancer")
    if review.lb_plan is not None and isinstance(lb, Mapping) and isinstance(lb.get("measured_peak"), Mapping):
        ports_from = lb.get("ports_from")
        if isinstance(ports_from, str) and whole(lb.get("allocated_outbound_ports")) == review.allocated_outbound_ports:
            return replace(review, lb_plan=replace(review.lb_plan, ports_from=ports_from))
    measured = sized.get("measured_from")
    if review.outbound_type == "managedNATGateway" and isinstance(measured, str):
        return replace(review, findings=(*review.findings, f"NAT gateway IPs sized from a measured peak: {measured}"))
    return review


def _load_balancer_plan(
    plan: ProgramPlan,
    r_urn: str,
    sizing_pools: Sequence[azure_lb.Pool],
    ports: int | None,
    count: int | None,
    findings: list[str],
) -> azure_lb.LoadBalancerPlan | None:
    """The load balancer recomputed at the registered ports and IPs, with the ports' derivation when a component
    sized them from a workload; what does not add up goes to ``findings``."""
    nodes = sum(p.nodes_at_max for p in sizing_pools)
    if not ports:
        if nodes and nodes <= azure_lb.MAX_POOL_NODES:
            findings.append(
                f"allocatedOutboundPorts is {ports if ports == 0 else 'unset'}: Azure picks "
                f"{azure_lb.dynamic_default_ports(nodes):,} ports per node at {nodes:,} nodes and halves them as "
                "the backend pool grows; set an explicit value (`wirespeed size azure-lb`)"
            )
        return None
    if not sizing_pools or count is None:
        return None
    lb_plan = None
    try:
        lb_plan = azure_lb.plan_load_balancer(sizing_pools, ports=ports, outbound_ips=count)
    except SizingError as exc:
        findings.append(f"load balancer: {exc}")
    derived = _derivation(plan, r_urn, sizing_pools, count)
    if lb_plan is None or derived is None:
        return lb_plan
    component, by_workload = derived
    if by_workload.allocated_outbound_ports == ports:
        return dataclasses.replace(
            lb_plan, ports_from=f"from {component}'s connections_per_second: {by_workload.ports_from}"
        )
    findings.append(
        f"{component} was sized for {by_workload.allocated_outbound_ports:,} ports per node "
        f"({by_workload.ports_from}) but the cluster registered {ports:,}"
    )
    return lb_plan


def _derivation(
    plan: ProgramPlan, cluster_urn: str, pools: Sequence[azure_lb.Pool], ips: int
) -> tuple[str, azure_lb.LoadBalancerPlan] | None:
    """The ports the wirespeed component that built ``cluster_urn`` derived from its workload, recomputed here from
    the workload it registered (a program without the component, or given explicit ports, has none)."""
    for component in plan.resources:
        outputs = component.outputs
        if component.custom or outputs.get("cluster") != cluster_urn:
            continue
        workload = get(outputs, "outbound", "workload")
        if not isinstance(workload, Mapping):
            return None
        try:
            demand = azure_lb.Workload(
                workload["connections_per_second"], workload["hold_seconds"], workload["headroom"]
            )
            return f"{component.type.rsplit(':', 1)[-1]} {component.name}", azure_lb.plan_load_balancer(
                pools, workload=demand, outbound_ips=ips
            )
        except (KeyError, SizingError):
            return None
    return None


def _tuning(plan: ProgramPlan) -> list[TuningReview]:
    daemon_sets: dict[str, RegisteredResource] = {}
    for ds in plan.of_type("apps", "DaemonSet"):
        selector = get(ds.inputs, "spec", "template", "spec", "nodeSelector") or {}
        if PROFILE_LABEL in selector:
            daemon_sets[str(selector[PROFILE_LABEL])] = ds
    found = []
    for cm in plan.of_type("core", "ConfigMap"):
        data = cm.inputs.get("data")
        text = data.get(PROFILE_KEY) if isinstance(data, Mapping) else None
        if not isinstance(text, str):
            continue
        try:
            profile = json.loads(text)
        except json.JSONDecodeError:
            continue
        name = str(profile.get("name"))
        runner = daemon_sets.get(name)
        containers = get(runner.inputs, "spec", "template", "spec", "containers") if runner else None
        image = str(containers[0].get("image")) if isinstance(containers, list) and containers else None
        rings = {
            str(driver): {k: int(v) for k, v in sizes.items() if whole(v) is not None}
            for driver, sizes in (profile.get("rings") or {}).items()
            if isinstance(sizes, Mapping)
        }
        sysctls = {str(k): int(v) for k, v in (profile.get("sysctls") or {}).items() if whole(v) is not None}
        found.append(
            TuningReview(
                profile=name,
                config_map=namespaced(cm),
                rings=rings,
                sysctls=dict(sorted(sysctls.items())),
                mtu=whole(get(profile, "mtu", "value")),
                daemon_set=str(get(runner.outputs, "metadata", "name") or runner.name) if runner else None,
                image=image,
                namespace=str(get(runner.outputs, "metadata", "namespace")) if runner else None,
                outbound=_profile_outbound(profile.get("outbound")),
            )
        )
    return found


def _profile_outbound(section: object) -> Outbound | None:
    """A ConfigMap profile's outbound section, when it is a valid one (the agent refuses an invalid profile whole)."""
    if not isinstance(section, Mapping):
        return None
    try:
        return Outbound.model_validate(dict(section))
    except ValidationError:
        return None
