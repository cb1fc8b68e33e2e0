"""Files modules/node-tuning is built and tested from, generated from :mod:`wirespeed.manifests` (the renderer behind
`wirespeed render node-tuning` and the Pulumi ``NodeTuning`` component), so a Terraform user applies the same
objects, byte for byte, and nobody keeps a second copy of a manifest in HCL.

``modules/node-tuning/manifests.tf.json`` holds, as Terraform locals, the objects the renderer gives for each
built-in profile, split the way the module composes them: the install objects (Namespace, ServiceAccount, RBAC), the
admission policy and its binding, a ConfigMap and DaemonSet per profile, and the PodMonitor and PrometheusRule as
separate lists. The two inputs the renderer takes
as plain text (image, namespace) are rendered as placeholders and written back as Terraform references to
``local.image`` and ``local.namespace``; everything else is literal text, with Terraform's template sequences
(``${``, ``%{``) escaped. ``tests/vectors/node_tuning.json`` holds inputs with the objects the renderer gives for
them (or the fields it refuses), which tests/terratest applies with the real terraform binary and compares.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from wirespeed import __version__
from wirespeed.manifests import (
    CHECKSUM_ANNOTATION,
    DEFAULT_IMAGE,
    DEFAULT_NAMESPACE,
    DEFAULT_PROFILES,
    PROFILE_LABEL,
    NodeTuningOptions,
    check,
    node_tuning_objects,
    profile_checksum,
)
from wirespeed.manifests import options as manifest_options
from wirespeed.manifests.node_tuning import METRICS_PORT, container_ports
from wirespeed.names import PROFILE_KEY
from wirespeed.profile import CIDR_ALLOWED, MAX_EXCLUDE_CIDRS, Outbound, load_profile, with_outbound
from wirespeed.profile.model import PROBE_DEFAULT_PORT, PROBE_PORT, Probe
from wirespeed.profiles import builtin_profile
from wirespeed.sizing import nat_gateway, snat_limits
from wirespeed.terraform import render

ROOT = Path(__file__).resolve().parents[3]
MODULE_PATH = ROOT / "modules" / "node-tuning"
MANIFESTS_PATH = MODULE_PATH / "manifests.tf.json"
VECTORS_PATH = ROOT / "tests" / "vectors" / "node_tuning.json"

# Rendered in place of the user's values, then replaced by the Terraform references. Both pass the renderer's own
# checks (so it renders them) and are unlikely to occur in any manifest text; outputs() refuses them if they do.
IMAGE_PLACEHOLDER = "registry.invalid/wirespeed-terraform-placeholder/agent:placeholder"
NAMESPACE_PLACEHOLDER = "wirespeed-terraform-placeholder-namespace"
IMAGE_REFERENCE = "${local.image}"
NAMESPACE_REFERENCE = "${local.namespace}"

Obj = dict[str, Any]


def escape(text: str) -> str:
    """``text`` as a Terraform template that evaluates to itself: ``${`` and ``%{`` start interpolations and
    directives in every string of a .tf.json expression, ``$${`` and ``%%{`` are their literal forms."""
    return text.replace("${", "$${").replace("%{", "%%{")


def terraform_template(value: Any) -> Any:
    """A rendered object as the .tf.json expression that evaluates to it with the user's image and namespace."""
    if isinstance(value, dict):
        for key in value:
            if IMAGE_PLACEHOLDER in key or NAMESPACE_PLACEHOLDER in key:
                raise ValueError(f"a placeholder is in the object key {key!r}: keys cannot refer to inputs")
        return {escape(key): terraform_template(item) for key, item in value.items()}
    if isinstance(value, list):
        return [terraform_template(item) for item in value]
    if isinstance(value, str):
        text = escape(value).replace(IMAGE_PLACEHOLDER, IMAGE_REFERENCE)
        return text.replace(NAMESPACE_PLACEHOLDER, NAMESPACE_REFERENCE)
    return value


def _placeholder_render(
    profiles: Sequence[str], pod_monitor: bool = False, alerts: bool = False, admission_policy: bool = True
) -> list[Obj]:
    options = NodeTuningOptions(
        image=IMAGE_PLACEHOLDER,
        namespace=NAMESPACE_PLACEHOLDER,
        pod_monitor=pod_monitor,
        alerts=alerts,
        admission_policy=admission_policy,
    )
    return node_tuning_objects([builtin_profile(name) for name in profiles], options)


# The kinds of the optional admission policy part, in the renderer's order.
POLICY_KINDS = ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]


def _split() -> Obj:
    """The renderer's output cut into the parts the module concatenates, each checked to be exactly the slice of a
    full render it claims to be, so the module's concat() in the renderer's order gives the renderer's list."""
    names = manifest_options.builtin_names()
    everything = _placeholder_render(names, pod_monitor=True, alerts=True)
    count = len(names)
    first_config_map = [o["kind"] for o in everything].index("ConfigMap")
    policy_at = first_config_map - len(POLICY_KINDS)
    install, policy = everything[:policy_at], everything[policy_at:first_config_map]
    rest = everything[first_config_map:]
    config_maps, daemon_sets = rest[:count], rest[count : 2 * count]
    pod_monitor, alerts = rest[2 * count : 2 * count + 1], rest[2 * count + 1 :]
    if [o["kind"] for o in policy] != POLICY_KINDS:
        raise RuntimeError("node_tuning_objects changed its admission policy: update wirespeed.terraform.node_tuning")
    if _placeholder_render(names) != install + policy + config_maps + daemon_sets:
        raise RuntimeError("node_tuning_objects changed its order: update wirespeed.terraform.node_tuning")
    if _placeholder_render(names, admission_policy=False) != install + config_maps + daemon_sets:
        raise RuntimeError("the admission policy is not a part on its own: update wirespeed.terraform.node_tuning")
    if [o["kind"] for o in pod_monitor + alerts] != ["PodMonitor", "PrometheusRule"]:
        raise RuntimeError("node_tuning_objects changed its monitoring objects: update wirespeed.terraform.node_tuning")
    for name, config_map, daemon_set in zip(names, config_maps, daemon_sets, strict=True):
        if _placeholder_render([name]) != [*install, *policy, config_map, daemon_set]:
            raise RuntimeError(f"profile {name!r} renders differently alone: update wirespeed.terraform.node_tuning")
    return {
        "install": install,
        "admission_policy": policy,
        "profiles": {
            name: {
                "config_map": config_map,
                "daemon_set": daemon_set,
                "checksum": profile_checksum(builtin_profile(name)),
            }
            for name, config_map, daemon_set in zip(names, config_maps, daemon_sets, strict=True)
        },
        "pod_monitor": pod_monitor,
        "alerts": alerts,
    }


def manifests_document() -> Obj:
    return {
        "//": "Generated by python -m wirespeed.terraform from wirespeed.manifests (the renderer of `wirespeed render "
        "node-tuning`); do not edit.",
        "locals": {
            "wirespeed": terraform_template(
                {
                    "version": __version__,
                    "default_image": DEFAULT_IMAGE,
                    "default_namespace": DEFAULT_NAMESPACE,
                    "default_profiles": list(DEFAULT_PROFILES),
                    "builtin_profiles": manifest_options.builtin_names(),
                    "image_pattern": manifest_options.IMAGE_PATTERN.pattern,
                    "image_allowed": manifest_options.IMAGE_ALLOWED,
                    "namespace_pattern": manifest_options.NAMESPACE_PATTERN.pattern,
                    "namespace_allowed": manifest_options.NAMESPACE_ALLOWED,
                    "shared_namespaces": list(manifest_options.SHARED_NAMESPACES),
                    "profile_label": PROFILE_LABEL,
                    "checksum_annotation": CHECKSUM_ANNOTATION,
                    "profile_key": PROFILE_KEY,
                    "outbound": outbound_facts(),
                    "probe": probe_facts(),
                }
            ),
            "rendered": terraform_template(_split()),
        },
    }


def outbound_facts() -> Obj:
    """What the module's ``outbound`` variable accepts, from the profile model's bounds (wirespeed.profile,
    wirespeed.sizing.snat_limits), and the words the profile's validation refuses each with."""
    low, high = snat_limits.ALLOCATED_PORTS_RANGE
    return {
        "kinds": {kind: limits.sized_by for kind, limits in snat_limits.KINDS.items()},
        "allocated_ports": {"low": low, "high": high, "multiple": snat_limits.ALLOCATED_PORTS_MULTIPLE,
                            "allowed": _refused({"allocated_ports_per_node": 4}, "azure-load-balancer")},
        # Per kind (snat_limits.PUBLIC_IPS_RANGES): an Azure NAT gateway's most IPs, an AWS regional gateway's per AZ.
        "public_ips": {kind: {"low": low_ips, "high": high_ips, "allowed": _refused({"public_ips": 0}, kind)}
                       for kind, (low_ips, high_ips) in snat_limits.PUBLIC_IPS_RANGES.items()},
        "pressure_percent": {"low": snat_limits.PRESSURE_PERCENT_RANGE[0],
                             "high": snat_limits.PRESSURE_PERCENT_RANGE[1],
                             "default": snat_limits.DEFAULT_PRESSURE_PERCENT,
                             "allowed": _refused({"pressure_percent": 0}, "aws-nat-gateway", public_ips=1)},
        "hold_seconds": {"low": snat_limits.AGENT_HOLD_SECONDS_RANGE[0],
                         "high": snat_limits.AGENT_HOLD_SECONDS_RANGE[1],
                         "default": snat_limits.DEFAULT_AGENT_HOLD_SECONDS,
                         "allowed": _refused({"hold_seconds": -1}, "aws-nat-gateway", public_ips=1)},
        **{field: {"low": low_hold, "high": high_hold,
                   "allowed": _refused({field: -1}, "aws-nat-gateway", public_ips=1)}
           for field, (low_hold, high_hold) in (("tcp_hold_seconds", snat_limits.TCP_HOLD_SECONDS_RANGE),
                                                ("udp_hold_seconds", snat_limits.UDP_HOLD_SECONDS_RANGE))},
        "only_with": {
            "allocated_ports_per_node": _refused({"allocated_ports_per_node": 8}, "aws-nat-gateway", public_ips=1),
            "public_ips": _refused({"public_ips": 1}, "azure-load-balancer", allocated_ports_per_node=8),
        },
        "max_exclude_cidrs": MAX_EXCLUDE_CIDRS,
        "cidr_allowed": CIDR_ALLOWED,
    }  # fmt: skip


def probe_facts() -> Obj:
    """What the module's ``probe_port`` variable accepts and writes, from the profile model (wirespeed.profile.Probe:
    the port's range, the peers and streams defaults a section written with a port alone carries) and the renderer
    (the container port object a probe section adds, at the default port; the module puts the user's in it)."""
    low, high = PROBE_PORT.low, PROBE_PORT.high
    default = Probe()
    probed = builtin_profile(DEFAULT_PROFILES[0]).model_copy(update={"probe": default})
    return {
        "port": {"low": low, "high": high, "default": default.port,
                 "allowed": f"a whole TCP port between {low} and {high:,}, not the metrics port {METRICS_PORT}"},
        "peers": default.peers,
        "streams": default.streams,
        "metrics_port": METRICS_PORT,
        "container_port": container_ports(probed)[-1],
    }  # fmt: skip


def _refused(fields: Obj, kind: str, **others: Any) -> str:
    """What the profile model says is allowed when it refuses ``fields`` in an outbound section of ``kind``."""
    try:
        Outbound.model_validate({"kind": kind, **others, **fields})
    except ValidationError as exc:
        return str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
    raise AssertionError(f"{fields} was accepted")


# A profile file of the kind a user writes (the custom-profile golden case of `wirespeed render node-tuning`).
CUSTOM_PROFILE_PATH = ROOT / "tests" / "golden" / "node-tuning" / "ingest-profile.json"

# (name, profiles, image, namespace, pod_monitor, alerts, admission_policy); None keeps the module's (and the
# renderer's) default.
_Case = tuple[str, list[str] | None, str | None, str | None, bool, bool, bool]
DIGEST_IMAGE = "registry.example.com/platform/wirespeed-agent@sha256:" + "4" * 64


def _combinations() -> list[_Case]:
    """Every profile list the module takes (each built-in name at most once, in any order) with every monitoring
    option: what the module composes from parts, each compared with a whole render."""
    names = manifest_options.builtin_names()
    lists = [list(p) for r in range(1, len(names) + 1) for p in itertools.permutations(names, r)]
    return [
        (f"{'_'.join(profiles)}{'_pod_monitor' if pod_monitor else ''}{'_alerts' if alerts else ''}", profiles, None,
         None, pod_monitor, alerts, True)
        for profiles in lists
        for pod_monitor in (False, True)
        for alerts in (False, True)
    ]  # fmt: skip


CASES: list[_Case] = [
    *_combinations(),
    ("defaults", None, None, None, False, False, True),
    ("pod_monitor_alerts_namespace", None, None, "net-tuning", True, True, True),
    ("digest_image_namespace_both_profiles", ["balanced", "throughput"], DIGEST_IMAGE, "net-tuning", False, False,
     True),
    ("registry_port_tag_image", ["throughput"], "localhost:5000/wirespeed-agent:dev-1", None, True, True, True),
    ("no_admission_policy", None, None, None, False, False, False),
    ("no_admission_policy_both_profiles_monitoring", ["throughput", "balanced"], None, "net-tuning", True, True, False),
    ("invalid_no_profiles", [], None, None, False, False, True),
    ("invalid_unknown_profile", ["throughput", "turbo"], None, None, False, False, True),
    ("invalid_duplicate_profile", ["throughput", "balanced", "throughput"], None, None, False, False, True),
    ("invalid_image_without_tag", None, "ghcr.io/wirespeed-io/wirespeed-agent", None, False, False, True),
    ("invalid_image_uppercase_path", None, "ghcr.io/Wirespeed/agent:v1", None, False, False, True),
    ("invalid_namespace_not_a_label", None, None, "Net_Tuning", False, False, True),
    ("invalid_namespace_too_long", None, None, "n" * 64, False, False, True),
    ("invalid_namespace_shared", None, None, "kube-system", False, False, True),
    ("invalid_image_and_namespace", None, "wirespeed-agent", "default", False, False, False),
]  # fmt: skip


def _variable(field: str) -> str:
    """The module variable whose validation refuses what the renderer reports as ``field`` (profiles[1].name)."""
    return field.split("[", 1)[0].split(".", 1)[0]


def _case(
    name: str,
    profiles: list[str] | None,
    image: str | None,
    namespace: str | None,
    pod_monitor: bool,
    alerts: bool,
    admission_policy: bool,
) -> Obj:
    inputs: Obj = {"pod_monitor": pod_monitor, "alerts": alerts}
    if not admission_policy:  # the module's default is the renderer's: on
        inputs["admission_policy"] = False
    if profiles is not None:
        inputs["profiles"] = profiles
    if image is not None:
        inputs["image"] = image
    if namespace is not None:
        inputs["namespace"] = namespace
    options = NodeTuningOptions(  # only null takes the module's default: "" is given, and refused there as here
        image=DEFAULT_IMAGE if image is None else image,
        namespace=DEFAULT_NAMESPACE if namespace is None else namespace,
        pod_monitor=pod_monitor,
        alerts=alerts,
        admission_policy=admission_policy,
    )
    resolved, problems = check(list(DEFAULT_PROFILES) if profiles is None else profiles, options)
    case: Obj = {"name": name, "inputs": inputs}
    if problems:
        case["errors"] = [{"field": p.field, "variable": _variable(p.field)} for p in problems]
    else:
        case["expected"] = node_tuning_objects(resolved, options)
        case["checksums"] = {p.name: profile_checksum(p) for p in resolved}
    return case


def _objects_json_case() -> Obj:
    """A custom profile file through the module's objects_json: the text `wirespeed render node-tuning --profile
    FILE --output json` prints (that command's json.dumps of the same objects), applied as rendered."""
    profile = load_profile(CUSTOM_PROFILE_PATH.read_text())
    options = NodeTuningOptions(namespace="net-tuning", image=DIGEST_IMAGE, pod_monitor=True)
    objects = node_tuning_objects([profile, builtin_profile("balanced")], options)
    return {
        "name": "objects_json_custom_profile",
        "inputs": {"objects_json": json.dumps(objects, indent=2) + "\n"},
        "expected": objects,
        "checksums": {
            profile.name: profile_checksum(profile),
            "balanced": profile_checksum(builtin_profile("balanced")),
        },
    }


# (name, profiles, the module's outbound variable): every profile carries the section, as the Pulumi components and
# `wirespeed render node-tuning --outbound` put it there.
AWS_MOST_IPS = nat_gateway.AWS_REGIONAL_MAX_IPS_PER_AZ  # an AWS NAT gateway's most IPs in one AZ (regional)
OUTBOUND_CASES: list[tuple[str, list[str], Obj]] = [
    ("outbound_load_balancer", ["throughput"], {"kind": "azure-load-balancer", "allocated_ports_per_node": 4096}),
    ("outbound_aws_nat_two_profiles", ["balanced", "throughput"], {"kind": "aws-nat-gateway", "public_ips": 2}),
    (
        "outbound_azure_nat_every_field",
        ["throughput"],
        {
            "kind": "azure-nat-gateway",
            "public_ips": nat_gateway.AZURE_MAX_IPS,
            "pressure_percent": 65,
            "hold_seconds": 65,
            "exclude_cidrs": ["10.244.0.0/16", "fd00:10:244::/56", "100.64.0.1/10"],
        },
    ),
    ("invalid_outbound_kind", ["throughput"], {"kind": "azure-firewall", "public_ips": 1}),
    ("invalid_outbound_missing_sizing", ["throughput"], {"kind": "aws-nat-gateway"}),
    (
        "invalid_outbound_other_sizing",
        ["throughput"],
        {"kind": "azure-load-balancer", "allocated_ports_per_node": 1024, "public_ips": 2},
    ),
    (
        "invalid_outbound_ports_not_multiple_of_8",
        ["throughput"],
        {"kind": "azure-load-balancer", "allocated_ports_per_node": 1020},
    ),
    # public_ips at each kind's bound and one past it: an Azure NAT gateway's most IPs, an AWS regional one's per AZ.
    ("outbound_aws_nat_regional_most_ips", ["throughput"], {"kind": "aws-nat-gateway", "public_ips": AWS_MOST_IPS}),
    (
        "invalid_outbound_ips_azure",
        ["throughput"],
        {"kind": "azure-nat-gateway", "public_ips": nat_gateway.AZURE_MAX_IPS + 1},
    ),
    ("invalid_outbound_ips_aws", ["throughput"], {"kind": "aws-nat-gateway", "public_ips": AWS_MOST_IPS + 1}),
    ("invalid_outbound_pressure", ["throughput"], {"kind": "aws-nat-gateway", "public_ips": 1, "pressure_percent": 0}),
    ("invalid_outbound_hold", ["throughput"], {"kind": "aws-nat-gateway", "public_ips": 1, "hold_seconds": 3601}),
    # Per-protocol holds: each at its bounds (TCP 0..3,600, UDP 0..7,200: Azure's longest idle timeout) and past them.
    (
        "outbound_per_protocol_holds_at_their_bounds",
        ["throughput"],
        {
            "kind": "azure-load-balancer",
            "allocated_ports_per_node": 1024,
            "tcp_hold_seconds": 0,
            "udp_hold_seconds": 7200,
        },
    ),
    (
        "outbound_per_protocol_holds_high_tcp",
        ["throughput"],
        {
            "kind": "aws-nat-gateway",
            "public_ips": 1,
            "hold_seconds": 30,
            "tcp_hold_seconds": 3600,
            "udp_hold_seconds": 0,
        },
    ),
    (
        "invalid_outbound_tcp_hold",
        ["throughput"],
        {"kind": "aws-nat-gateway", "public_ips": 1, "tcp_hold_seconds": 3601},
    ),
    (
        "invalid_outbound_udp_hold",
        ["throughput"],
        {"kind": "aws-nat-gateway", "public_ips": 1, "udp_hold_seconds": 7201},
    ),
    (
        "invalid_outbound_udp_hold_fraction",
        ["throughput"],
        {"kind": "aws-nat-gateway", "public_ips": 1, "udp_hold_seconds": 1.5},
    ),
    (
        "invalid_outbound_cidrs",
        ["throughput"],
        {
            "kind": "aws-nat-gateway",
            "public_ips": 1,
            "exclude_cidrs": ["10.0.0.0", "10.0.0.0/33", "010.0.0.0/8", "fe80::1%eth0/64", "10.0.0.0/08"],
        },
    ),
]


def _outbound_case(name: str, profiles: list[str], outbound: Obj) -> Obj:
    case: Obj = {"name": name, "inputs": {"profiles": profiles, "outbound": outbound, "pod_monitor": False,
                                          "alerts": False}}  # fmt: skip
    try:
        section = Outbound.model_validate(outbound)
    except ValidationError as exc:
        case["errors"] = [
            {"field": ".".join(["outbound", *(str(p) for p in e["loc"] if not str(p).startswith("function-"))]),
             "variable": "outbound"}
            for e in exc.errors()
        ]  # fmt: skip
        return case
    resolved = [with_outbound(builtin_profile(p), section) for p in profiles]
    case["expected"] = node_tuning_objects(resolved, NodeTuningOptions())
    case["checksums"] = {p.name: profile_checksum(p) for p in resolved}
    return case


# (name, profiles, the module's probe_port variable, its outbound variable): every profile carries the section, as
# `wirespeed render node-tuning --probe-port` puts it there, and its DaemonSet the port.
PROBE_CASES: list[tuple[str, list[str], Any, Obj | None]] = [
    ("probe_default_port", ["throughput"], PROBE_DEFAULT_PORT, None),
    ("probe_port_two_profiles_with_outbound", ["balanced", "throughput"], PROBE_DEFAULT_PORT + 10_000,
     {"kind": "aws-nat-gateway", "public_ips": 2}),
    ("probe_lowest_port", ["balanced"], 1, None),
    ("probe_highest_port", ["throughput"], 65535, None),
    ("invalid_probe_metrics_port", ["throughput"], METRICS_PORT, None),
    ("invalid_probe_port_zero", ["throughput"], 0, None),
    ("invalid_probe_port_too_high", ["throughput"], 65536, None),
    ("invalid_probe_port_fraction", ["throughput"], PROBE_DEFAULT_PORT + 0.5, None),
]  # fmt: skip


def _probe_case(name: str, profiles: list[str], port: Any, outbound: Obj | None) -> Obj:
    inputs: Obj = {"profiles": profiles, "probe_port": port, "pod_monitor": False, "alerts": False}
    if outbound is not None:
        inputs["outbound"] = outbound
    case: Obj = {"name": name, "inputs": inputs}
    try:
        section = Probe.model_validate({"port": port})
    except ValidationError:
        case["errors"] = [{"field": "probe.port", "variable": "probe_port"}]
        return case
    section_out = None if outbound is None else Outbound.model_validate(outbound)
    resolved = [with_outbound(builtin_profile(p), section_out).model_copy(update={"probe": section}) for p in profiles]
    problems = manifest_options.check_probe_ports(resolved)
    if problems:
        case["errors"] = [{"field": p.field, "variable": "probe_port"} for p in problems[:1]]
        return case
    case["expected"] = node_tuning_objects(resolved, NodeTuningOptions())
    case["checksums"] = {p.name: profile_checksum(p) for p in resolved}
    return case


def vectors_document() -> Obj:
    return {
        "//": "Generated by python -m wirespeed.terraform from wirespeed.manifests; do not edit.",
        "cases": [
            *(_case(*c) for c in CASES),
            *(_outbound_case(*c) for c in OUTBOUND_CASES),
            *(_probe_case(*c) for c in PROBE_CASES),
            _objects_json_case(),
        ],
    }


def outputs() -> dict[Path, str]:
    """The files this generator owns (wirespeed.terraform runs every generator)."""
    return {MANIFESTS_PATH: render(manifests_document()), VECTORS_PATH: render(vectors_document())}
