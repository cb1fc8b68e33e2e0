"""`wirespeed size aws-natgw --from-prometheus`: each AZ's NAT gateway IPs from its busiest destination summed over the
AZ's nodes, against a real Prometheus server (Debian's prometheus, tests/prometheus_lab.py) scraping stand-ins for
four EKS nodes' agents; and the pure per-AZ plan (wirespeed.sizing.measured) on its own.

The lab's fleet (README, "Size from what your fleet does"), each phase held for at least five scrapes:

| phase | eks-1 (us-east-1a) | eks-2 (us-east-1a) | eks-3 (us-east-1b) | eks-old (us-east-1c) |
|---|---|---|---|---|
| 0 quiet | A 1,000 | A 800 | C 500 | peak gauge 4,000 only |
| 1 peak | A 40,000, B 9,000, other 3,000 | A 30,000, B 12,000 | A 20,000, C 26,000 | peak gauge 9,000 only |
| 2 after | A 2,000 | A 1,500 | C 1,000 | peak gauge 9,000 only |

eks-old exports the peak gauge but no per-destination series: its AZ is sized from the conservative fallback.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from datetime import datetime

import pytest

from clirun import wirespeed
from prometheus_lab import Lab, NodeState, prometheus_lab
from wirespeed.sizing import InfeasibleError, SizingError
from wirespeed.sizing.measured import AwsZoneDemand, plan_aws_nat_measured

A, B, C = "52.1.2.3:443/tcp", "52.9.9.9:443/tcp", "52.7.7.7:443/tcp"
NODES = {"eks-1": "us-east-1a", "eks-2": "us-east-1a", "eks-3": "us-east-1b", "eks-old": "us-east-1c"}
STEP = "1s"  # the lab scrapes every 500 ms and holds each phase for 5 scrapes: a 1 s step sees every phase
KIND = "aws-nat-gateway"


def _node(in_use: dict[str, int], peak: int) -> NodeState:
    return NodeState(in_use, peak=peak, allocated=55_000, kind=KIND)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with prometheus_lab(tmp_path_factory.mktemp("prometheus"), NODES) as running:
        running.phase(
            {
                "eks-1": _node({A: 1_000}, 1_000),
                "eks-2": _node({A: 800}, 800),
                "eks-3": _node({C: 500}, 500),
                "eks-old": _node({}, 4_000),
            }
        )
        running.phase(
            {
                "eks-1": _node({A: 40_000, B: 9_000, "other": 3_000}, 40_000),
                "eks-2": _node({A: 30_000, B: 12_000}, 30_000),
                "eks-3": _node({A: 20_000, C: 26_000}, 26_000),
                "eks-old": _node({}, 9_000),
            }
        )
        running.phase(
            {
                "eks-1": _node({A: 2_000}, 40_000),
                "eks-2": _node({A: 1_500}, 30_000),
                "eks-3": _node({C: 1_000}, 26_000),
                "eks-old": _node({}, 9_000),
            }
        )
        yield running


def _size(*args: str) -> tuple[int, str, str]:
    out = wirespeed("size", "aws-natgw", *args)
    return out.returncode, out.stdout, out.stderr


def _in_peak_phase(lab: Lab, text: str) -> bool:
    stamp = datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    return lab.phase_times[1] - 0.1 <= stamp <= lab.phase_times[2] + 1


def test_each_az_is_sized_from_its_busiest_destination_summed_over_its_nodes(lab: Lab) -> None:
    code, out, err = _size("--from-prometheus", lab.url, "--step", STEP, "--json")
    assert code == 0, err
    data = json.loads(out)
    zones = {z["availability_zone"]: z for z in data["zones"]}
    # us-east-1a: A is 40,000 + 30,000 at the peak (B only 21,000): 70,000 + 25% = 87,500 / 55,000 -> 2 IPs.
    a = zones["us-east-1a"]
    assert (a["measured"]["connections"], a["measured"]["busiest_destination"]) == (70_000, A)
    assert (a["demand"], a["ips"], a["capacity"], a["per_ip"]) == (87_500, 2, 110_000, 55_000)
    # us-east-1b: its own busiest destination is C (26,000), not the fleet's A: 32,500 -> 1 IP.
    b = zones["us-east-1b"]
    assert (b["measured"]["connections"], b["measured"]["busiest_destination"], b["ips"]) == (26_000, C, 1)
    # us-east-1c: no per-destination series, so every node's own peak summed (9,000 + 25% = 11,250).
    c = zones["us-east-1c"]
    assert (c["measured"]["connections"], c["measured"]["busiest_destination"], c["measured"]["fallback"]) == (
        9_000,
        None,
        True,
    )
    assert (c["demand"], c["ips"]) == (11_250, 1)
    assert data["total_ips"] == 4
    prometheus = data["prometheus"]
    assert _in_peak_phase(lab, prometheus["zones"]["us-east-1a"]["time"])
    assert _in_peak_phase(lab, prometheus["zones"]["us-east-1b"]["time"])
    assert prometheus["queries"][0] == (
        'max_over_time(sum by (zone, destination) (wirespeed_agent_snat_ports_in_use{destination!="other"})[7d:1s])'
    )
    assert "sum by (zone) (max_over_time(wirespeed_agent_snat_ports_peak[7d]))" in prometheus["queries"]
    assert a["measured"]["source"].startswith(
        f"prometheus {lab.url}, max of sum by (zone, destination) of wirespeed_agent_snat_ports_in_use over 7d to "
    )
    assert a["measured"]["source"].endswith(
        f": 70,000 to {A} in us-east-1a at {prometheus['zones']['us-east-1a']['time']}"
    )


def test_prose_names_each_az_s_peak_plan_and_what_to_pin(lab: Lab) -> None:
    code, out, err = _size("--from-prometheus", lab.url, "--step", STEP, "--headroom", "10%")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"Measured by prometheus {lab.url} over 7d to ")
    assert any(
        line.startswith(f"Peak in us-east-1a: 70,000 connections to {A} in zone us-east-1a at ") for line in lines
    )
    assert (
        "us-east-1a: a measured peak of 70,000 connections to 52.1.2.3:443/tcp + 10% headroom = 77,000 / 55,000 per "
        "IP to one destination -> 2 IP(s), 110,000 capacity (33,000 spare)." in lines
    )
    assert any(
        line.startswith("Peak in us-east-1c: no per-destination series; every node's own peak") for line in lines
    )
    pin = next(line for line in lines if line.startswith("Pin it: "))
    assert pin.startswith(
        "Pin it: NatEgressArgs(peak_connections={'us-east-1a': 77000, 'us-east-1b': 28600, 'us-east-1c': 9900}, "
    )
    assert "  pulumi config set wirespeed:natPeakConnections 77000" in lines
    # The busiest AZ's provenance, pinned beside its figure and given to NatEgressArgs.
    (pinned,) = [line for line in lines if line.startswith("  pulumi config set wirespeed:measuredPeakSource ")]
    source = shlex.split(pinned)[-1]
    assert source.startswith(
        f"prometheus {lab.url}, max of sum by (zone, destination) of wirespeed_agent_snat_ports_in_use over 7d to "
    )
    assert re.search(f": 70,000 to {re.escape(A)} in us-east-1a at [0-9T:.-]+Z$", source), source
    assert f"measured_from={source!r})" in pin


def test_the_measured_plan_names_its_gateways_and_whether_the_default_quotas_suffice(lab: Lab) -> None:
    """As `size aws-natgw` without --from-prometheus: one zonal gateway per measured AZ, and the quotas their Elastic
    IPs count against (here 2, 1 and 1 IPs: within both defaults)."""
    code, out, err = _size("--from-prometheus", lab.url, "--step", STEP, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["cloud"], data["mode"], data["ip_mode"], data["gateways"], data["max_ips_per_az"]) == (
        "aws",
        "zonal",
        "manual",
        3,
        8,
    )
    assert [(q["quota_code"], q["required"], q["default_suffices"]) for q in data["quotas"]] == [
        ("L-5F53652F", 2, True),
        ("L-0263D0A3", 4, True),
    ]
    assert (data["default_quotas_suffice"], data["warnings"], data["total_ips"]) == (True, [], 4)


def test_a_measured_peak_beyond_the_default_quotas_names_the_quotas_to_raise(lab: Lab) -> None:
    # x4: us-east-1a 280,000 -> 6 IPs, us-east-1b 104,000 -> 2, us-east-1c 36,000 -> 1: 9 Elastic IPs in all.
    code, out, err = _size("--from-prometheus", lab.url, "--step", STEP, "--headroom", "300%")
    assert code == 0, err
    lines = out.splitlines()
    assert "Zonal: 3 NAT gateway(s), one per AZ, each with 1 primary + up to 7 secondary IPs." in lines
    assert (
        "Quota 'Elastic IP addresses per public NAT gateway' (Service Quotas: vpc L-5F53652F): 6 needed, default 2: "
        "raise it first." in lines
    )
    assert (
        "Warning: 9 Elastic IPs in all exceed the default quota of 5 Elastic IPs per Region; raise 'Elastic IP "
        "addresses per Region' (Service Quotas: ec2 L-0263D0A3) to at least 9 (plus the Elastic IPs the Region "
        "already holds) first." in lines
    )
    assert (
        "  Warning: 6 IPs exceed the default quota of 2 Elastic IPs per NAT gateway; raise 'Elastic IP addresses per "
        "public NAT gateway' (Service Quotas: vpc L-5F53652F) to 6 first." in lines
    )


def test_regional_automatic_from_measured_peaks_is_one_gateway_with_no_quota_to_raise(lab: Lab) -> None:
    code, out, err = _size(
        "--from-prometheus", lab.url, "--step", STEP, "--mode", "regional", "--ip-mode", "automatic", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert (data["mode"], data["ip_mode"], data["gateways"], data["max_ips_per_az"]) == ("regional", "automatic", 1, 32)
    assert (data["quotas"], data["default_quotas_suffice"]) == ([], True)
    assert [z["ips"] for z in data["zones"]] == [2, 1, 1]  # the floors AWS must reach
    code, out, err = _size("--from-prometheus", lab.url, "--step", STEP, "--mode", "regional", "--ip-mode", "automatic")
    assert code == 0, err
    lines = out.splitlines()
    assert "Regional: 1 NAT gateway across 3 AZ(s), IPs AWS adds as an AZ needs them, up to 32 per AZ." in lines
    assert (
        "Quotas: AWS allocates automatic mode's IPs itself; its documentation names no account quota for them." in lines
    )
    assert "Pin it: NatEgressArgs(mode='regional', ip_mode='automatic', peak_connections={" in out
    assert "  pulumi config set wirespeed:natMode regional" in lines
    assert "  pulumi config set wirespeed:natIpMode automatic" in lines


def test_a_selector_narrows_to_one_az(lab: Lab) -> None:
    code, out, err = _size("--from-prometheus", lab.url, "--step", STEP, "--selector", 'zone="us-east-1b"', "--json")
    assert code == 0, err
    assert [z["availability_zone"] for z in json.loads(out)["zones"]] == ["us-east-1b"]


def test_no_series_at_all_is_one_error_naming_the_window(lab: Lab) -> None:
    code, out, err = _size("--from-prometheus", lab.url, "--selector", 'cluster="none"')
    assert (code, out) == (2, "")
    assert err.startswith(f"error: --from-prometheus {lab.url}: no wirespeed_agent_snat_ports_in_use series matching ")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [],
            "error: --connections: give --connections N (every AZ), --az NAME=N for each AZ or --from-prometheus URL",
        ),
        (
            ["--connections", "5", "--from-prometheus", "http://127.0.0.1:9"],
            "error: --from-prometheus: not with --connections or --az (the measured peaks are the demand)",
        ),
        (["--connections", "5", "--headroom", "10%"], "error: --headroom 10%: only with --from-prometheus"),
        (["--from-prometheus", "http://127.0.0.1:9", "--window", "7 days"], "error: --window: '7 days' is not allowed"),
        (["--from-prometheus", "http://127.0.0.1:9", "--headroom", "0.5"], "error: --headroom: '0.5' is not allowed"),
        (
            ["--from-prometheus", "http://127.0.0.1:9", "--ip-mode", "automatic"],
            "error: --ip-mode: 'automatic' is not allowed: 'manual' with mode 'zonal'",
        ),
    ],
)
def test_bad_flags_name_the_flag(args: list[str], message: str) -> None:
    code, out, err = _size(*args)
    assert (code, out) == (2, "")
    assert err.startswith(message), err
    assert err.count("\n") == 1


# ---------------------------------------------------------------------- the pure plan
def _demand(zone: str, connections: int, headroom: float = 1.25) -> AwsZoneDemand:
    return AwsZoneDemand(zone, connections, A, f"lab: {connections:,} to {A}", headroom)


def test_headroom_rounds_up_to_a_whole_connection_and_ips_follow_55_000_each() -> None:
    (plan,) = plan_aws_nat_measured([_demand("us-east-1a", 44_001)])
    assert (plan.plan.demand, plan.plan.ips) == (55_002, 2)  # 44,001 x 1.25 = 55,001.25 -> 55,002 > 55,000
    (exact,) = plan_aws_nat_measured([_demand("us-east-1a", 44_000)])
    assert (exact.plan.demand, exact.plan.ips) == (55_000, 1)


def test_above_the_default_quota_the_plan_warns() -> None:
    (plan,) = plan_aws_nat_measured([_demand("us-east-1a", 140_000)])  # 175,000 -> 4 IPs
    assert plan.plan.ips == 4
    assert "exceed the default quota of 2 Elastic IPs" in plan.explain()


def test_every_az_beyond_eight_ips_is_named_in_one_error() -> None:
    with pytest.raises(InfeasibleError) as caught:
        plan_aws_nat_measured([_demand("a", 400_000), _demand("b", 10), _demand("c", 360_000)])
    message = str(caught.value)
    assert message.startswith(
        "connections: a 500,000 to 52.1.2.3:443/tcp; c 450,000 to 52.1.2.3:443/tcp required but 8 IPs give at most "
        "440,000 to one destination"
    )
    assert caught.value.required == 500_000


@pytest.mark.parametrize(
    ("connections", "source", "headroom", "field"),
    [(0, "lab", 1.25, "connections"), (10, " ", 1.25, "measured_from"), (10, "lab", 20, "headroom")],
)
def test_a_bad_demand_names_its_field(connections: int, source: str, headroom: float, field: str) -> None:
    with pytest.raises(SizingError) as caught:
        AwsZoneDemand("a", connections, A, source, headroom)
    assert caught.value.field == field


def test_a_regional_gateway_carries_up_to_32_ips_per_az() -> None:
    (plan,) = plan_aws_nat_measured([_demand("a", 400_000)], mode="regional")  # 500,000 -> 10 IPs in that AZ
    assert plan.plan.ips == 10
    with pytest.raises(InfeasibleError, match="32 IPs per AZ of a regional gateway give at most 1,760,000"):
        plan_aws_nat_measured([_demand("a", 1_500_000)], mode="regional")
