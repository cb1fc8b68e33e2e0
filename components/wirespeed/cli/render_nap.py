"""`wirespeed render aks-nap`: the AKSNodeClass and NodePool of ``AutoProvisionedPool`` as YAML, for kubectl users."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from wirespeed.cli._common import fail_all
from wirespeed.cli.render import Output, _load
from wirespeed.problems import Problem

if TYPE_CHECKING:
    from wirespeed.azure.spec import AutoProvisionedPoolSpec
    from wirespeed.catalog import InstanceType

HEADER = """\
wirespeed {version}: node auto-provisioning (Karpenter on AKS) on network-optimised sizes. Apply with
`kubectl apply -f -` on a cluster with NAP on (nodeProvisioningProfile.mode Auto) whose karpenter-provider-azure is
{since} or later: AKSNodeClass spec.linuxOSConfig arrived in {since}.
Sizes the NodePool admits (wirespeed's catalog, by SKU series): {sizes}.
Node ceiling for outbound SNAT sizing: {capacity}
Line rate (the AKSNodeClass's wirespeed.io/line-rate-gbps; the gates hold its backlog to it): {rate} Gb/s, {fastest}.
Left to the node agent (`wirespeed render node-tuning --profile {profile} --line-rate {profile}={rate}` runs it on
nodes labelled wirespeed.io/profile={profile}): {left}."""

# The args' field names and the flags that set them, for error lines in the user's words.
FLAGS = (
    ("families", "--family"),
    ("architectures", "--arch"),
    ("capacity_types", "--capacity-type"),
    ("cpu_limit", "--cpu-limit"),
    ("min_vcpu", "--min-vcpu"),
    ("max_vcpu", "--max-vcpu"),
    ("disruption_budget", "--disruption-budget"),
    ("image_family", "--image-family"),
    ("max_pods", "--max-pods"),
    ("labels", "--label"),
    ("taints", "--taint"),
    ("extra_sysctls", "--sysctl"),
    ("not_network_optimised_reason", "--not-network-optimised-reason"),
    ("profile", "--profile"),
    ("name", "--name"),
)


def _as_flag(problem: Problem) -> str:
    for field, flag in FLAGS:
        if problem.field.startswith(field):
            return str(replace(problem, field=flag + problem.field.removeprefix(field)))
    return str(problem)


def _pairs(flag: str, given: list[str] | None) -> tuple[dict[str, str], list[str]]:
    """``KEY=VALUE`` options as a mapping, and an error line for each that is not one."""
    found: dict[str, str] = {}
    errors: list[str] = []
    for index, text in enumerate(given or []):
        key, equals, value = text.partition("=")
        if not equals or not key:
            errors.append(f"{flag}[{index}]: {text!r} is not allowed: KEY=VALUE")
        else:
            found[key] = value
    return found, errors


def _sysctls(given: list[str] | None) -> tuple[dict[str, int | str], list[str]]:
    pairs, errors = _pairs("--sysctl", given)
    # A number is sent as one (AKS's sysctls are integers but for the port range "FIRST LAST").
    return {k: int(v) if v.isdigit() and len(v) < 12 else v for k, v in pairs.items()}, errors


def _series(sizes: Sequence[InstanceType]) -> str:
    """``Ds_v6 16-192 vCPU, Es_v6 16-128 vCPU``: the admitted sizes by the provider's sku-series label."""
    from wirespeed.catalog.karpenter_azure import sku_labels

    by_series: dict[str, list[int]] = {}
    for size in sizes:
        by_series.setdefault(sku_labels(size).series, []).append(size.vcpu)
    return ", ".join(
        f"{series} {min(v)}-{max(v)} vCPU" if min(v) != max(v) else f"{series} {v[0]} vCPU"
        for series, v in sorted(by_series.items())
    )


def _wrap(text: str) -> str:
    """Long header lines folded to the YAML's width, continuation lines indented."""
    import textwrap

    return "\n".join(
        textwrap.fill(line, width=116, subsequent_indent="  ", break_on_hyphens=False) for line in text.splitlines()
    )


def register(render_app: typer.Typer) -> None:
    render_app.command("aks-nap")(render_aks_nap)


def render_aks_nap(
    name: Annotated[str, typer.Option(help="Name of the NodePool and its AKSNodeClass (an RFC 1123 label).")],
    cpu_limit: Annotated[
        int, typer.Option(help="NodePool limits.cpu: the most vCPUs the pool may run; gives its node ceiling.")
    ],
    profile: Annotated[
        str, typer.Option(help="Built-in profile name (throughput, balanced) or profile JSON file.")
    ] = "throughput",
    family: Annotated[
        list[str] | None,
        typer.Option(help="Catalog family to admit (Dsv6, Ddsv6, ...); repeat. Default: every network-optimised one."),
    ] = None,
    arch: Annotated[list[str] | None, typer.Option(help="x86_64 and/or arm64; repeat. Default: x86_64.")] = None,
    min_vcpu: Annotated[int | None, typer.Option(help="Smallest size to launch, in vCPUs.")] = None,
    max_vcpu: Annotated[int | None, typer.Option(help="Largest size to launch, in vCPUs.")] = None,
    capacity_type: Annotated[
        list[str] | None, typer.Option(help="on-demand and/or spot; repeat. Default: on-demand.")
    ] = None,
    disruption_budget: Annotated[
        str, typer.Option(help="Nodes Karpenter may replace at once: a count or a percent.")
    ] = "10%",
    image_family: Annotated[str, typer.Option(help="Ubuntu, Ubuntu2204, Ubuntu2404 or AzureLinux.")] = "Ubuntu",
    max_pods: Annotated[int | None, typer.Option(help="AKSNodeClass maxPods, 10..250.")] = None,
    label: Annotated[list[str] | None, typer.Option(help="Extra node label KEY=VALUE; repeat.")] = None,
    taint: Annotated[list[str] | None, typer.Option(help="Node taint KEY[=VALUE]:EFFECT; repeat.")] = None,
    sysctl: Annotated[
        list[str] | None, typer.Option(help="Extra sysctl for the AKSNodeClass, kernel name=value; repeat.")
    ] = None,
    not_network_optimised_reason: Annotated[
        str | None, typer.Option(help="Why a family that is not network-optimised is acceptable here.")
    ] = None,
    output: Annotated[
        Output, typer.Option(help="yaml: documents for `kubectl apply -f -`; json: one array of the same objects.")
    ] = Output.yaml,
) -> None:
    """Print the AKSNodeClass (the profile's sysctls in linuxOSConfig) and the NodePool (network-optimised SKU
    series only) of an auto-provisioned pool, exactly as the AutoProvisionedPool component creates them."""
    from wirespeed.azure.spec import AutoProvisionedPoolSpec

    loaded, errors = _load(profile, 0)
    errors = [e.replace("--profile[0]", "--profile", 1) for e in errors]
    labels, label_errors = _pairs("--label", label)
    sysctls, sysctl_errors = _sysctls(sysctl)
    spec = AutoProvisionedPoolSpec(
        name=name,
        cpu_limit=cpu_limit,
        profile=loaded if loaded is not None else "throughput",
        families=family or None,
        architectures=tuple(arch or ("x86_64",)),
        min_vcpu=min_vcpu,
        max_vcpu=max_vcpu,
        capacity_types=tuple(capacity_type or ("on-demand",)),
        disruption_budget=disruption_budget,
        image_family=image_family,
        max_pods=max_pods,
        labels=labels,
        taints=tuple(taint or ()),
        extra_sysctls=sysctls,
        not_network_optimised_reason=not_network_optimised_reason,
    )
    _print(spec, errors + label_errors + sysctl_errors, profile_loaded=loaded is not None, output=output)


def _print(spec: AutoProvisionedPoolSpec, errors: list[str], *, profile_loaded: bool, output: Output) -> None:
    """The objects (YAML with the explaining header, or JSON), or every problem as an error line and exit 2."""
    from wirespeed import __version__
    from wirespeed.azure.nap import check_nap, nap_objects
    from wirespeed.catalog.karpenter_azure import LINUX_OS_CONFIG_SINCE
    from wirespeed.manifests import to_yaml
    from wirespeed.manifests.options import line_rate_annotation

    plan, problems = check_nap(spec)
    # A profile that did not load was replaced by the default to check the rest: its own problems are not real.
    errors += [_as_flag(p) for p in problems if profile_loaded or not p.field.startswith("profile")]
    if errors or plan is None:
        errors = errors or ["--profile: not loaded"]
        fail_all(f"auto-provisioned pool not rendered: {len(errors)} problem(s)", errors)
    objects = nap_objects(plan)
    if output is Output.json:
        import json

        typer.echo(json.dumps(objects, indent=2))
        return
    header = _wrap(
        HEADER.format(
            version=__version__,
            since=LINUX_OS_CONFIG_SINCE,
            sizes=_series(plan.admitted),
            capacity=plan.capacity.explain(),
            rate=line_rate_annotation(plan.line_rate_gbps),
            fastest=max(plan.admitted, key=lambda t: t.burst_gbps).name,
            profile=plan.profile.name,
            left=", ".join(plan.left_to_agent) or "nothing",
        )
    )
    typer.echo(to_yaml(objects, header), nl=False)
