# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""`wirespeed render ...`: Kubernetes manifests for teams that apply YAML (kubectl, Terraform) instead of Pulumi."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from wirespeed.cli._common import WholeHelp, fail, fail_all

if TYPE_CHECKING:
    from wirespeed.manifests.options import NodeTuningOptions
    from wirespeed.problems import Problem
    from wirespeed.profile import Outbound, Profile
    from wirespeed.profile.model import Probe

render_app = typer.Typer(
    rich_markup_mode=None,  # click's plain help: rich cut long flag names at 80 columns (--accept-unchecked-se…)
    cls=WholeHelp,
    help="Print Kubernetes manifests as YAML for `kubectl apply -f -`.",
    no_args_is_help=True,
)

HEADER = """\
wirespeed {version}: the node tuning agent. Apply with `kubectl apply -f -`.
The namespace is Pod Security "privileged" because the agent needs hostNetwork (it tunes the host's NICs),
hostPath /proc/sys/net (sysctls) and /sys read-only (NIC discovery), and the NET_ADMIN capability (rings, MTU);
it runs as uid 0 with every other capability dropped, a read-only root filesystem, and never privileged.
Each DaemonSet runs on the nodes labelled wirespeed.io/profile=<profile>."""

POLICY_HEADER = """
In the API it may patch Nodes and write Events in "default" only. The ValidatingAdmissionPolicy (Kubernetes 1.30+)
confines it to its own Node's wirespeed.io/tuning-status annotation and its own conditions; for an older cluster,
render with --no-admission-policy (and the agent's RBAC then lets it patch any Node)."""

NO_POLICY_HEADER = """
In the API it may patch Nodes and write Events in "default" only. Rendered WITHOUT the admission policy
(--no-admission-policy): nothing stops the agent's ServiceAccount from changing any Node's labels, taints or status.
Render without that flag once the cluster runs Kubernetes 1.30 or later."""


def _load(spec: str, index: int) -> tuple[str | Profile | None, list[str]]:
    """A built-in name stays a name; anything else must be a readable, valid profile file."""
    from wirespeed.manifests.options import builtin_names
    from wirespeed.profile import ProfileError, load_profile

    if spec in builtin_names():
        return spec, []
    from wirespeed.io_limits import SMALL_LIMIT, InputFileError, read_text

    path = Path(spec)
    try:
        return load_profile(read_text(path, SMALL_LIMIT, f"--profile[{index}]: {spec!r}", "profile JSON file")), []
    except InputFileError as exc:
        return None, [
            f"--profile[{index}]: {spec!r} is neither a built-in profile ({', '.join(builtin_names())}) "
            f"nor a readable profile file ({exc.reason})"
        ]
    except ProfileError as exc:
        return None, [f"--profile[{index}]: {spec}{pointer}: {message}" for pointer, message in exc.problems]


_OUTBOUND_FLAGS = {
    "kind": "--outbound",
    "allocated_ports_per_node": "--allocated-ports",
    "public_ips": "--public-ips",
    "pressure_percent": "--pressure-percent",
}


def _outbound(
    kind: str | None, allocated_ports: int | None, public_ips: int | None, pressure_percent: int | None
) -> tuple[Outbound | None, list[str]]:
    """The --outbound flags as a profile's outbound section (checked by the profile's own model), or every problem
    named by its flag."""
    from wirespeed.profile import ProfileError, validate_profile

    if kind is None:
        given = [f for f, v in (("--allocated-ports", allocated_ports), ("--public-ips", public_ips),
                                ("--pressure-percent", pressure_percent)) if v is not None]  # fmt: skip
        return None, [f"{flag}: only with --outbound" for flag in given]
    section: dict[str, object] = {"kind": kind}
    for name, value in (("allocated_ports_per_node", allocated_ports), ("public_ips", public_ips),
                        ("pressure_percent", pressure_percent)):  # fmt: skip
        if value is not None:
            section[name] = value
    try:
        profile = validate_profile({"name": "outbound", "outbound": section})
    except ProfileError as exc:
        said = []
        for pointer, message in exc.problems:
            flag = _OUTBOUND_FLAGS.get(pointer.rpartition("/")[2], "--outbound")
            required = message == "is required"
            said.append(f"{flag}: required with --outbound {kind}" if required else f"{flag}: {message}")
        return None, said
    return profile.outbound, []


class Output(StrEnum):
    yaml = "yaml"
    json = "json"


def _as_flag(problem: Problem) -> str:
    """A problem named by the command-line flag the user typed (``profiles[1]`` -> ``--profile[1]``)."""
    flags = ("profiles", "--profile"), ("image", "--image"), ("namespace", "--namespace"), ("line_rates", "--line-rate")
    for field, flag in flags:
        if problem.field.startswith(field):
            return str(replace(problem, field=flag + problem.field.removeprefix(field)))
    return str(problem)


# The --outbound, --line-rate and --probe-port options, typed once here so the command's signature stays a list of them.
OutboundKindOption = Annotated[
    str | None,
    typer.Option(
        "--outbound",
        help="How the nodes egress, for the agent's SNATPortPressure condition: azure-load-balancer (with "
        "--allocated-ports), azure-nat-gateway or aws-nat-gateway (with --public-ips). Set in every profile; a "
        "profile's own pressure_percent, exclude_cidrs and hold_seconds are kept.",
    ),
]
AllocatedPortsOption = Annotated[
    int | None, typer.Option(help="With --outbound azure-load-balancer: allocatedOutboundPorts per node.")
]
PublicIpsOption = Annotated[
    int | None,
    typer.Option(help="With a NAT gateway --outbound: its public IPs (AWS: of the gateway in the nodes' AZ)."),
]
LineRateOption = Annotated[
    list[str] | None,
    typer.Option(
        "--line-rate",
        help="PROFILE=GBPS: the fastest line rate of the nodes running PROFILE (a size's: `wirespeed catalog "
        "show SIZE`), written on its ConfigMap as wirespeed.io/line-rate-gbps so the ring and backlog gates hold "
        "it to that line rate instead of assuming one. Repeat per profile.",
    ),
]
ProbePortOption = Annotated[
    int | None,
    typer.Option(
        help="Run the agent's continuous probe (agent/README.md, 'Continuous probe') serving and dialing this host "
        "TCP port (the agent's default is 9809): sets the probe section's port in every profile (its own peers and "
        "streams kept) and declares the port on the DaemonSet, to allow between nodes (docs/node-tuning.md).",
    ),
]
PressureOption = Annotated[
    int | None, typer.Option(help="With --outbound: the SNATPortPressure threshold, % of one destination's ports.")
]


def _load_all(specs: list[str]) -> tuple[list[str | Profile], list[str]]:
    """Every --profile loaded (built-in names stay names), and every problem with them."""
    errors: list[str] = []
    loaded_specs: list[str | Profile] = []
    for index, spec in enumerate(specs):
        loaded, load_errors = _load(spec, index)
        errors += load_errors
        if loaded is not None:
            loaded_specs.append(loaded)
    return loaded_specs, errors


@render_app.command("node-tuning")
def render_node_tuning(
    profile: Annotated[
        list[str] | None,
        typer.Option(
            "--profile",
            help="Built-in profile name (throughput, balanced) or profile JSON file; repeat for one DaemonSet "
            "each. Default: throughput.",
        ),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option(
            help="Agent image with a tag or digest. Default: this release's (wirespeed.manifests.DEFAULT_IMAGE)."
        ),
    ] = None,
    namespace: Annotated[str, typer.Option(help="Namespace created for the agent.")] = "wirespeed-system",
    pod_monitor: Annotated[
        bool, typer.Option("--pod-monitor", help="Also render a Prometheus Operator PodMonitor.")
    ] = False,
    alerts: Annotated[
        bool,
        typer.Option(
            "--alerts",
            help="Also render the alert rules as a Prometheus Operator PrometheusRule (needs its CRD; without it "
            "use `wirespeed render alerts`).",
        ),
    ] = False,
    admission_policy: Annotated[
        bool,
        typer.Option(
            "--admission-policy/--no-admission-policy",
            help="Render the ValidatingAdmissionPolicy that lets the agent change only its own Node's annotation and "
            "conditions (Kubernetes 1.30+). --no-admission-policy only for older clusters, whose API server refuses "
            "it: the agent's RBAC then lets it patch any Node.",
        ),
    ] = True,
    output: Annotated[
        Output,
        typer.Option(
            help="yaml: documents for `kubectl apply -f -`; json: one array of the same objects, for Terraform's "
            "jsondecode() (modules/node-tuning's objects_json)."
        ),
    ] = Output.yaml,
    outbound: OutboundKindOption = None,
    allocated_ports: AllocatedPortsOption = None,
    public_ips: PublicIpsOption = None,
    pressure_percent: PressureOption = None,
    probe_port: ProbePortOption = None,
    line_rate: LineRateOption = None,
) -> None:
    """Print the tuning DaemonSet (one per profile), its Namespace, RBAC, admission policy and profile ConfigMaps."""
    from wirespeed import __version__
    from wirespeed.manifests import DEFAULT_IMAGE, NodeTuningOptions, node_tuning_objects, to_yaml

    rates, rate_errors = _line_rates(line_rate or [])
    options = NodeTuningOptions(
        image=DEFAULT_IMAGE if image is None else image,
        namespace=namespace,
        pod_monitor=pod_monitor,
        alerts=alerts,
        admission_policy=admission_policy,
        line_rates=rates,
    )
    section, outbound_errors = _outbound(outbound, allocated_ports, public_ips, pressure_percent)
    checked = _checked_profiles(profile, options, section, outbound_errors + rate_errors, probe_port)
    objects = node_tuning_objects(checked, options)
    if output is Output.json:
        import json

        typer.echo(json.dumps(objects, indent=2))
    else:
        header = HEADER.format(version=__version__) + (POLICY_HEADER if admission_policy else NO_POLICY_HEADER)
        typer.echo(to_yaml(objects, header), nl=False)


def _line_rates(flags: list[str]) -> tuple[dict[str, float], list[str]]:
    """--line-rate PROFILE=GBPS flags as NodeTuningOptions.line_rates, and every malformed one (the values' range and
    the profile names are checked with the rest)."""
    rates: dict[str, float] = {}
    errors: list[str] = []
    for index, flag in enumerate(flags):
        name, equals, value = flag.partition("=")
        try:
            gbps = float(value) if equals and name else None
        except ValueError:
            gbps = None
        if gbps is None:
            errors.append(f"--line-rate[{index}]: {flag!r} is not allowed; allowed: PROFILE=GBPS, e.g. throughput=100")
        elif name in rates:
            errors.append(f"--line-rate[{index}]: {flag!r} is not allowed; allowed: each profile once")
        else:
            rates[name] = gbps
    return rates, errors


def _probe(port: int | None) -> tuple[Probe | None, list[str]]:
    """--probe-port as a probe section's port (checked by the profile's own model), or its problem."""
    from pydantic import ValidationError

    from wirespeed.profile.model import Probe

    if port is None:
        return None, []
    try:
        return Probe.model_validate({"port": port}), []
    except ValidationError as exc:
        return None, [
            f"--probe-port: {port!r} is not allowed; allowed: a TCP port, {error['msg'].removeprefix('Value error, ')}"
            for error in exc.errors()
        ]


def _with_probe(profile: Profile, probe: Probe | None) -> Profile:
    """``profile`` whose probe section serves ``probe``'s port (its own peers and streams kept); unchanged when None."""
    if probe is None:
        return profile
    own = profile.probe or probe
    return profile.model_copy(update={"probe": own.model_copy(update={"port": probe.port})})


def _checked_profiles(
    flags: list[str] | None,
    options: NodeTuningOptions,
    section: Outbound | None,
    outbound_errors: list[str],
    probe_port: int | None = None,
) -> list[Profile]:
    """The --profile flags loaded and checked with the other flags (the --outbound and --probe-port ones' problems
    given), each with ``section`` when --outbound was given and a probe section on ``probe_port`` when --probe-port was;
    every problem printed and exit 2 if any."""
    from wirespeed.manifests import DEFAULT_PROFILES, check
    from wirespeed.manifests.options import check_options, check_probe_ports
    from wirespeed.profile import apply_outbound

    specs, errors = _load_all(flags or list(DEFAULT_PROFILES))
    loaded = not errors
    probe, probe_errors = _probe(probe_port)
    errors += outbound_errors + probe_errors
    profiles: list[Profile] = []
    if not loaded:  # a profile did not load: check the other flags, not the profiles that are left
        problems = check_options(options)
    else:
        profiles, problems = check(specs, options)
        profiles = [_with_probe(apply_outbound(p, section), probe) for p in profiles]
        if probe is not None and not problems:
            problems = [replace(p, field="--probe-port") for p in check_probe_ports(profiles)[:1]]
    errors += [_as_flag(problem) for problem in problems]
    if errors:
        fail_all(f"node tuning not rendered: {len(errors)} problem(s)", errors)
    return profiles


ALERTS_HEADER = """wirespeed {version}: alert rules for nodes the wirespeed agent tunes (Prometheus rule file).
Load with `rule_files:` in prometheus.yml; with the Prometheus Operator use `--prometheus-rule` instead.
Series: the agent's wirespeed_agent_* and node-exporter's default softnet, netdev and conntrack collectors."""


@render_app.command("alerts")
def render_alerts(
    prometheus_rule: Annotated[
        bool,
        typer.Option("--prometheus-rule", help="Render a Prometheus Operator PrometheusRule instead of a rule file."),
    ] = False,
    namespace: Annotated[str, typer.Option(help="Namespace of the PrometheusRule (the agent's).")] = "wirespeed-system",
) -> None:
    """Print the alert rules: ring overflow, backlog drops, time squeeze, ENA allowances, conntrack, tuning."""
    from wirespeed import __version__
    from wirespeed.manifests import monitoring, to_yaml
    from wirespeed.manifests.options import NodeTuningOptions, check_options

    if prometheus_rule:
        problems = check_options(NodeTuningOptions(namespace=namespace))
        if problems:
            fail(str(_as_flag(problems[0])))
        doc = monitoring.prometheus_rule(namespace)
    else:
        doc = monitoring.rules_file()
    typer.echo(to_yaml([doc], ALERTS_HEADER.format(version=__version__)), nl=False)


@render_app.command("dashboard")
def render_dashboard(
    uid: Annotated[
        str, typer.Option(help="Dashboard UID (letters, digits, '-', '_'; at most 40): one per Grafana.")
    ] = "wirespeed-node-network",
) -> None:
    """Print the Grafana dashboard JSON (import it, or load it with a dashboard provisioner)."""
    import json

    from wirespeed.manifests.monitoring import check_dashboard_uid, dashboard

    problem = check_dashboard_uid(uid)
    if problem:
        fail(f"--uid: {problem}")
    typer.echo(json.dumps(dashboard(uid), indent=2, sort_keys=True))
