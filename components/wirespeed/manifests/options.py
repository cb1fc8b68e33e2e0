"""What a node-tuning install is made of (profiles, image, namespace), checked all at once.

Every problem is reported as (field, value, allowed) so the CLI prints one line each and the Pulumi component
raises one ``InputPropertiesError`` listing them, before anything is rendered or registered.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from wirespeed import __version__
from wirespeed.problems import InvalidInputError, Problem
from wirespeed.profile import Profile
from wirespeed.profiles import ASSUMPTIONS, builtin_profile
from wirespeed.rules._accepted_args import accepted_advisories_problems
from wirespeed.sizing.packets import LINE_RATE_GBPS_RANGE

# The agent image, built by `make image` (agent/image) and to be published under the version of this library, so a
# library upgrade rolls the agent it was tested with. agent/image names its build the same (its test
# TestDefaultRefIsTheRenderedOne holds them together).
DEFAULT_IMAGE = f"ghcr.io/wirespeed-io/wirespeed-agent:v{__version__}"
DEFAULT_NAMESPACE = "wirespeed-system"
DEFAULT_PROFILES: tuple[str, ...] = ("throughput",)
# The profile alternative only Python callers have; front ends that take names alone drop it from the allowed text.
OR_A_PROFILE = " or a Profile"

# The reference grammar of github.com/distribution/reference (regexp.go): [host[:port]/]path[:tag][@digest].
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*(?::[0-9]+)?)"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
# Go's \w (the reference grammar's) is ASCII only; spelled out so Python and Terraform's RE2 agree.
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
IMAGE_PATTERN = re.compile(
    rf"^(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*(?P<tag>:{_TAG})?(?P<digest>@{_DIGEST})?$"
)
IMAGE_ALLOWED = "an image reference with a tag or digest, e.g. REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:HEX"

METRICS_PORT = 9808  # the agent's --listen default and the image's exposed port (agent/image)

# RFC 1123 label: what Kubernetes accepts as a Namespace name.
NAMESPACE_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
NAMESPACE_ALLOWED = "an RFC 1123 label: lowercase letters, digits and '-', 1-63 characters"
# The namespace is labelled Pod Security "privileged": doing that to a namespace that holds other workloads
# would let all of them use hostNetwork and hostPath. These exist in every cluster and are never the agent's own.
SHARED_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


class NodeTuningError(InvalidInputError):
    """The node-tuning inputs are invalid; ``problems`` lists every one."""

    def __init__(self, problems: Sequence[Problem]):
        super().__init__("invalid node tuning", problems)


@dataclass(frozen=True)
class NodeTuningOptions:
    """How the node-tuning objects are rendered (profiles are passed beside it)."""

    image: str = DEFAULT_IMAGE
    namespace: str = DEFAULT_NAMESPACE
    pod_monitor: bool = False
    alerts: bool = False
    """Also render the alert rules (:mod:`wirespeed.manifests.monitoring`) as a Prometheus Operator
    ``PrometheusRule`` in ``namespace``. Needs the monitoring.coreos.com/v1 CRDs. Default False."""
    admission_policy: bool = True
    """Render the ValidatingAdmissionPolicy (and its binding) that lets the agent change only its own Node's
    ``wirespeed.io/tuning-status`` annotation and its conditions. Needs Kubernetes 1.30+; turn it off only for an older
    cluster, whose API server refuses it, and know that the agent's RBAC then lets it patch any Node. Default True."""
    line_rates: Mapping[str, float] = field(default_factory=dict, hash=False)
    """The fastest line rate (Gb/s) of the nodes each profile tunes, by profile name: written on the profile's
    ConfigMap as the ``wirespeed.io/line-rate-gbps`` annotation, from which the ring and backlog gates size their
    minimums. A profile left out gets no annotation and the gates say they assumed a line rate.
    :func:`fastest_line_rates` derives it from the pools' sizes."""
    accepted_advisories: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Advisory rule id -> the written reason the profiles keep that rule's finding: written on every profile
    ConfigMap as the annotation ``wirespeed.io.accept-<rule id>`` (wirespeed.rules._accept), which the gates report
    as "accepted: <reason>". Mandatory rules are refused."""


def builtin_names() -> list[str]:
    return sorted(ASSUMPTIONS)


def resolve_profiles(specs: Sequence[str | Profile], field: str = "profiles") -> tuple[list[Profile], list[Problem]]:
    """Built-in names become their profiles; Profile objects pass through; anything else is a problem."""
    problems: list[Problem] = []
    resolved: list[Profile] = []
    if isinstance(specs, str | Profile):  # a bare "throughput" would otherwise be read letter by letter
        return [], [Problem(field, specs, "a list of profiles, e.g. ['throughput']")]
    for index, spec in enumerate(specs):
        if isinstance(spec, Profile):
            resolved.append(spec)
        elif isinstance(spec, str) and spec in ASSUMPTIONS:
            resolved.append(builtin_profile(spec))
        else:
            allowed = f"a built-in profile name ({', '.join(builtin_names())}){OR_A_PROFILE}"
            problems.append(Problem(f"{field}[{index}]", spec, allowed))
    return resolved, problems


def check_profiles(profiles: Sequence[Profile], field: str = "profiles") -> list[Problem]:
    """At least one profile, each name once: one DaemonSet per profile name, and two DaemonSets selecting the
    same ``wirespeed.io/profile`` label would fight over the same nodes."""
    if not profiles:
        return [Problem(field, [], f"at least one profile (built-in: {', '.join(builtin_names())})")]
    problems = []
    seen: set[str] = set()
    for index, profile in enumerate(profiles):
        if profile.name in seen:
            problems.append(Problem(f"{field}[{index}].name", profile.name, "each profile name at most once"))
        seen.add(profile.name)
    return problems


def check_probe_ports(profiles: Sequence[Profile], field: str = "profiles") -> list[Problem]:
    """A probe section's port is not the metrics port: both are the agent's listeners on the host network, and the
    second bind would fail at start."""
    return [
        Problem(f"{field}[{index}].probe.port", p.probe.port, f"a TCP port other than the metrics port {METRICS_PORT}")
        for index, p in enumerate(profiles)
        if p.probe is not None and p.probe.port == METRICS_PORT
    ]


def check(specs: Sequence[str | Profile], options: NodeTuningOptions) -> tuple[list[Profile], list[Problem]]:
    """Resolve the profiles and check everything, collecting every problem."""
    profiles, problems = resolve_profiles(specs)
    if not problems:
        problems = check_profiles(profiles) + check_probe_ports(profiles) + check_line_rates(profiles, options)
    return profiles, problems + check_options(options)


def fastest_line_rates(pools: Iterable[tuple[str, float]]) -> dict[str, float]:
    """(profile name, a pool's line rate in Gb/s) pairs as :attr:`NodeTuningOptions.line_rates`: the fastest pool
    per profile, since every node running the profile must meet the minimum its own line rate needs."""
    out: dict[str, float] = {}
    for profile, gbps in pools:
        out[profile] = max(out.get(profile, 0.0), float(gbps))
    return out


def line_rate_annotation(gbps: float) -> str:
    """The annotation's text: the rate as the gates parse it (``100``, ``12.5``)."""
    return f"{gbps:g}"


def check_line_rates(
    profiles: Sequence[Profile], options: NodeTuningOptions, field: str = "line_rates"
) -> list[Problem]:
    """Every line rate names a profile of the install and is a line rate the gates accept."""
    names = [p.name for p in profiles]
    low, high = LINE_RATE_GBPS_RANGE
    rates = options.line_rates
    if not isinstance(rates, Mapping):
        return [Problem(field, rates, "a mapping of profile name to line rate in Gb/s")]
    problems = []
    for name, gbps in rates.items():
        if name not in names:
            problems.append(Problem(f"{field}[{name!r}]", name, f"a profile of this install ({', '.join(names)})"))
        number = isinstance(gbps, int | float) and not isinstance(gbps, bool) and math.isfinite(gbps)
        if not number or not low <= gbps <= high:
            problems.append(
                Problem(f"{field}[{name!r}]", gbps, f"a line rate in Gb/s between {float(low):g} and {high:g}")
            )
    return problems


def check_options(options: NodeTuningOptions) -> list[Problem]:
    problems = []
    # A tag or digest is required: an untagged image means `latest`, which moves under a running DaemonSet.
    # Plain strings only: they are validated here and decide object names (an Output cannot be checked yet).
    if not isinstance(options.image, str) or not has_tag_or_digest(options.image):
        problems.append(Problem("image", options.image, IMAGE_ALLOWED))
    if not isinstance(options.namespace, str) or not NAMESPACE_PATTERN.fullmatch(options.namespace):
        problems.append(Problem("namespace", options.namespace, NAMESPACE_ALLOWED))
    elif options.namespace in SHARED_NAMESPACES:
        allowed = (
            f"a namespace of the agent's own, not one shared with other workloads ({', '.join(SHARED_NAMESPACES)})"
        )
        problems.append(Problem("namespace", options.namespace, allowed))
    return problems + accepted_advisories_problems(options.accepted_advisories)


def has_tag_or_digest(image: str) -> bool:
    match = IMAGE_PATTERN.fullmatch(image)  # match() with $ would accept a trailing newline
    return bool(match and (match.group("tag") or match.group("digest")))
