"""`wirespeed size ...` through the real entry point: worked examples, and one exact line per bad input."""

from __future__ import annotations

import json

import pytest

from clirun import invoke, wirespeed


def test_azure_lb_worked_example_json():
    out = wirespeed("size", "azure-lb", "--pool", "100:2", "--ports", "4000", "--outbound-ips", "7", "--json")
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
    out = wirespeed("size", "azure-lb", "--pool", "9:0", "--ports", "8000", "--outbound-ips", "1")
    assert out.returncode == 2
    assert out.stderr == (
        "error: --outbound-ips 1: 1 IP(s) x 64,000 = 64,000 ports available but 72,000 required (8,000 x 9 nodes); "
        "to fit, give it at least 2 outbound IPs (--outbound-ips), lower --ports to at most 7,104 or keep the pools "
        "(--pool) to at most 8 nodes at maxCount plus surge in all (it stops fitting at 9)\n"
    )
    assert "Does NOT fit" in out.stdout


def test_azure_lb_that_does_not_fit_prints_the_fixes_aks_snat_capacity_computes():
    """The issue's case: 4,000 ports x 102 nodes on 5 IPs. The numbers are the rule's (sizing.azure_lb.capacity_fix,
    which aks-snat-capacity words in `wirespeed check`): 7 IPs, or at most 3,136 ports, or 80 nodes."""
    out = wirespeed("size", "azure-lb", "--pool", "100:2", "--ports", "4000", "--outbound-ips", "5")
    assert out.returncode == 2
    assert out.stderr == (
        "error: --outbound-ips 5: 5 IP(s) x 64,000 = 320,000 ports available but 408,000 required (4,000 x 102 "
        "nodes); to fit, give it at least 7 outbound IPs (--outbound-ips), lower --ports to at most 3,136 or keep the "
        "pools (--pool) to at most 80 nodes at maxCount plus surge in all (it stops fitting at 81)\n"
    )
    assert (
        "To fit, give it at least 7 outbound IPs (managedOutboundIPs.count), lower allocatedOutboundPorts to at most "
        "3,136 or keep the pools to at most 80 nodes at maxCount plus surge in all (it stops fitting at 81)."
    ) in out.stdout
    # Each fix does fit, and the pool size is the edge: 78 + 2 = 80 nodes fit, 79 + 2 = 81 do not.
    for pool, ports, ips, fits in [
        ("100:2", "4000", "7", True),
        ("100:2", "3136", "5", True),
        ("100:2", "3144", "5", False),
        ("78:2", "4000", "5", True),
        ("79:2", "4000", "5", False),
    ]:
        out = wirespeed("size", "azure-lb", "--pool", pool, "--ports", ports, "--outbound-ips", ips)
        assert out.returncode == (0 if fits else 2), (pool, ports, ips)


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("60:2:throughput", "a third field, 'throughput': --pool has only two"),
        ("apps:Standard_D16s_v6:3:60", "this is the stack config's pool format NAME:VM_SIZE:MIN:MAX"),
        ("60:x", "SURGE 'x' must be a node count or a percent"),
        ("x:2", "MAX 'x' must be a whole number between 1 and 1,000"),
    ],
)
def test_every_pool_error_names_the_field_that_is_wrong(spec, said):
    out = wirespeed("size", "azure-lb", "--pool", spec, "--ports", "1000")
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: --pool {spec!r} is not allowed: {said}"), out.stderr


def test_azure_lb_computes_minimum_ips_from_workload():
    out = wirespeed("size", "azure-lb", "--pool", "40", "--pool", "5:1", "--connections-per-second", "20", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["allocated_outbound_ports"] == 6_000
    assert data["nodes_at_max"] == 50
    assert data["outbound_ips"] == 5


def test_azure_lb_prose_explains_the_rule_and_the_dynamic_default():
    out = wirespeed("size", "azure-lb", "--pool", "45:10%", "--ports", "2048")
    assert out.returncode == 0, out.stderr
    assert (
        "Capacity rule: 2,048 ports x 50 nodes = 102,400 required; 2 IP(s) x 64,000 = 128,000 available." in out.stdout
    )
    assert "halves again when the backend pool reaches 51 nodes" in out.stdout


AZURE_LB_BAD_INPUT = [
    pytest.param(
        ["--pool", "10", "--ports", "1001"],
        "error: --ports: 1001 is not allowed: must be a multiple of 8 between 8 and 64,000",
        id="ports-not-8",
    ),
    pytest.param(
        ["--pool", "10:x", "--ports", "1024"],
        "error: --pool '10:x' is not allowed: SURGE 'x' must be a node count or a percent, e.g. 2 or 10%",
        id="bad-surge",
    ),
    pytest.param(
        ["--pool", "10", "--pool", "20:5", "--pool", "10:x", "--ports", "1024"],
        "error: --pool #3 '10:x' is not allowed: SURGE 'x' must be a node count or a percent, e.g. 2 or 10%",
        id="bad-surge-says-which-pool",
    ),
    pytest.param(
        ["--pool", "10", "--pool", "0:1", "--ports", "1024"],
        "error: --pool #2 '0:1' is not allowed: MAX must be a whole number between 1 and 1,000 (AKS nodes per pool)",
        id="bad-max-says-which-pool",
    ),
    pytest.param(
        ["--pool", "10"],
        "error: --ports or --connections-per-second is required: an explicit port count, or the workload's peak "
        "new connections per second to compute it from",
        id="neither",
    ),
    pytest.param(
        ["--pool", "10", "--ports", "1024", "--connections-per-second", "5"],
        "error: --ports 1024 and --connections-per-second 5: give one, not both (an explicit port count, or the "
        "workload to compute it from)",
        id="both",
    ),
    pytest.param(
        ["--pool", "10", "--ports", "1024", "--headroom", "-5"],
        "error: --headroom -5: applies only to --connections-per-second; with --ports 1024 it would be ignored, "
        "so leave it out",
        id="headroom-with-ports",
    ),
    pytest.param(
        ["--pool", "10", "--ports", "1024", "--hold-seconds", "nan", "--headroom", "2"],
        "error: --hold-seconds nan, --headroom 2: applies only to --connections-per-second; with --ports 1024 it "
        "would be ignored, so leave it out",
        id="hold-and-headroom-with-ports",
    ),
    pytest.param(
        ["--pool", "10", "--connections-per-second", "5", "--headroom", "nan"],
        "error: --headroom: nan is not allowed: must be between 1 and 10",
        id="headroom-nan",
    ),
    pytest.param(
        ["--pool", "10", "--connections-per-second", "5", "--hold-seconds", "-5"],
        "error: --hold-seconds: -5.0 is not allowed: must be between 1 and 3,600",
        id="hold-negative",
    ),
    pytest.param(
        ["--pool", "10", "--connections-per-second", "inf"],
        "error: --connections-per-second: inf is not allowed: must be between 0.001 and 1,000,000",
        id="rate-inf",
    ),
    pytest.param(
        ["--pool", "10", "--ports", "1024", "--outbound-ips", "101"],
        "error: --outbound-ips: 101 is not allowed: must be a whole number between 1 and 100",
        id="ips>100",
    ),
    pytest.param(
        ["--pool", "10", "--ports", "1024", "--outbound-ips", "9" * 40],
        f"error: --outbound-ips: {'9' * 40} is not allowed: must be a whole number between 1 and 100",
        id="ips-huge",
    ),
    pytest.param(
        ["--pool", "1000:0", "--ports", "8000"],
        "error: outbound IPs for --pool x --ports: 8,000,000 ports required but 100 IPs give at most 6,400,000; "
        "use a NAT gateway (outboundType managedNATGateway) or fewer ports per node",
        id="infeasible-ips",
    ),
    pytest.param(
        ["--pool", "10", "--connections-per-second", "300"],
        "error: ports per node for --connections-per-second x --hold-seconds x --headroom: 90,000 required but at "
        "most 64,000 are allowed; spread the calls over more destinations or connection-pool them, or use a NAT "
        "gateway (outboundType managedNATGateway: ports are allocated on demand, 64,512 per IP)",
        id="infeasible-ports-per-node",
    ),
    pytest.param(
        ["--pool", "10", "--ports", "x"],
        "error: invalid value for '--ports': 'x' is not a valid int (see 'wirespeed size azure-lb --help')",
        id="ports-not-a-number",
    ),
    pytest.param(
        ["--ports", "1024"],
        "error: missing option '--pool' (see 'wirespeed size azure-lb --help')",
        id="no-pool",
    ),
    pytest.param(
        ["--pool", "10", "--ports", "1024", "--plot", "/nonexistent-dir/snat.png"],
        "error: --plot: '/nonexistent-dir/snat.png': directory '/nonexistent-dir' does not exist",
        id="plot-dir-missing",
    ),
    pytest.param(
        ["--pool", "10", "--ports", "1024", "--plot", "snat.svg"],
        "error: --plot: 'snat.svg' is not allowed: a file name ending in .png",
        id="plot-not-png",
    ),
]


@pytest.mark.parametrize(("args", "message"), AZURE_LB_BAD_INPUT)
def test_azure_lb_bad_input_exit_2_names_the_flag(args, message):
    out = invoke("size", "azure-lb", *args)
    assert (out.returncode, out.stderr) == (2, message + "\n")


def test_azure_lb_bad_input_through_the_console_script():
    out = wirespeed("size", "azure-lb", "--pool", "10", "--pool", "10:x", "--ports", "1024")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (
        "error: --pool #2 '10:x' is not allowed: SURGE 'x' must be a node count or a percent, e.g. 2 or 10%\n"
    )


def test_azure_lb_plot_to_a_directory_fails_before_printing_the_plan(tmp_path):
    out = invoke("size", "azure-lb", "--pool", "10", "--ports", "1024", "--plot", str(tmp_path / "d.png"))
    assert out.returncode == 0, out.stderr
    (tmp_path / "dir.png").mkdir()
    out = invoke("size", "azure-lb", "--pool", "10", "--ports", "1024", "--plot", str(tmp_path / "dir.png"))
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == f"error: --plot: '{tmp_path / 'dir.png'}' is a directory; give a file name inside it\n"


def test_azure_lb_help_tells_what_to_set_and_why():
    out = wirespeed("size", "azure-lb", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "allocatedOutboundPorts" in text
    assert "halves" in text or "halve" in text
    assert "--connections-per-second" in text


def test_azure_lb_plot_writes_png(tmp_path):
    png = tmp_path / "snat.png"
    out = wirespeed("size", "azure-lb", "--pool", "60", "--connections-per-second", "5", "--plot", str(png))
    assert out.returncode == 0, out.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_nat_gateways():
    azure = json.loads(wirespeed("size", "azure-natgw", "--flows", "200000", "--json").stdout)
    assert azure["ips"] == 4
    aws = wirespeed("size", "aws-natgw", "--connections", "120000", "--json")
    assert aws.returncode == 0
    data = json.loads(aws.stdout)
    assert [z["ips"] for z in data["zones"]] == [3, 3, 3]
    assert (data["mode"], data["gateways"], data["total_ips"], data["default_quotas_suffice"]) == ("zonal", 3, 9, False)
    assert [(q["quota_code"], q["required"]) for q in data["quotas"]] == [("L-5F53652F", 3), ("L-0263D0A3", 9)]


def test_azure_natgw_standard_v2_sizes_the_same_ips_and_says_what_the_sku_changes():
    standard = json.loads(wirespeed("size", "azure-natgw", "--flows", "200000", "--json").stdout)
    v2 = json.loads(wirespeed("size", "azure-natgw", "--flows", "200000", "--sku", "StandardV2", "--json").stdout)
    assert {k: v for k, v in v2.items() if k != "sku"} == {k: v for k, v in standard.items() if k != "sku"}
    assert (standard["sku"]["name"], standard["sku"]["zone_redundant"], standard["sku"]["public_ip_sku"]) == (
        "Standard", False, "Standard")  # fmt: skip
    assert v2["sku"] == {
        "name": "StandardV2", "zone_redundant": True, "gbps": 100, "packets_per_second": 10_000_000,
        "public_ip_sku": "StandardV2",
    }  # fmt: skip
    prose = wirespeed("size", "azure-natgw", "--flows", "200000", "--sku", "StandardV2").stdout
    assert "StandardV2 NAT gateway: zone-redundant, up to 100 Gbps" in prose
    assert "StandardV2 public IPs or prefixes only." in prose


def test_aws_nat_regional_per_az_and_automatic():
    regional = wirespeed(
        "size", "aws-natgw", "--az", "eu-west-1a=120000", "--az", "eu-west-1b=600000", "--mode", "regional", "--json"
    )
    assert regional.returncode == 0, regional.stderr
    data = json.loads(regional.stdout)
    assert (data["gateways"], data["max_ips_per_az"], [z["ips"] for z in data["zones"]]) == (1, 32, [3, 11])
    assert [q["quota_code"] for q in data["quotas"]] == ["L-0263D0A3"]
    prose = wirespeed("size", "aws-natgw", "--connections", "900000", "--mode", "regional", "--ip-mode", "automatic")
    assert prose.returncode == 0
    assert prose.stdout.splitlines() == [
        "Regional: 1 NAT gateway across 3 AZ(s), IPs AWS adds as an AZ needs them, up to 32 per AZ.",
        *[
            f"  az{i}: 900,000 connections to the busiest destination / 55,000 per IP -> 17 IP(s) (the floor AWS must "
            "reach), 935,000 capacity (35,000 spare)."
            for i in (1, 2, 3)
        ],
        "Quotas: AWS allocates automatic mode's IPs itself; its documentation names no account quota for them.",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["azure-natgw", "--flows", "2000000"],
            "error: --flows: 2,000,000 required but 16 IPs give at most 1,032,192; split egress across subnets "
            "with their own NAT gateways, or reuse connections",
            id="azure-infeasible",
        ),
        pytest.param(
            ["azure-natgw", "--flows", "10", "--sku", "standardv2"],
            "error: --sku 'standardv2' is not allowed: 'Standard' or 'StandardV2'",
            id="azure-sku",
        ),
        pytest.param(
            ["azure-natgw", "--flows", "0"],
            "error: --flows: 0 is not allowed: must be a whole number between 1 and 1,000,000,000",
            id="azure-zero",
        ),
        pytest.param(
            ["aws-natgw", "--connections", "1000000"],
            "error: --connections: 1,000,000 required but 8 IPs give at most 440,000 to one destination; use a "
            "regional NAT gateway (up to 32 IPs per AZ) or spread calls over more destination IPs",
            id="aws-infeasible",
        ),
        pytest.param(
            ["aws-natgw", "--az", "eu-west-1a=2000000", "--az", "x y=1", "--mode", "regional"],
            "error: --az eu-west-1a: 2,000,000 required but 32 IPs per AZ of a regional gateway give at most "
            "1,760,000 to one destination; spread calls over more destination IPs (each IP, port and protocol "
            "counts on its own); --az x y: 'x y' is not allowed: an AZ name such as 'eu-west-1a'",
            id="aws-regional-per-az-problems-at-once",
        ),
        pytest.param(
            ["aws-natgw", "--connections", "1", "--ip-mode", "automatic"],
            "error: --ip-mode: 'automatic' is not allowed: 'manual' with mode 'zonal' (only regional gateways add IPs)",
            id="aws-zonal-automatic",
        ),
        pytest.param(
            ["aws-natgw", "--connections", "1", "--az", "a=1"],
            "error: --connections: give --connections N (every AZ), --az NAME=N for each AZ or --from-prometheus URL, "
            "one of them",
            id="aws-both-demands",
        ),
        pytest.param(
            ["aws-natgw", "--az", "eu-west-1a"],
            "error: --az: 'eu-west-1a' is not allowed: NAME=CONNECTIONS, such as eu-west-1a=120000",
            id="aws-az-without-figure",
        ),
        pytest.param(
            ["aws-natgw", "--connections", "1", "--azs", "0"],
            "error: --azs: 0 is not allowed: a whole number from 1 to 32",
            id="aws-no-azs",
        ),
        pytest.param(
            ["aws-natgw", "--connections", "-1"],
            "error: --connections: -1 is not allowed: must be a whole number between 1 and 1,000,000,000",
            id="aws-negative",
        ),
        pytest.param(
            ["rings", "--driver", "mlx5", "--line-rate-gbps", "100"],
            "error: --driver: unknown NIC driver 'mlx5': did you mean mlx5_core? known drivers are e1000e, ena, "
            "hv_netvsc, igb, igbvf, mana, mlx4_en, mlx5_core, virtio_net",
            id="rings-unknown-driver",
        ),
        pytest.param(
            ["mtu", "--driver", "mlx5"],
            "error: --driver: 'mlx5' is not allowed: one of ena, mana, mlx4_en, mlx5_core (did you mean mlx5_core?)",
            id="mtu-unknown-driver",
        ),
        pytest.param(
            ["rings", "--driver", "mlx5_core", "--line-rate-gbps", "nan"],
            "error: --line-rate-gbps: nan is not allowed: must be between 0.001 and 800",
            id="rings-rate-nan",
        ),
        pytest.param(
            ["rings", "--driver", "mlx5_core", "--line-rate-gbps", "100", "--stall-ms", "-inf"],
            "error: --stall-ms: -inf is not allowed: must be between 0.001 and 1,000",
            id="rings-stall-inf",
        ),
        pytest.param(
            ["rings", "--driver", "mlx5_core", "--line-rate-gbps", "100", "--queues", "0"],
            "error: --queues: 0 is not allowed: must be a whole number between 1 and 512",
            id="rings-queues",
        ),
        pytest.param(
            ["backlog", "--line-rate-gbps", "10", "--packet-bytes", "3"],
            "error: --packet-bytes: 3 is not allowed: must be a whole number between 64 and 9,216",
            id="backlog-packet",
        ),
        pytest.param(
            ["mtu", "--driver", "foo"],
            "error: --driver: 'foo' is not allowed: one of ena, mana, mlx4_en, mlx5_core",
            id="mtu-driver",
        ),
    ],
)
def test_size_bad_input_exit_2_names_the_flag(args, message):
    out = invoke("size", *args)
    assert (out.returncode, out.stderr) == (2, message + "\n")


def test_rings_throughput_case_matches_field_report():
    data = json.loads(wirespeed("size", "rings", "--driver", "mlx5_core", "--line-rate-gbps", "100", "--json").stdout)
    assert (data["rx"], data["tx"]) == (8_192, 8_192)
    assert data["memory_bytes"] == 8_192 * 2_048 * 8


def test_backlog_throughput_case_matches_field_report():
    data = json.loads(wirespeed("size", "backlog", "--line-rate-gbps", "100", "--json").stdout)
    assert data["netdev_max_backlog"] == 32_768


def _help(*args: str) -> str:
    return " ".join(invoke(*args, "--help").stdout.replace("│", " ").split())


def test_size_help_numbers_come_from_the_sizing_modules():
    from wirespeed.sizing import azure_lb, nat_gateway

    listing = _help("size")
    assert f"{nat_gateway.AZURE_PORTS_PER_IP:,} SNAT ports each, at most {nat_gateway.AZURE_MAX_IPS})" in listing
    regional = nat_gateway.AWS_REGIONAL_MAX_IPS_PER_AZ
    assert (
        f"{nat_gateway.AWS_CONNECTIONS_PER_IP:,} connections per destination each (zonal: one gateway per AZ, at most "
        f"{nat_gateway.AWS_ZONAL_MAX_IPS} IPs; regional: one gateway, at most {regional} per AZ)"
    ) in listing
    text = _help("size", "aws-natgw")
    assert nat_gateway.NAT_GATEWAY_EIPS.quota_code in text
    assert nat_gateway.REGION_EIPS.quota_code in text
    text = _help("size", "azure-lb")
    assert f"<= {azure_lb.PORTS_PER_IP:,} x outbound IPs" in text
    assert f"{azure_lb.PORT_GRANULARITY}..{azure_lb.MAX_PORTS_PER_NODE:,}" in text
    assert f"(1..{azure_lb.MAX_OUTBOUND_IPS:,})" in text


def test_cli_source_types_no_sizing_limit():
    """Limits live once, in the sizing modules; the CLI interpolates them, so none is typed in its source."""
    from pathlib import Path

    from wirespeed import cli
    from wirespeed.sizing import azure_lb, backlog, nat_gateway

    limits = [
        azure_lb.PORTS_PER_IP,
        azure_lb.MAX_PORTS_PER_NODE,
        azure_lb.MAX_POOL_NODES,
        nat_gateway.AZURE_PORTS_PER_IP,
        nat_gateway.AWS_CONNECTIONS_PER_IP,
        backlog.BACKLOG_MAX,
        9_216,  # the largest IP packet size the sizing modules accept
    ]
    phrases = [f"{n:,}" for n in limits] + [f"{n}" for n in limits]
    phrases += [
        f"at most {nat_gateway.AZURE_MAX_IPS}",
        f"at most {nat_gateway.AWS_ZONAL_MAX_IPS}",
        f"at most {nat_gateway.AWS_REGIONAL_MAX_IPS_PER_AZ}",
        nat_gateway.NAT_GATEWAY_EIPS.quota_code,
        nat_gateway.REGION_EIPS.quota_code,
        f"1..{azure_lb.MAX_OUTBOUND_IPS}",
        "(1..10)",
    ]
    for source in Path(cli.__file__).parent.glob("*.py"):
        text = source.read_text()
        assert [p for p in phrases if p in text] == [], source.name


@pytest.mark.parametrize(
    ("cloud", "speaks", "never"),
    [
        (["--cloud", "aws"], "1,000..2,147,483,647, the kernel's int range, which EKS does not narrow", "AKS's"),
        (["--cloud", "azure"], "within AKS's 1,000..3,240,000", "AWS"),
        ([], "within 1,000..3,240,000, the range AKS accepts; on AWS the kernel's int range applies", "AKS's"),
    ],
    ids=["aws", "azure", "unset"],
)
def test_backlog_speaks_of_the_cloud_asked_for(cloud, speaks, never):
    out = wirespeed("size", "backlog", "--line-rate-gbps", "100", *cloud)
    assert out.returncode == 0, out.stderr
    assert speaks in out.stdout
    assert never not in out.stdout


def test_backlog_on_aws_is_not_capped_at_the_aks_maximum():
    out = wirespeed(
        "size",
        "backlog",
        "--line-rate-gbps",
        "800",
        "--stall-ms",
        "1000",
        "--packet-bytes",
        "64",
        "--cloud",
        "aws",
        "--json",
    )
    data = json.loads(out.stdout)
    assert data["netdev_max_backlog"] == 2**30
    assert data["capped_at_kernel_max"] is False


def test_size_backlog_at_2_gbps_keeps_the_kernel_default_that_holds_the_stall():
    # Issue 25: it recommended 1,024 for 651 packets, and the gate then failed a backlog of 1,000 that holds them.
    out = wirespeed("size", "backlog", "--line-rate-gbps", "2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "At 2 Gb/s with 1,500-byte packets, 651 packets arrive while the backlog waits 4 ms to be drained.",
        "net.core.netdev_max_backlog = 1,000 (kernel default 1,000; the stall fits in the kernel default, AKS's "
        "minimum 1,000).",
        "Worst case a full backlog pins 2.0 MiB per CPU; it is only used during bursts. A larger backlog absorbs "
        "microbursts; it cannot rescue sustained overload.",
    ]


def test_size_rings_at_5_gbps_never_goes_below_the_drivers_default():
    # Issue 25: it recommended RX 512 (below mlx5_core's default 1,024) and printed "+-8.0 MiB".
    out = wirespeed("size", "rings", "--driver", "mlx5_core", "--line-rate-gbps", "5")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "At 5 Gb/s with 1,500-byte packets, 407 packets arrive during a 1 ms receive stall.",
        "mlx5_core: RX 1,024 (default 1,024), TX 1,024 (default 1,024): the driver's defaults, which already hold "
        "them.",
        "Kernel memory for RX buffers on 8 queue(s): 16.0 MiB (0.0 MiB over the defaults).",
    ]
