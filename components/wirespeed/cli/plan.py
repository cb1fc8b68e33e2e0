"""`wirespeed plan`: a Pulumi program planned offline under the SDK's mocks, or a node pool from a workload file.

`wirespeed plan DIR` runs the Pulumi project in DIR; with no DIR and no --workload it plans the project in the
current directory when there is a Pulumi.yaml, else the bundled example workload, and says which on the first
line. Pulumi is imported only on the program path, inside wirespeed.program: `wirespeed size` stays light.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from wirespeed.cli._common import JsonFlag, emit, fail, fail_all, flags_given, refuse_unused
from wirespeed.cli.check import load_config
from wirespeed.errors import UserError

# wirespeed's choice: the largest example plans in about 10 s on 2 cores; 5 minutes is ample, and a stuck CI job
# fails long before the runner's own timeout.
PROGRAM_TIMEOUT_S = 300


DetailsFlag = Annotated[
    bool,
    typer.Option(
        "--details",
        help="Also print the EKS user data scripts and the tuning-path table (always in --json).",
    ),
]
# --details where it would change nothing: refused, not ignored.
NO_DETAILS = "shows a Pulumi program's user data and tuning paths; {planned} has neither, so leave {{it}} out"


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)


def plan(
    ctx: typer.Context,
    directory: Annotated[
        Path | None,
        typer.Argument(
            help="A Pulumi project (Pulumi.yaml, runtime python). Default: the current directory if it has a "
            "Pulumi.yaml, else the bundled example workload.",
            show_default=False,
        ),
    ] = None,
    stack: Annotated[
        str | None, typer.Option("--stack", help="Read Pulumi.<NAME>.yaml for config (default: Pulumi.yaml defaults).")
    ] = None,
    workload: Annotated[
        Path | None,
        typer.Option(help="Plan a node pool from a workload JSON instead (see examples/workloads/)."),
    ] = None,
    compare: Annotated[
        Path | None,
        typer.Option(
            "--compare",
            help="A previous `wirespeed plan --json` of the same project: mark pools whose create-only inputs "
            "changed (those changes replace the pool) and list every outbound setting and SNAT alert threshold that "
            "moved and every outbound IP added or deleted.",
        ),
    ] = None,
    policy_config: Annotated[
        Path | None,
        typer.Option(
            "--policy-config",
            help="Policy config for the verdicts of wirespeed's rules, as `wirespeed check --config` and "
            "`pulumi preview --policy-pack-config` take it.",
        ),
    ] = None,
    timeout: Annotated[
        int,
        typer.Option(
            "--timeout",
            min=1,
            max=86_400,
            help="Seconds the Pulumi program may run before it is stopped and the plan fails (exit 2).",
        ),
    ] = PROGRAM_TIMEOUT_S,
    details: DetailsFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Plan offline: run a Pulumi program under mocks (resources, sizing, what would replace a pool), or size a
    node pool from a workload file. Exit 2 on bad input, a failing program or an outbound that does not fit."""
    if workload is not None:
        if directory is not None or stack is not None or compare is not None:
            fail("--workload plans a workload file: give it alone, without DIR, --stack or --compare")
        if policy_config is not None:
            fail("--policy-config checks the resources a Pulumi program registers: give DIR, not --workload")
        _refuse_timeout(ctx, "--workload runs none, so leave {it} out", "a workload file")
        _plan_workload(workload, as_json, announce=None)
        return
    announce = None
    if directory is None:
        if (Path.cwd() / "Pulumi.yaml").is_file():
            directory = Path(".")
            announce = "Planning the Pulumi project in the current directory (Pulumi.yaml found)."
        else:
            if stack is not None or compare is not None:
                fail("--stack and --compare need a Pulumi project: no Pulumi.yaml in the current directory")
            if policy_config is not None:
                fail("--policy-config needs a Pulumi project: no Pulumi.yaml in the current directory")
            why = "no Pulumi.yaml in the current directory, so none runs: give DIR or leave {it} out"
            _refuse_timeout(ctx, why, "the bundled example workload")
            _plan_workload(
                None,
                as_json,
                announce="No Pulumi.yaml here: planning the bundled example workload "
                "(give DIR for a Pulumi project, --workload FILE for your own workload).",
            )
            return
    if as_json:
        _refuse_details(ctx, "--json always carries the user data and tuning paths: leave {it} out")
    # Read before anything is printed, so a bad config is the only line of output.
    config = load_config(policy_config, "--policy-config")
    _plan_program(directory, stack, compare, config, as_json, announce, timeout, details)


def _refuse_timeout(ctx: typer.Context, why: str, planned: str) -> None:
    """--timeout and --details where no Pulumi program runs (``planned`` is what is planned instead): refused, not
    ignored."""
    refuse_unused(flags_given(ctx, "timeout"), "bounds a Pulumi program's run; " + why)
    _refuse_details(ctx, NO_DETAILS.format(planned=planned))


def _refuse_details(ctx: typer.Context, why: str) -> None:
    refuse_unused(flags_given(ctx, "details"), why)


def _width() -> int:
    """The terminal's width on a terminal; else wirespeed's plain width (a log, a file, a pull request comment)."""
    import shutil
    import sys

    from wirespeed.program.text import PLAIN_WIDTH

    return shutil.get_terminal_size((PLAIN_WIDTH, 24)).columns if sys.stdout.isatty() else PLAIN_WIDTH


def _announce(line: str, as_json: bool) -> None:
    # With --json the document must stay the only thing on stdout.
    typer.echo(line, err=as_json)


def _plan_workload(path: Path | None, as_json: bool, announce: str | None) -> None:
    from wirespeed.workload import WorkloadError, load_workload
    from wirespeed.workload import plan as plan_workload

    source = "bundled example" if path is None else str(path)
    # The sizing library names its own parameters; a workload file's user knows them by their JSON path.
    names = {
        "workload": "--workload",
        "connections_per_second": f"{source}: outbound.connections_per_second",
        "hold_seconds": f"{source}: outbound.hold_seconds",
        "headroom": f"{source}: outbound.headroom",
        "connections": f"{source}: outbound.nat_gateway_connections",
        "driver": f"{source}: nic.driver",
        "line_rate_gbps": f"{source}: nic.host_line_rate_gbps",
        "name": f"{source}: instance_type",
        "pools": f"{source}: node_pools",
        "outbound IPs": f"{source}: outbound IPs for node_pools x outbound.connections_per_second",
        "ports per node": f"{source}: ports per node for outbound.connections_per_second x hold_seconds x headroom",
    }
    try:
        result = plan_workload(load_workload(path))
    except WorkloadError as exc:
        # Every problem of the file, one line each under one heading.
        if len(exc.problems) > 1:
            fail_all(f"{exc.source}: not a valid workload: {len(exc.problems)} problems", exc.problems)
        fail(str(exc))
    except UserError as exc:
        message = exc.message_for(names)
        # Reading errors name --workload and the path; the rest are about its content, so name the file first.
        fail(message if exc.field == "workload" or message.startswith(source) else f"{source}: {message}")
    if announce:
        _announce(announce, as_json)
    emit(result, as_json)


def _plan_program(
    directory: Path,
    stack: str | None,
    compare: Path | None,
    config: Any,
    as_json: bool,
    announce: str | None,
    timeout: int,
    details: bool,
) -> None:
    from wirespeed.check.registered import verdicts
    from wirespeed.program import ProgramError
    from wirespeed.program.compare import CompareError, compare_with
    from wirespeed.program.isolated import run_program_isolated
    from wirespeed.program.review import review

    try:
        previous = None if compare is None else _read_previous(compare)  # a bad file fails before the program runs
        # In a child process: the program can neither end `plan` itself (sys.exit, os._exit) nor hold it for ever.
        planned = run_program_isolated(directory, stack, timeout)
        result = review(planned)
        if previous is not None:
            result = compare_with(result, previous)
    except (ProgramError, CompareError) as exc:
        message = str(getattr(exc, "message", exc))
        # Every problem the program listed under one heading, so a reviewer fixes them in one go.
        fail_all(message, getattr(exc, "problems", []))
    # The same rules the policy pack runs in `pulumi preview --policy-pack`, on what the program registered.
    found = verdicts(planned.resources, config)
    if announce:
        _announce(announce, as_json)
    if as_json:
        typer.echo(json.dumps({**result.to_json(), "policy": _policy_json(found)}, indent=2, sort_keys=False))
    else:
        typer.echo(result.explain(str(directory), found, details=details, width=_width()))
    not_fitting = [o for o in result.outbound if o.lb_plan is not None and not o.lb_plan.feasible]
    mandatory = sorted((v for v in found if v.enforcement == "mandatory"), key=lambda v: (v.rule_id, v.resource_urn))
    if mandatory and not not_fitting:
        broken = ", ".join(dict.fromkeys(f"{v.rule_id} on {v.resource_name}" for v in mandatory))
        fail(
            f"{directory}: policy: {len(mandatory)} mandatory violation(s) of wirespeed's rules ({broken}); the "
            "plan above says what to set, or --policy-config sets other thresholds and levels"
        )
    if not_fitting:
        fail(
            "; ".join(
                f"cluster {o.cluster}: {o.lb_plan.ports_required:,} SNAT ports required but "
                f"{o.lb_plan.ports_available:,} available{_fix(o.lb_plan)}"
                for o in not_fitting
                if o.lb_plan is not None
            )
        )


def _fix(plan: Any) -> str:
    """How a load balancer plan that does not fit would (the numbers aks-snat-capacity gives in `check`)."""
    fix = plan.fix()
    return "" if fix is None else f"; to fit, {fix.aks_text()}"


def _read_previous(path: Path) -> dict[str, Any]:
    from wirespeed.io_limits import PLAN_JSON_LIMIT, InputFileError, read_text
    from wirespeed.program.compare import CompareError

    try:
        text = read_text(path, PLAN_JSON_LIMIT, f"--compare {path}", "`wirespeed plan --json` file")
    except InputFileError as exc:
        raise CompareError(str(exc)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CompareError(f"--compare: {path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except (ValueError, RecursionError):  # numbers past Python's digit limit, nesting past the recursion limit
        raise CompareError(
            f"--compare: {path}: not a `wirespeed plan --json` document (too deep or too large)"
        ) from None
    if not isinstance(data, dict):
        raise CompareError(f"--compare: {path}: not a `wirespeed plan --json` document")
    return data


def _policy_json(found: list[Any]) -> dict[str, Any]:
    return {
        "passed": not any(v.enforcement == "mandatory" for v in found),
        "accepted": sum(1 for v in found if v.accepted),
        "violations": [v.to_json() for v in found],
    }
