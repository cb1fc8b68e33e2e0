"""Alert rules (wirespeed.manifests.monitoring): promtool checks them and unit-tests every alert on synthetic
series, firing and not firing; rendered forms are golden files.

Refresh the golden files after an intended change with

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/manifests/test_alerts.py tests/manifests/test_dashboard.py

promtool comes from Debian's `prometheus` package (scripts/install-system-deps.sh).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from clirun import wirespeed
from wirespeed.manifests import NodeTuningOptions, monitoring, node_tuning_objects
from wirespeed.names import PROBE_TAILS
from wirespeed.profiles import builtin_profile

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "monitoring"
METRICS_README = ROOT / "agent" / "internal" / "metrics" / "README.md"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
PROMTOOL = shutil.which("promtool")


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL, "promtool missing: run scripts/install-system-deps.sh (Debian package prometheus)"
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@dataclass(frozen=True)
class Case:
    """Synthetic series (1-minute steps) that make ``alert`` fire with ``labels``, and series that must not."""

    alert: str
    firing: dict[str, str]
    quiet: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    # The SNAT alerts' `workloads` annotation as it expands when the alert fires.
    workloads: str = monitoring.NO_WORKLOAD_SERIES


MANA = 'interface="eth1",driver="mana",role="sriov-vf",counter="hc_rx_discards_no_wqe",cause="rx_ring_overflow"'
ENA = 'interface="ens5",driver="ena",role="primary",counter="pps_allowance_exceeded",cause="instance_allowance"'
JOB = 'job="wirespeed-system/wirespeed-agent"'
NODE1 = f'instance="10.0.0.4:9808",node="aks-apps-1",{JOB}'


def _aws_nodes(ports: int) -> dict[str, str]:
    """Two nodes of eu-west-1a behind an AWS NAT gateway with one IP (55,000), ``ports`` each to one destination."""
    series = {}
    for index in (5, 6):
        node = f'instance="10.0.1.{index}:9808",node="ip-10-0-1-{index}",{JOB}'
        series[f'wirespeed_agent_snat_ports_in_use{{{node},destination="52.1.2.3:443/tcp",zone="eu-west-1a"}}'] = (
            f"{ports}x40"
        )
        series[f'wirespeed_agent_snat_allocated_ports{{{node},kind="aws-nat-gateway",zone="eu-west-1a"}}'] = "55000x40"
    return series


def _by_workload(node: str, destination: str, workloads: dict[tuple[str, str, str], int]) -> dict[str, str]:
    """The agent's per-workload series of one node to one destination: (namespace, workload, kind) -> ports."""
    return {
        f'wirespeed_agent_snat_ports_in_use_by_workload{{{node},destination="{destination}",kind="{kind}",'
        f'namespace="{namespace}",workload="{workload}"}}': f"{ports}x40"
        for (namespace, workload, kind), ports in workloads.items()
    }


PAYMENTS, EXPORT = ("checkout", "payments-api", "Deployment"), ("batch", "export", "CronJob")
OTHER = ("", "other", "other")  # the agent's sum of the workloads past its top K: never named by an alert


def _trading_places(node: str, destination: str) -> dict[str, str]:
    """payments-api and export trading first place each minute: 1,200 and 1,100 ports, then the other way round."""
    even, odd = " ".join(["1200", "1100"] * 20), " ".join(["1100", "1200"] * 20)
    return {
        name: values
        for (name, _), values in zip(
            _by_workload(node, destination, {PAYMENTS: 0, EXPORT: 0}).items(), (even, odd), strict=True
        )
    }


def _aws_workloads() -> dict[str, str]:
    """The AZ's two nodes at 25,000 each: node 5 has payments-api 14,000 and export 11,000, node 6 payments-api
    12,000 and export 13,000, so the zone's top (payments-api, 26,000) is not node 6's; a load-balancer node's
    40,000 of one workload in the same zone is not behind the gateway and is not summed."""
    series = {}
    for index, (payments, export) in ((5, (14_000, 11_000)), (6, (12_000, 13_000))):
        node = f'instance="10.0.1.{index}:9808",node="ip-10-0-1-{index}",{JOB}'
        series |= _by_workload(node, "52.1.2.3:443/tcp", {PAYMENTS: payments, EXPORT: export})
    return series | _by_workload(NODE1, "52.1.2.3:443/tcp", {("batch", "huge", "Job"): 40_000})


CASES = [
    Case(
        "WirespeedRingOverflowRising",
        firing={f'wirespeed_agent_nic_driver_counter_total{{instance="n1",{MANA}}}': "0+60x40"},
        quiet={f'wirespeed_agent_nic_driver_counter_total{{instance="n1",{MANA}}}': "7+0x40"},
        labels={"instance": "n1", "interface": "eth1", "driver": "mana"},
    ),
    Case(
        "WirespeedBacklogDropsRising",
        firing={'node_softnet_dropped_total{instance="n1",cpu="0"}': "0+600x40"},
        quiet={'node_softnet_dropped_total{instance="n1",cpu="0"}': "120+0x40"},
        labels={"instance": "n1"},
    ),
    Case(
        "WirespeedTimeSqueeze",
        firing={'node_softnet_times_squeezed_total{instance="n1",cpu="1"}': "0+600x40"},  # 10/s
        quiet={'node_softnet_times_squeezed_total{instance="n1",cpu="1"}': "0+30x40"},  # 0.5/s: normal
        labels={"instance": "n1"},
    ),
    Case(
        "WirespeedENAAllowanceExceeded",
        firing={f'wirespeed_agent_nic_driver_counter_total{{instance="n2",{ENA}}}': "0+5x40"},
        quiet={f'wirespeed_agent_nic_driver_counter_total{{instance="n2",{ENA}}}': "3+0x40"},
        labels={"instance": "n2", "interface": "ens5", "counter": "pps_allowance_exceeded"},
    ),
    Case(
        "WirespeedConntrackNearFull",
        firing={
            'node_nf_conntrack_entries{instance="n1"}': "950x40",
            'node_nf_conntrack_entries_limit{instance="n1"}': "1000x40",
        },
        quiet={
            'node_nf_conntrack_entries{instance="n1"}': "100x40",
            'node_nf_conntrack_entries_limit{instance="n1"}': "1000x40",
        },
        labels={"instance": "n1"},
    ),
    Case(
        "WirespeedTuningDegraded",
        firing={f'wirespeed_agent_degraded{{instance="n1",{JOB}}}': "1x40"},
        quiet={f'wirespeed_agent_degraded{{instance="n1",{JOB}}}': "0x40"},
        labels={"instance": "n1"},
    ),
    Case(
        "WirespeedDrift",
        firing={f'wirespeed_agent_drift{{instance="n1",{JOB}}}': "1x40"},
        quiet={f'wirespeed_agent_drift{{instance="n1",{JOB}}}': "0x40"},
        labels={"instance": "n1"},
    ),
    # 3,500 of 4,096 ports to one destination (85%) fires; 2,000 (49%) does not, nor do 4,000 ports summed as "other"
    # (many destinations, none near its own capacity).
    Case(
        "WirespeedSNATPortPressure",
        firing={
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.1.2.3:443/tcp",zone="z1"}}': "3500x40",
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.9.9.9:443/tcp",zone="z1"}}': "100x40",
            f'wirespeed_agent_snat_allocated_ports{{{NODE1},kind="azure-load-balancer",zone="z1"}}': "4096x40",
        },
        quiet={
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.1.2.3:443/tcp",zone="z1"}}': "2000x40",
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="other",zone="z1"}}': "4000x40",
            f'wirespeed_agent_snat_allocated_ports{{{NODE1},kind="azure-load-balancer",zone="z1"}}': "4096x40",
        },
        labels={"instance": "10.0.0.4:9808", "node": "aks-apps-1", "destination": "52.1.2.3:443/tcp"},
    ),
    # The same pressure with the agent's per-workload series: the workloads holding the most ports to the pressed
    # destination are named in the workloads annotation, busiest first (payments-api's 1,200, then export's 900; not
    # "other"'s 1,400 summed from many, nor the 3,000 a workload holds to a destination that is not pressed); the
    # labels stay the destination's.
    Case(
        "WirespeedSNATPortPressure",
        firing={
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.1.2.3:443/tcp",zone="z1"}}': "3500x40",
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.9.9.9:443/tcp",zone="z1"}}': "3000x40",
            f'wirespeed_agent_snat_allocated_ports{{{NODE1},kind="azure-load-balancer",zone="z1"}}': "4096x40",
            **_by_workload(NODE1, "52.1.2.3:443/tcp", {PAYMENTS: 1200, EXPORT: 900, OTHER: 1400}),
            **_by_workload(NODE1, "52.9.9.9:443/tcp", {("batch", "huge", "Job"): 3000}),
        },
        quiet={
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.1.2.3:443/tcp",zone="z1"}}': "2000x40",
            f'wirespeed_agent_snat_allocated_ports{{{NODE1},kind="azure-load-balancer",zone="z1"}}': "4096x40",
            **_by_workload(NODE1, "52.1.2.3:443/tcp", {PAYMENTS: 2000}),
        },
        labels={"instance": "10.0.0.4:9808", "node": "aks-apps-1", "destination": "52.1.2.3:443/tcp"},
        workloads="checkout/payments-api (Deployment) 1200; batch/export (CronJob) 900",
    ),
    # Two workloads trading first place every minute: the alert still fires after its `for`, as one alert (a
    # workload label would make a new one at each change, restarting the wait, and it would never fire), naming
    # both in the order of the moment it fired (minute 30: payments-api's turn).
    Case(
        "WirespeedSNATPortPressure",
        firing={
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.1.2.3:443/tcp",zone="z1"}}': "3500x40",
            f'wirespeed_agent_snat_allocated_ports{{{NODE1},kind="azure-load-balancer",zone="z1"}}': "4096x40",
            **_trading_places(NODE1, "52.1.2.3:443/tcp"),
        },
        quiet={
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.1.2.3:443/tcp",zone="z1"}}': "2000x40",
            f'wirespeed_agent_snat_allocated_ports{{{NODE1},kind="azure-load-balancer",zone="z1"}}': "4096x40",
            **_trading_places(NODE1, "52.1.2.3:443/tcp"),
        },
        labels={"instance": "10.0.0.4:9808", "node": "aks-apps-1", "destination": "52.1.2.3:443/tcp"},
        workloads="checkout/payments-api (Deployment) 1200; batch/export (CronJob) 1100",
    ),
    # Two nodes of one AZ, 25,000 connections each to one destination: 50,000 of the gateway's 55,000 (one IP) fires
    # though neither node alone is near it; 20,000 each (73%) does not, nor does a load-balancer node in the zone.
    Case(
        "WirespeedNATGatewayAZPressure",
        firing={
            **_aws_nodes(25_000),
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.1.2.3:443/tcp",zone="eu-west-1a"}}': "4e4x40",
            f'wirespeed_agent_snat_allocated_ports{{{NODE1},kind="azure-load-balancer",zone="eu-west-1a"}}': "64e3x40",
        },
        quiet=_aws_nodes(20_000),
        labels={"zone": "eu-west-1a", "destination": "52.1.2.3:443/tcp"},
    ),
    # The same with per-workload series: the zone's workloads summed over its gateway's nodes are named, busiest first
    # (payments-api 26,000, export 24,000; not the load-balancer node's 40,000).
    Case(
        "WirespeedNATGatewayAZPressure",
        firing={
            **_aws_nodes(25_000),
            f'wirespeed_agent_snat_ports_in_use{{{NODE1},destination="52.1.2.3:443/tcp",zone="eu-west-1a"}}': "4e4x40",
            f'wirespeed_agent_snat_allocated_ports{{{NODE1},kind="azure-load-balancer",zone="eu-west-1a"}}': "64e3x40",
            **_aws_workloads(),
        },
        quiet={**_aws_nodes(20_000), **_aws_workloads()},
        labels={"zone": "eu-west-1a", "destination": "52.1.2.3:443/tcp"},
        workloads="checkout/payments-api (Deployment) 26000; batch/export (CronJob) 24000",
    ),
    # Probe tails the agent attributed to the peer's backlog fire, naming the pair, the cause and the side; as many
    # tails left unexplained (no counter rose) do not, nor do backlog tails that stopped long ago.
    Case(
        "WirespeedRetransmissionTails",
        firing={f'{PROBE_TAILS}{{{NODE1},peer_node="aks-apps-2",cause="backlog",side="peer"}}': "0+2x40"},
        quiet={
            f'{PROBE_TAILS}{{{NODE1},peer_node="aks-apps-2",cause="unexplained",side="local"}}': "0+2x40",
            f'{PROBE_TAILS}{{{NODE1},peer_node="aks-apps-3",cause="backlog",side="local"}}': "0+5x5 25+0x35",
        },
        labels={
            "instance": "10.0.0.4:9808",
            "node": "aks-apps-1",
            "peer_node": "aks-apps-2",
            "cause": "backlog",
            "side": "peer",
        },
    ),
    Case(
        "WirespeedAgentMissing",
        firing={f'up{{instance="n1",{JOB}}}': "0x40"},
        quiet={f'up{{instance="n1",{JOB}}}': "1x40"},
        labels={"instance": "n1", "job": "wirespeed-system/wirespeed-agent"},
    ),
    # No agent target at all: absent() fires without labels.
    Case(
        "WirespeedAgentMissing",
        firing={'node_softnet_dropped_total{instance="n1",cpu="0"}': "0x40"},
        quiet={f'up{{instance="n1",{JOB}}}': "1x40"},
    ),
]


def _expand(template: str, labels: dict[str, str]) -> str:
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), template)


def _expected(case: Case) -> dict[str, Any]:
    alert = next(a for a in monitoring.ALERTS if a.name == case.alert)
    annotations = {
        "summary": _expand(alert.summary, case.labels),
        "description": _expand(alert.description, case.labels),
        "fix": _expand(alert.fix, case.labels),
    }
    if alert.workloads:
        annotations["workloads"] = case.workloads
    return {"exp_labels": {"severity": alert.severity, **case.labels}, "exp_annotations": annotations}


def _series(values: dict[str, str]) -> list[dict[str, str]]:
    return [{"series": name, "values": v} for name, v in values.items()]


def test_every_alert_has_a_case() -> None:
    assert {c.alert for c in CASES} == {a.name for a in monitoring.ALERTS}


def test_the_alert_rules_are_exactly_these() -> None:
    names = {a.name for a in monitoring.ALERTS}
    assert names == {
        "WirespeedRingOverflowRising",
        "WirespeedBacklogDropsRising",
        "WirespeedTimeSqueeze",
        "WirespeedENAAllowanceExceeded",
        "WirespeedConntrackNearFull",
        "WirespeedTuningDegraded",
        "WirespeedDrift",
        "WirespeedSNATPortPressure",
        "WirespeedNATGatewayAZPressure",
        "WirespeedRetransmissionTails",
        "WirespeedAgentMissing",
    }


def _node_tuning_rule_spec() -> dict[str, Any]:
    """The PrometheusRule's spec exactly as `wirespeed render node-tuning --alerts` and NodeTuning emit it."""
    objs = node_tuning_objects([builtin_profile("throughput")], NodeTuningOptions(alerts=True))
    (rule,) = [o for o in objs if o["kind"] == "PrometheusRule"]
    spec: dict[str, Any] = rule["spec"]
    return spec


SHAPES = {
    "rules-file": monitoring.rules_file,
    "prometheus-rule": lambda: monitoring.prometheus_rule("wirespeed-system")["spec"],
    "node-tuning-alerts": _node_tuning_rule_spec,
}


@pytest.mark.parametrize("shape", SHAPES)
def test_promtool_checks_the_rules(tmp_path: Path, shape: str) -> None:
    doc = SHAPES[shape]()
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    out = promtool("check", "rules", "rules.yaml", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SUCCESS: {len(monitoring.ALERTS)} rules found" in out.stdout


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.alert}-{'-'.join(c.labels) or 'no-labels'}")
def test_alert_fires_and_stays_quiet_under_promtool(tmp_path: Path, case: Case) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(monitoring.rules_file(), sort_keys=False))
    eval_time = "30m"  # past the longest `for` (15m) plus the 5m rate window
    tests = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "name": "fires",
                "interval": "1m",
                "input_series": _series(case.firing),
                "alert_rule_test": [{"eval_time": eval_time, "alertname": case.alert, "exp_alerts": [_expected(case)]}],
            },
            {
                "name": "quiet",
                "interval": "1m",
                "input_series": _series(case.quiet),
                "alert_rule_test": [{"eval_time": eval_time, "alertname": case.alert, "exp_alerts": []}],
            },
        ],
    }
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    out = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_agent_metric_the_rules_use_is_exported() -> None:
    exported = set(re.findall(r"^\| `(wirespeed_agent_\w+)` \|", METRICS_README.read_text(), re.M))
    used = {m for a in monitoring.ALERTS for m in re.findall(r"wirespeed_agent_\w+", a.expr + a.fix)}
    assert used, "the rules use agent metrics"
    assert used <= exported, used - exported


def test_every_alert_names_a_fix() -> None:
    for a in monitoring.ALERTS:
        assert a.fix, a.name
        assert a.severity in {"info", "warning", "critical"}, a.name


CLI_CASES = {
    "alerts.yaml": ["render", "alerts"],
    "prometheusrule.yaml": ["render", "alerts", "--prometheus-rule"],
}


@pytest.mark.parametrize("golden", CLI_CASES)
def test_rendered_rules_match_golden(golden: str) -> None:
    out = wirespeed(*CLI_CASES[golden])
    assert out.returncode == 0, out.stderr
    path = GOLDEN / golden
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(out.stdout)
    assert out.stdout == path.read_text(), f"{golden} is stale: UPDATE_GOLDEN=1 pytest {__file__}"


def test_node_tuning_with_alerts_appends_the_prometheus_rule() -> None:
    out = wirespeed("render", "node-tuning", "--alerts", "--namespace", "net-tuning")
    assert out.returncode == 0, out.stderr
    docs = list(yaml.safe_load_all(out.stdout))
    assert docs[-1] == monitoring.prometheus_rule("net-tuning")
    assert docs[-1]["metadata"]["namespace"] == "net-tuning"


def test_prometheus_rule_with_a_bad_namespace_names_the_flag() -> None:
    out = wirespeed("render", "alerts", "--prometheus-rule", "--namespace", "BAD NS")
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == (
        "error: --namespace: 'BAD NS' is not allowed; allowed: an RFC 1123 label: lowercase letters, digits and '-', "
        "1-63 characters\n"
    )
