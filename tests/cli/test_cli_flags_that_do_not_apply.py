"""A flag that does not apply is refused, never silently left out of the answer (issue 31, item 7).

`size mtu --driver mana --ena-express` answered for MANA as if the flag were not there. Every flag of every `size`
subcommand (and `plan`'s) that applies only with another flag, driver or mode is listed here with the one line it
now gets, table-driven; the flags that always apply are listed too, and a test holds the two lists to the commands'
own options, so a flag added later must be put in one or the other.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from clirun import invoke, wirespeed
from conftest import ROOT
from wirespeed.cli import app

MEASURED = "only with --from-prometheus (how the measured peak is read from Prometheus)"
MEASURED_FIX = "or size from the measured peak with --from-prometheus URL"
TOKEN = "/run/secrets/prometheus-token"  # never read: refused before anything is opened
WORKLOAD = str(ROOT / "examples" / "workloads" / "checkout-api.json")


# --plot of a NAT gateway draws the --by-workload answer.
PLOT_ALONE = (
    "error: --plot p.png: only with --from-prometheus URL --by-workload (it draws the top workloads over the window); "
    "add them, or leave --plot out"
)


def measured(flags: str, them: bool = False) -> str:
    return f"error: {flags}: {MEASURED}; leave {'them' if them else 'it'} out, {MEASURED_FIX}"


def ena_express(driver: str, azure: bool = True) -> str:
    where = " (an Azure NIC)" if azure else ""
    return (
        f"error: --ena-express: does not apply to driver {driver!r}{where}: ENA Express (SRD) is an AWS feature of "
        "the ena driver; leave it out, or give driver ena"
    )


# (command, the flags that do not apply in this case, the whole line it gets)
REFUSED = [
    # size mtu: ENA Express is the ena driver's; the driver is checked whatever the path.
    pytest.param(["size", "mtu", "--driver", "mana", "--ena-express"], ["--ena-express"], ena_express("mana"),
                 id="mtu-mana-ena-express"),
    pytest.param(["size", "mtu", "--driver", "mlx5_core", "--ena-express"], ["--ena-express"],
                 ena_express("mlx5_core"), id="mtu-mlx5-ena-express"),
    pytest.param(["size", "mtu", "--driver", "mlx4_en", "--ena-express", "--crosses-gateway"], ["--ena-express"],
                 ena_express("mlx4_en"), id="mtu-mlx4-ena-express-gateway"),
    pytest.param(["size", "mtu", "--driver", "virtio", "--crosses-gateway"], ["--crosses-gateway"],
                 "error: --driver: 'virtio' is not allowed: one of ena, mana, mlx4_en, mlx5_core",
                 id="mtu-unknown-driver-through-a-gateway"),
    # size azure-lb: the workload's flags only with --connections-per-second, Prometheus's only with --from-prometheus.
    pytest.param(["size", "azure-lb", "--pool", "10", "--ports", "1024", "--hold-seconds", "60"], ["--hold-seconds"],
                 "error: --hold-seconds 60: applies only to --connections-per-second; with --ports 1024 it would be "
                 "ignored, so leave it out", id="azure-lb-hold-seconds-with-ports"),
    pytest.param(["size", "azure-lb", "--pool", "10", "--ports", "1024", "--headroom", "25%"], ["--headroom"],
                 "error: --headroom 25%: applies only to --connections-per-second; with --ports 1024 it would be "
                 "ignored, so leave it out", id="azure-lb-headroom-with-ports"),
    pytest.param(["size", "azure-lb", "--pool", "10", "--from-prometheus", "http://127.0.0.1:9", "--hold-seconds",
                  "60"], ["--hold-seconds"],
                 "error: --hold-seconds 60: not allowed with --from-prometheus, which sizes from the measured peak "
                 "(the agent counts held ports itself); give one demand", id="azure-lb-hold-seconds-measured"),
    pytest.param(["size", "azure-lb", "--pool", "10", "--ports", "1024", "--window", "7d"], ["--window"],
                 measured("--window 7d"), id="azure-lb-window"),
    pytest.param(["size", "azure-lb", "--pool", "10", "--connections-per-second", "5", "--timeout", "5",
                  "--selector", 'cluster="prod"', "--bearer-token-file", TOKEN],
                 ["--timeout", "--selector", "--bearer-token-file"],
                 measured(f'--timeout 5, --selector cluster="prod", --bearer-token-file {TOKEN}', them=True),
                 id="azure-lb-prometheus-flags-at-once"),
    pytest.param(["size", "azure-lb", "--pool", "10", "--ports", "1024", "--by-workload"], ["--by-workload"],
                 measured("--by-workload"), id="azure-lb-by-workload"),
    # size azure-natgw
    pytest.param(["size", "azure-natgw", "--flows", "1000", "--by-workload"], ["--by-workload"],
                 measured("--by-workload"), id="azure-natgw-by-workload"),
    pytest.param(["size", "azure-natgw", "--flows", "1000", "--plot", "p.png"], ["--plot"], PLOT_ALONE,
                 id="azure-natgw-plot"),
    pytest.param(["size", "azure-natgw", "--flows", "1000", "--headroom", "25%"], ["--headroom"],
                 "error: --headroom 25%: only with --from-prometheus (--flows is the demand as given)",
                 id="azure-natgw-headroom"),
    pytest.param(["size", "azure-natgw", "--flows", "1000", "--window", "36h", "--step", "1m"], ["--window", "--step"],
                 measured("--window 36h, --step 1m", them=True), id="azure-natgw-window-step"),
    pytest.param(["size", "azure-natgw", "--flows", "1000", "--timeout", "30", "--selector", 'pool="a"',
                  "--bearer-token-file", TOKEN], ["--timeout", "--selector", "--bearer-token-file"],
                 measured(f'--timeout 30, --selector pool="a", --bearer-token-file {TOKEN}', them=True),
                 id="azure-natgw-prometheus-flags"),
    # size aws-natgw: --azs spreads --connections; nothing to spread with --az or a measured peak.
    pytest.param(["size", "aws-natgw", "--az", "eu-west-1a=1000", "--azs", "2"], ["--azs"],
                 "error: --azs 2: only with --connections (the AZs it is spread over); each AZ is named by --az, so "
                 "leave it out", id="aws-natgw-azs-with-az"),
    pytest.param(["size", "aws-natgw", "--from-prometheus", "http://127.0.0.1:9", "--azs", "3"], ["--azs"],
                 "error: --azs 3: only with --connections (the AZs it is spread over); the measured AZs are the AZs, "
                 "so leave it out", id="aws-natgw-azs-measured"),
    pytest.param(["size", "aws-natgw", "--connections", "1000", "--headroom", "25%"], ["--headroom"],
                 "error: --headroom 25%: only with --from-prometheus (--connections and --az are the demand as given)",
                 id="aws-natgw-headroom"),
    pytest.param(["size", "aws-natgw", "--connections", "1000", "--ip-mode", "automatic"], ["--ip-mode"],
                 "error: --ip-mode: 'automatic' is not allowed: 'manual' with mode 'zonal' (only regional gateways "
                 "add IPs)", id="aws-natgw-automatic-ips-zonal"),
    pytest.param(["size", "aws-natgw", "--connections", "1000", "--window", "7d", "--step", "30s", "--timeout", "9",
                  "--selector", 'az="a"', "--bearer-token-file", TOKEN],
                 ["--window", "--step", "--timeout", "--selector", "--bearer-token-file"],
                 measured(f'--window 7d, --timeout 9, --selector az="a", --step 30s, --bearer-token-file {TOKEN}',
                          them=True), id="aws-natgw-prometheus-flags"),
    pytest.param(["size", "aws-natgw", "--connections", "1000", "--by-workload"], ["--by-workload"],
                 measured("--by-workload"), id="aws-natgw-by-workload"),
    pytest.param(["size", "aws-natgw", "--from-prometheus", "http://127.0.0.1:9", "--plot", "p.png"], ["--plot"],
                 PLOT_ALONE, id="aws-natgw-plot-without-by-workload"),
    # plan: --timeout bounds a Pulumi program; a workload file runs none.
    pytest.param(["plan", "--workload", WORKLOAD, "--timeout", "5"], ["--timeout"],
                 "error: --timeout 5: bounds a Pulumi program's run; --workload runs none, so leave it out",
                 id="plan-workload-timeout"),
    # plan: --details shows a program's user data and tuning paths; a workload file has neither, --json has both.
    pytest.param(["plan", "--workload", WORKLOAD, "--details"], ["--details"],
                 "error: --details: shows a Pulumi program's user data and tuning paths; a workload file has neither, "
                 "so leave it out", id="plan-workload-details"),
    pytest.param(["plan", "tests/fixtures/programs/aks-basic", "--json", "--details"], ["--details"],
                 "error: --details: --json always carries the user data and tuning paths: leave it out",
                 id="plan-json-details"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "flags", "line"), REFUSED)
def test_a_flag_that_does_not_apply_is_one_error_line(args, flags, line):
    out = invoke(*args)
    assert (out.returncode, out.stdout, out.stderr) == (2, "", line + "\n")


def test_plan_without_a_project_refuses_timeout(tmp_path: Path):
    """No Pulumi.yaml in the current directory: `plan` would plan the bundled example workload and run no program."""
    out = wirespeed("plan", "--timeout", "5", cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (
        2,
        "",
        "error: --timeout 5: bounds a Pulumi program's run; no Pulumi.yaml in the current directory, so none runs: "
        "give DIR or leave it out\n",
    )


# The same flags where they do apply: answered, each changing or bounding the answer.
ACCEPTED = [
    pytest.param(["size", "mtu", "--driver", "ena", "--ena-express"], "MTU 8,900 for ena", id="mtu-ena-express"),
    # Through a gateway the path's 1,500 is the answer whatever SRD carries; the flag is the ena driver's, so valid.
    pytest.param(["size", "mtu", "--driver", "ena", "--ena-express", "--crosses-gateway"], "MTU 1,500 for ena",
                 id="mtu-ena-express-gateway"),
    pytest.param(["size", "aws-natgw", "--connections", "1000", "--azs", "2"], "2 NAT gateway(s)", id="aws-azs"),
    # A zonal gateway's IPs are always the ones you give: --ip-mode manual says what zonal does, so it is honoured.
    pytest.param(["size", "aws-natgw", "--connections", "1000", "--ip-mode", "manual"], "Zonal", id="aws-zonal-manual"),
    pytest.param(["size", "azure-lb", "--pool", "10", "--connections-per-second", "5", "--hold-seconds", "60",
                  "--headroom", "25%"], "Ports per node", id="azure-lb-workload"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "said"), ACCEPTED)
def test_the_same_flags_where_they_apply_are_answered(args, said):
    out = invoke(*args)
    assert (out.returncode, out.stderr) == (0, ""), out.stderr
    assert said in out.stdout


# Flags that apply in every use of their command (the answer depends on them, or they only shape the output).
ALWAYS_APPLY = {
    "size azure-lb": {"--pool", "--ports", "--connections-per-second", "--outbound-ips", "--json", "--plot",
                      "--from-prometheus"},
    "size azure-natgw": {"--flows", "--sku", "--json", "--from-prometheus"},
    "size aws-natgw": {"--connections", "--az", "--mode", "--json", "--from-prometheus"},
    "size rings": {"--driver", "--line-rate-gbps", "--stall-ms", "--packet-bytes", "--queues", "--json"},
    "size backlog": {"--line-rate-gbps", "--stall-ms", "--packet-bytes", "--cloud", "--json"},
    "size mtu": {"--driver", "--json"},
    "plan": {"--workload", "--json"},
}  # fmt: skip
# Flags that apply only with another, or not at all for some input, not in REFUSED above because their refusal is
# tested elsewhere (tests/cli/test_cli_size.py, tests/program/test_plan_program_cli.py) or covered above by another
# case.
REFUSED_ELSEWHERE = {
    "size aws-natgw": {"--ip-mode"},  # manual is honoured by zonal; automatic refused (aws-natgw-automatic-ips-zonal)
    "size mtu": {"--crosses-gateway"},  # applies to every known driver; an unknown one is refused (case above)
    # refused with --workload: tests/program/test_plan_program_cli.py
    "plan": {"--stack", "--compare", "--policy-config"},
}


def _options(command: str) -> set[str]:
    group = typer.main.get_command(app)
    found = group
    for word in command.split():
        found = found.commands[word]  # type: ignore[attr-defined]
    return {p.opts[0] for p in found.params if p.opts and p.opts[0].startswith("--") and p.name != "help"}


@pytest.mark.parametrize("command", sorted(ALWAYS_APPLY))
def test_every_flag_is_either_always_applied_or_refused_where_it_does_not_apply(command):
    refused: set[str] = set()
    for case in REFUSED:
        args, flags, _ = case.values
        if " ".join(args[: len(command.split())]) == command:
            refused |= set(flags)
    refused |= REFUSED_ELSEWHERE.get(command, set())
    assert ALWAYS_APPLY[command].isdisjoint(refused)
    assert ALWAYS_APPLY[command] | refused == _options(command)
