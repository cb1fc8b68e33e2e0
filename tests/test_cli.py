"""The `wirespeed` CLI through its real entry point (the installed console script), as users run it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

WIRESPEED = shutil.which("wirespeed", path=str(__import__("pathlib").Path(sys.executable).parent)) or shutil.which(
    "wirespeed"
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    assert WIRESPEED, "the wirespeed console script is not installed (pip install -e .)"
    return subprocess.run([WIRESPEED, *args], capture_output=True, text=True, timeout=60, check=False)


def test_azure_lb_worked_example_json():
    out = run("size", "azure-lb", "--pool", "100:2", "--ports", "4000", "--outbound-ips", "7", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["ports_required"] == 408_000
    assert data["ports_available"] == 448_000
    assert data["feasible"] is True
    assert data["nodes_at_max"] == 102
    assert data["allocated_outbound_ports"] == 4_000
    assert data["outbound_ips"] == 7
    assert data["dynamic_default_ports"] == 256


def test_azure_lb_infeasible_fixed_ips_exits_2_with_one_line():
    out = run("size", "azure-lb", "--pool", "9:0", "--ports", "8000", "--outbound-ips", "1")
    assert out.returncode == 2
    assert out.stderr == ("error: ports: 72,000 required (8,000 x 9 nodes) but 64,000 available (1 IP(s) x 64,000)\n")
    assert "Does NOT fit" in out.stdout


def test_azure_lb_computes_minimum_ips_from_workload():
    out = run("size", "azure-lb", "--pool", "40", "--pool", "5:1", "--connections-per-second", "20", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["allocated_outbound_ports"] == 6_000
    assert data["nodes_at_max"] == 50
    assert data["outbound_ips"] == 5


def test_azure_lb_prose_explains_the_rule_and_the_dynamic_default():
    out = run("size", "azure-lb", "--pool", "45:10%", "--ports", "2048")
    assert out.returncode == 0, out.stderr
    assert (
        "Capacity rule: 2,048 ports x 50 nodes = 102,400 required; 2 IP(s) x 64,000 = 128,000 available." in out.stdout
    )
    assert "halves again when the backend pool reaches 51 nodes" in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--pool", "10", "--ports", "1001"],
            "error: ports: 1001 is not allowed: must be a multiple of 8 between 8 and 64,000",
            id="ports-not-8",
        ),
        pytest.param(
            ["--pool", "10:x", "--ports", "1024"],
            "error: --pool: '10:x' is not allowed: SURGE must be a node count or a percent, e.g. 2 or 10%",
            id="bad-surge",
        ),
        pytest.param(
            ["--pool", "10"],
            "error: --ports/--connections-per-second: None is not allowed: give one: an explicit port count "
            "or the workload",
            id="neither",
        ),
        pytest.param(
            ["--pool", "10", "--ports", "1024", "--outbound-ips", "101"],
            "error: outbound_ips: 101 is not allowed: must be a whole number between 1 and 100",
            id="ips>100",
        ),
        pytest.param(
            ["--pool", "1000:0", "--ports", "8000"],
            "error: outbound IPs: 8,000,000 ports required but 100 IPs give at most 6,400,000; use a NAT "
            "gateway (outboundType managedNATGateway) or fewer ports per node",
            id="infeasible",
        ),
    ],
)
def test_azure_lb_bad_input_exit_2_names_field(args, message):
    out = run("size", "azure-lb", *args)
    assert out.returncode == 2
    assert out.stderr.strip() == message


def test_azure_lb_help_tells_what_to_set_and_why():
    out = run("size", "azure-lb", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "allocatedOutboundPorts" in text
    assert "halves" in text or "halve" in text
    assert "--connections-per-second" in text


def test_azure_lb_plot_writes_png(tmp_path):
    png = tmp_path / "snat.png"
    out = run("size", "azure-lb", "--pool", "60", "--connections-per-second", "5", "--plot", str(png))
    assert out.returncode == 0, out.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_nat_gateways():
    azure = json.loads(run("size", "azure-natgw", "--flows", "200000", "--json").stdout)
    assert azure["ips"] == 4
    aws = run("size", "aws-natgw", "--connections", "120000", "--json")
    assert aws.returncode == 0
    data = json.loads(aws.stdout)
    assert data["ips"] == 3
    assert "quota" in data["warnings"][0]


def test_rings_throughput_case_matches_field_report():
    data = json.loads(run("size", "rings", "--driver", "mlx5_core", "--line-rate-gbps", "100", "--json").stdout)
    assert (data["rx"], data["tx"]) == (8_192, 8_192)
    assert data["memory_bytes"] == 8_192 * 2_048 * 8


def test_backlog_throughput_case_matches_field_report():
    data = json.loads(run("size", "backlog", "--line-rate-gbps", "100", "--json").stdout)
    assert data["netdev_max_backlog"] == 32_768


def test_rings_unknown_driver_suggests():
    out = run("size", "rings", "--driver", "mlx5", "--line-rate-gbps", "100")
    assert out.returncode == 2
    assert "mlx5_core" in out.stderr


def test_catalog_show_forgiving_name():
    out = run("catalog", "show", "d16s_v6", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["name"] == "Standard_D16s_v6"


def test_catalog_show_unknown_suggests_nearest():
    out = run("catalog", "show", "Standard_D16s_v7")
    assert out.returncode == 2
    assert "D16s_v6" in out.stderr


def test_catalog_list_filters():
    out = run("catalog", "list", "--cloud", "aws", "--network-optimised", "--min-gbps", "100", "--json")
    assert out.returncode == 0, out.stderr
    names = {t["name"] for t in json.loads(out.stdout)}
    assert "c5n.18xlarge" in names
    assert all(t["network_optimised"] and t["baseline_gbps"] >= 100 for t in json.loads(out.stdout))


def test_profile_show_and_validate(tmp_path):
    out = run("profile", "show", "throughput")
    assert out.returncode == 0, out.stderr
    profile = json.loads(out.stdout)
    assert profile["sysctls"]["net.core.netdev_max_backlog"] == 32_768
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "rings": {"ena": {"rx": 10}}}))
    out = run("profile", "validate", str(bad))
    assert out.returncode == 2
    assert out.stderr == f"error: {bad}/rings/ena/rx: 10 is not allowed: must be between 64 and 65,536\n"


def test_plan_bundled_example(tmp_path, monkeypatch):
    # Outside a Pulumi project (no Pulumi.yaml in the working directory) `plan` falls back to the bundled workload.
    monkeypatch.chdir(tmp_path)
    out = run("plan", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["outbound"]["feasible"] is True
    assert data["profile"]["sysctls"]["net.core.netdev_max_backlog"] == 32_768
