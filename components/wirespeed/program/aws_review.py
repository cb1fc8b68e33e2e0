"""The EKS parts of a plan (pure): one-line summaries of AWS resources and the rendered user data.

A node group shows each instance type with its sustained bandwidth and ENA Express from the catalog; a launch
template its ENA Express, IMDS settings and user data parts; a NAT gateway its IP count and addresses (looked up
from the Elastic IPs the plan holds); the "EKS user data" section prints each launch template's user data
decoded, once per distinct document, so a review shows exactly what nodes will run at boot.
"""

from __future__ import annotations

import base64
import binascii
import email
from collections.abc import Mapping
from typing import Any

from wirespeed import catalog
from wirespeed.program.model import ProgramPlan, RegisteredResource, type_matches
from wirespeed.program.text import fmt
from wirespeed.values import get, whole

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _bandwidth(name: str) -> str:
    try:
        it = catalog.lookup(name)
    except catalog.UnknownInstanceType:
        return f"{name} (not in the catalog)"
    flags = [f"{it.baseline_gbps:g} Gb/s" + (f" up to {it.burst_gbps:g}" if it.burstable else "")]
    if it.ena_express:
        flags.append("ENA Express capable")
    if not it.network_optimised:
        flags.append("NOT network-optimised")
    return f"{name} ({', '.join(flags)})"


def decode_user_data(raw: object) -> str | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return base64.b64decode(raw, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return raw


def _parts(text: str) -> list[str]:
    message = email.message_from_string(text)
    if not message.is_multipart():
        return ["Bottlerocket TOML" if text.lstrip().startswith(("#", "[")) else "one document"]
    return [part.get_content_type() for part in message.walk() if not part.is_multipart()]


def summarise_aws(r: RegisteredResource, plan: ProgramPlan) -> str | None:
    """A summary for the AWS types the EKS components create; None for any other type."""
    i = r.inputs
    if type_matches(r.type, "eks", "NodeGroup"):
        scaling = i.get("scalingConfig") or {}
        types = ", ".join(_bandwidth(str(t)) for t in i.get("instanceTypes") or [])
        labels = i.get("labels") or {}
        profile = labels.get("wirespeed.io/profile") if isinstance(labels, Mapping) else None
        return (
            f"{types}; nodes {fmt(whole(scaling.get('minSize')))}..{fmt(whole(scaling.get('maxSize')))}; "
            f"{i.get('amiType') or 'AMI type ?'}; profile {profile or 'none'}"
        )
    if r.type == LAUNCH_TEMPLATE:
        parts = []
        interfaces = i.get("networkInterfaces") or []
        srd = any(get(n, "enaSrdSpecification", "enaSrdEnabled") for n in interfaces if isinstance(n, Mapping))
        parts.append("ENA Express on" if srd else "ENA Express off")
        meta = i.get("metadataOptions") or {}
        hops = fmt(whole(meta.get("httpPutResponseHopLimit")))
        parts.append(f"IMDS tokens {meta.get('httpTokens', 'optional')}, hop limit {hops}")
        text = decode_user_data(i.get("userData"))
        parts.append("user data " + (" + ".join(_parts(text)) if text else "none"))
        return "; ".join(parts)
    if type_matches(r.type, "ec2", "NatGateway") and r.type.startswith("aws:"):
        return _nat_gateway(r, plan)
    if r.type == "kubernetes:karpenter.sh/v1:NodePool":
        requirements = get(i, "spec", "template", "spec", "requirements") or []
        by_key = {
            (q.get("key"), q.get("operator")): q.get("values") or [] for q in requirements if isinstance(q, Mapping)
        }
        bandwidth = [
            f"{op} {values[0]} Mb/s"
            for (key, op), values in by_key.items()
            if key == "karpenter.k8s.aws/instance-network-bandwidth" and values
        ]
        labels = get(i, "spec", "template", "metadata", "labels") or {}
        arch = ", ".join(by_key.get(("kubernetes.io/arch", "In"), []))
        return (
            f"families {', '.join(by_key.get(('karpenter.k8s.aws/instance-family', 'In'), []))}; "
            f"bandwidth {' and '.join(bandwidth) or 'any'}; arch {arch}; "
            f"capacity {', '.join(by_key.get(('karpenter.sh/capacity-type', 'In'), []))}; "
            f"profile {labels.get('wirespeed.io/profile', 'none')}"
        )
    if r.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass":
        spec = i.get("spec") or {}
        aliases = ", ".join(str(t.get("alias")) for t in spec.get("amiSelectorTerms") or [] if isinstance(t, Mapping))
        meta = spec.get("metadataOptions") or {}
        user_data = spec.get("userData")
        documents = " + ".join(_parts(user_data)) if isinstance(user_data, str) else "none"
        return (
            f"AMI {aliases}; IMDS tokens {meta.get('httpTokens', 'optional')}, hop limit "
            f"{fmt(whole(meta.get('httpPutResponseHopLimit')))}; user data {documents}"
        )
    if type_matches(r.type, "ec2", "Eip"):
        return f"-> {r.outputs.get('publicIp')}"
    if type_matches(r.type, "ec2", "Route"):
        target = i.get("natGatewayId") or i.get("gatewayId")
        return f"{i.get('destinationCidrBlock')} in {i.get('routeTableId')} -> {target}"
    if type_matches(r.type, "cloudwatch", "MetricAlarm"):
        return (
            f"{i.get('namespace')} {i.get('metricName')} {i.get('statistic')} {i.get('comparisonOperator')} "
            f"{fmt(whole(i.get('threshold')))} over {fmt(whole(i.get('period')))} s"
        )
    return None


def _nat_gateway(r: Any, plan: ProgramPlan) -> str:
    """A NAT gateway's IPs: zonal, its allocation and secondaries in its subnet; regional, per AZ, or AWS's own."""
    i = r.inputs
    addresses = _eip_addresses(plan)
    if i.get("availabilityMode") == "regional":
        zones = [z for z in i.get("availabilityZoneAddresses") or [] if isinstance(z, Mapping)]
        if not zones:
            return f"regional, vpc {i.get('vpcId')}, automatic: AWS adds IPs per AZ as they are needed"
        per_az = [
            f"{z.get('availabilityZone') or z.get('availabilityZoneId')} {len(z.get('allocationIds') or [])} IP(s): "
            + ", ".join(addresses.get(str(a), "?") for a in z.get("allocationIds") or [])
            for z in zones
        ]
        return f"regional, vpc {i.get('vpcId')}; " + "; ".join(per_az)
    allocations = [i.get("allocationId"), *(i.get("secondaryAllocationIds") or [])]
    ips = [addresses.get(str(a), "?") for a in allocations if a]
    return f"{i.get('connectivityType', 'public')}, subnet {i.get('subnetId')}, {len(ips)} IP(s): {', '.join(ips)}"


def _eip_addresses(plan: ProgramPlan) -> dict[str, str]:
    return {
        str(r.outputs.get("allocationId")): str(r.outputs.get("publicIp"))
        for r in plan.resources
        if type_matches(r.type, "ec2", "Eip")
    }


def user_data_section(plan: ProgramPlan) -> list[str]:
    """Each launch template's user data, decoded; a document shown once, later templates refer to it."""
    lines: list[str] = []
    shown: dict[str, str] = {}
    for r in plan.resources:
        if r.type != LAUNCH_TEMPLATE:
            continue
        text = decode_user_data(r.inputs.get("userData"))
        if text is None:
            continue
        if text in shown:
            lines.append(f"### {r.name}: the same user data as {shown[text]}")
            continue
        shown[text] = r.name
        lines.append(f"### {r.name} ({len(text.splitlines())} lines, base64 in the template)")
        lines.append("```")
        lines.extend(text.rstrip("\n").splitlines())
        lines.append("```")
    return lines


def karpenter_user_data(plan: ProgramPlan) -> list[str]:
    """EC2NodeClass user data is plain text in the object: listed by name only (the section above shows the same
    renderer's output for launch templates; tests/golden/userdata holds the renders)."""
    return [
        f"- {r.name}: EC2NodeClass userData " + " + ".join(_parts(str(get(r.inputs, "spec", "userData"))))
        for r in plan.resources
        if r.type.endswith(":EC2NodeClass") and isinstance(get(r.inputs, "spec", "userData"), str)
    ]


def eks_operating_systems(plan: ProgramPlan) -> set[str]:
    """``al2023`` and/or ``bottlerocket``: what the program's launch templates and EC2NodeClasses boot."""
    found = set()
    for r in plan.resources:
        if r.type == LAUNCH_TEMPLATE:
            text = decode_user_data(r.inputs.get("userData"))
        elif r.type.endswith(":EC2NodeClass"):
            text = str(get(r.inputs, "spec", "userData") or "") or None
            ami = str(get(r.inputs, "spec", "amiSelectorTerms", 0, "alias") or "")
            if ami.startswith("bottlerocket@"):
                found.add("bottlerocket")
                continue
        else:
            continue
        if text:
            found.add("al2023" if email.message_from_string(text).is_multipart() else "bottlerocket")
    return found
