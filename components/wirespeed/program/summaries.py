"""One line per registered resource: the inputs a reviewer needs (sizes, counts, ports, addresses, images). Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from wirespeed.program.aws_review import summarise_aws
from wirespeed.program.model import ProgramPlan, RegisteredResource, type_matches
from wirespeed.program.sections import PoolReview
from wirespeed.program.text import fmt
from wirespeed.values import get, plain_numbers, whole


def summarise(r: RegisteredResource, plan: ProgramPlan) -> str:
    """The inputs that matter for one resource, on one line (empty for resources with nothing to say)."""
    i = r.inputs
    if r.type.startswith("kubernetes:karpenter.") and (nap := _summarise_nap(r)) is not None:
        return nap
    if r.type.startswith(("aws:", "kubernetes:karpenter.")) and (aws := summarise_aws(r, plan)) is not None:
        return aws
    if type_matches(r.type, "containerservice", "ManagedCluster"):
        parts = [str(i.get("location") or r.outputs.get("location") or "")]
        network = i.get("networkProfile") if isinstance(i.get("networkProfile"), Mapping) else {}
        outbound = str(get(network, "outboundType") or "loadBalancer")
        parts.append(f"outbound {outbound}")
        lb = get(network, "loadBalancerProfile")
        if isinstance(lb, Mapping):
            parts.append(f"allocatedOutboundPorts {fmt(whole(lb.get('allocatedOutboundPorts')))}")
            count, source, _ = lb_ips(lb, plan)
            parts.append(f"{fmt(count)} IP(s) {source}")
            if lb.get("idleTimeoutInMinutes") is not None:
                parts.append(f"idle {fmt(whole(lb.get('idleTimeoutInMinutes')))} min")
        nat = get(network, "natGatewayProfile")
        if isinstance(nat, Mapping):
            parts.append(f"NAT IPs {fmt(whole(get(nat, 'managedOutboundIPProfile', 'count')))}")
            if nat.get("idleTimeoutInMinutes") is not None:
                parts.append(f"idle {fmt(whole(nat.get('idleTimeoutInMinutes')))} min")
        pools = i.get("agentPoolProfiles")
        if isinstance(pools, list):
            parts.append(
                "pools " + ", ".join(f"{p.get('name')} {p.get('vmSize')}" for p in pools if isinstance(p, Mapping))
            )
        return "; ".join(p for p in parts if p)
    if type_matches(r.type, "containerservice", "AgentPool"):
        pool = PoolReview(str(i.get("agentPoolName") or r.name), "", r.urn, "AgentPool", i, None)
        parts = [str(i.get("vmSize")), pool.nodes(), f"surge {pool.max_surge}"]
        if isinstance(i.get("availabilityZones"), list):
            parts.append("zones " + ",".join(i["availabilityZones"]))
        if pool.profile:
            parts.append(f"profile {pool.profile}")
        if pool.sysctls:
            parts.append("sysctls " + ", ".join(f"{k}={v}" for k, v in pool.sysctls.items()))
        return "; ".join(parts)
    if type_matches(r.type, "network", "PublicIPAddress"):
        sku = get(i, "sku", "name") or "?"
        zones = ",".join(i.get("zones") or []) or "no zones"
        zones = f"zones {zones}" if zones != "no zones" else zones
        return f"{sku}, {i.get('publicIPAllocationMethod') or 'allocation ?'}, {zones} -> {r.outputs.get('ipAddress')}"
    if type_matches(r.type, "network", "PublicIPPrefix"):
        return f"/{fmt(whole(i.get('prefixLength')))} -> {r.outputs.get('ipPrefix')}"
    if type_matches(r.type, "network", "NatGateway"):
        ips = len(i.get("publicIpAddresses") or [])
        return f"{ips} IP(s), idle {fmt(whole(i.get('idleTimeoutInMinutes')))} min"
    if r.type.endswith(":MetricAlert"):
        criteria = get(i, "criteria", "allOf")
        crit = criteria[0] if isinstance(criteria, list) and criteria else {}
        return (
            f"{crit.get('metricName', '?')} {crit.get('operator', '')} {plain_numbers(crit.get('threshold'))}, "
            f"severity {fmt(whole(i.get('severity')))}"
        )
    if r.type == "kubernetes:apps/v1:DaemonSet":
        spec = get(i, "spec", "template", "spec")
        containers = get(spec, "containers") or []
        images = ", ".join(str(c.get("image")) for c in containers if isinstance(c, Mapping))
        selector = get(spec, "nodeSelector") or {}
        return f"{namespaced(r)}; image {images}; nodeSelector {json.dumps(selector, sort_keys=True)}"
    if r.type.startswith("kubernetes:") and r.custom:
        return namespaced(r)
    if type_matches(r.type, "eks", "NodeGroup"):
        scaling = i.get("scalingConfig") or {}
        return (
            f"{', '.join(i.get('instanceTypes') or [])}; nodes {fmt(whole(scaling.get('minSize')))}.."
            f"{fmt(whole(scaling.get('maxSize')))}"
        )
    return ""


def _summarise_nap(r: RegisteredResource) -> str | None:
    """An AKS node auto-provisioning NodePool or AKSNodeClass on one line; None for EKS's Karpenter objects."""
    from wirespeed.catalog import karpenter_azure as nap
    from wirespeed.program.nap_review import is_nap_pool
    from wirespeed.rules._nap import SYSCTLS, requirements

    i = r.inputs
    if type_matches(r.type, nap.GROUP, nap.NODE_CLASS_KIND):
        sysctls = get(i, *SYSCTLS)
        listed = ", ".join(f"{k}={v}" for k, v in sorted(plain_numbers(sysctls).items())) if sysctls else "none"
        return f"image {get(i, 'spec', 'imageFamily') or 'default'}; linuxOSConfig.sysctls {listed}"
    if not is_nap_pool(r):
        return None
    by_key = {(q.key, q.operator): q.values for q in requirements(i)}
    labels = get(i, "spec", "template", "metadata", "labels") or {}
    cpu = [f"{op} {v[0]}" for (key, op), v in by_key.items() if key == nap.SKU_CPU and v]
    return (
        f"series {', '.join(by_key.get((nap.SKU_SERIES, 'In'), ())) or 'any'}; vCPU {' and '.join(cpu) or 'any'}; "
        f"arch {', '.join(by_key.get((nap.ARCH, 'In'), ()))}; capacity "
        f"{', '.join(by_key.get(('karpenter.sh/capacity-type', 'In'), ()))}; limits.cpu "
        f"{get(i, 'spec', 'limits', 'cpu')}; profile {labels.get('wirespeed.io/profile', 'none')}"
    )


def namespaced(r: RegisteredResource) -> str:
    meta = r.outputs.get("metadata") if isinstance(r.outputs.get("metadata"), Mapping) else r.inputs.get("metadata")
    name = get(meta, "name") or r.name
    ns = get(meta, "namespace")
    return f"{ns}/{name}" if ns else str(name)


def lb_ips(lb: Mapping[str, Any], plan: ProgramPlan) -> tuple[int | None, str, tuple[str, ...]]:
    """(IP count, where they come from, addresses of IPs this program created)."""
    managed = whole(get(lb, "managedOutboundIPs", "count"))
    given = get(lb, "outboundIPs", "publicIPs")
    prefixes = get(lb, "outboundIPPrefixes", "publicIPPrefixes")
    if isinstance(given, list) and given:
        ids = [str(get(p, "id")) for p in given]
        created = {r.id: r for r in plan.of_type("network", "PublicIPAddress")}
        addresses = tuple(str(created[x].outputs.get("ipAddress")) for x in ids if x in created)
        source = f"given as public IP resources, {len(addresses)} created by this program"
        return len(ids), source, addresses
    if isinstance(prefixes, list) and prefixes:
        created_prefixes = {r.id: r for r in plan.of_type("network", "PublicIPPrefix")}
        total = 0
        for p in prefixes:
            prefix = created_prefixes.get(str(get(p, "id")))
            length = whole(prefix.inputs.get("prefixLength")) if prefix else None
            if length is None:
                return None, "from public IP prefixes of unknown length", ()
            total += 2 ** (32 - length)
        return total, f"from {len(prefixes)} public IP prefix(es)", ()
    return (managed if managed is not None else 1), "managed by AKS (managedOutboundIPs.count)", ()
