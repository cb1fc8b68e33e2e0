"""`wirespeed render ...`: Kubernetes manifests for teams that apply YAML (kubectl, Terraform) instead of Pulumi."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from wirespeed.cli._common import fail

if TYPE_CHECKING:
    from wirespeed.manifests.options import NodeTuningOptions
    from wirespeed.problems import Problem
    from wirespeed.profile import Profile

render_app = typer.Typer(help="Print Kubernetes manifests as YAML for `kubectl apply -f -`.", no_args_is_help=True)

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


class Output(StrEnum):
    yaml = "yaml"
    json = "json"


def _as_flag(problem: Problem) -> str:
    """A problem named by the command-line flag the user typed (``profiles[1]`` -> ``--profile[1]``)."""
    for field, flag in (("profiles", "--profile"), ("image", "--image"), ("namespace", "--namespace")):
        if problem.field.startswith(field):
            return str(replace(problem, field=flag + problem.field.removeprefix(field)))
    return str(problem)


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
) -> None:
    """Print the tuning DaemonSet (one per profile), its Namespace, RBAC, admission policy and profile ConfigMaps."""
    from wirespeed import __version__
    from wirespeed.manifests import DEFAULT_IMAGE, NodeTuningOptions, node_tuning_objects, to_yaml

    options = NodeTuningOptions(
        image=DEFAULT_IMAGE if image is None else image,
        namespace=namespace,
        pod_monitor=pod_monitor,
        alerts=alerts,
        admission_policy=admission_policy,
    )
    objects = node_tuning_objects(_checked_profiles(profile, options), options)
    if output is Output.json:
        import json

        typer.echo(json.dumps(objects, indent=2))
    else:
        header = HEADER.format(version=__version__) + (POLICY_HEADER if admission_policy else NO_POLICY_HEADER)
        typer.echo(to_yaml(objects, header), nl=False)


def _checked_profiles(flags: list[str] | None, options: NodeTuningOptions) -> list[Profile]:
    """The --profile flags loaded and checked with the other flags; every problem printed and exit 2 if any."""
    from wirespeed.manifests import DEFAULT_PROFILES, check
    from wirespeed.manifests.options import check_options

    errors: list[str] = []
    specs: list[str | Profile] = []
    for index, spec in enumerate(flags or list(DEFAULT_PROFILES)):
        loaded, load_errors = _load(spec, index)
        errors += load_errors
        if loaded is not None:
            specs.append(loaded)
    profiles: list[Profile] = []
    if errors:  # a profile did not load: check the other flags, not the profiles that are left
        problems = check_options(options)
    else:
        profiles, problems = check(specs, options)
    errors += [_as_flag(problem) for problem in problems]
    if errors:
        for line in errors[:-1]:
            typer.echo(f"error: {line}", err=True)
        fail(errors[-1])
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
