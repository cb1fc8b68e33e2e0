"""One home per number: each number in wirespeed.numbers.REGISTRY is typed once, where its source is cited; its
copies in Terraform, Pulumi.yaml and the docs are written from there by `make regen` (python -m wirespeed.numbers),
and no other literal copy exists on a surface it crosses into."""

from __future__ import annotations

import ast
import shutil
import subprocess

import pytest

from conftest import require
from wirespeed import numbers
from wirespeed.azure import outbound, stack_config
from wirespeed.azure.spec import SnatAlertSpec
from wirespeed.sizing import aks_sysctls, azure_lb, nat_gateway, snat_limits

NAMES = [number.name for number in numbers.REGISTRY]


@pytest.mark.parametrize("path", numbers.slot_paths())
def test_every_slot_is_written_from_its_home(path: str) -> None:
    text = (numbers.ROOT / path).read_text()
    assert numbers.rendered(path, text) == text, f"{path} is stale: run python -m wirespeed.numbers (make regen)"


@pytest.mark.parametrize("number", numbers.REGISTRY, ids=NAMES)
def test_no_literal_copy_outside_the_home_and_the_generated_files(number: numbers.Number) -> None:
    found = [
        f"{path}:{lineno}: {line.strip()}"
        for path in numbers.scanned_files()
        for lineno, line in numbers.copies(number, path, (numbers.ROOT / path).read_text())
    ]
    assert found == [], (
        f"{number.name} ({number.value}) lives in {number.home}: read it there, or add a Slot in wirespeed.numbers "
        "(then make regen) for a place that must spell it out:\n" + "\n".join(found)
    )


@pytest.mark.parametrize("number", numbers.REGISTRY, ids=NAMES)
def test_the_home_is_a_scanned_source_file(number: numbers.Number) -> None:
    assert number.home in numbers.scanned_files(), f"{number.home} is not on a scanned surface"


def test_a_slot_is_rewritten_from_the_home() -> None:
    path = "modules/aks-outbound/variables.tf"
    text = (numbers.ROOT / path).read_text()
    stale = text.replace("default     = 240\n", "default     = 250\n", 1)
    assert stale != text
    assert numbers.rendered(path, stale) == text


def test_a_typed_copy_is_found_and_a_slot_or_other_meaning_is_not() -> None:
    hold = numbers.REGISTRY[0]
    text = "\n".join(
        [
            "fs.Duration(hold, 240*time.Second)",  # a copy: the hold typed again
            "const peakBuckets = 240",  # another meaning: no hold word on the line
            "origDst: a(10.240.0.4) hold",  # part of an address
            'rate = "240.5" hold',  # another number
        ]
    )
    assert [lineno for lineno, _ in numbers.copies(hold, "agent/internal/snat/x.go", text)] == [1]
    readme = (numbers.ROOT / "agent/README.md").read_text()
    assert list(numbers.copies(hold, "agent/README.md", readme)) == []
    assert list(numbers.copies(hold, "agent/README.md", readme.replace("else `240s`", "else `240s` (hold 240)"))) != []


def test_two_meanings_of_the_hold_have_two_names() -> None:
    """The workload sizing's hold is a float from 1; the agent's a whole number from 0 (0: open flows only)."""
    assert float(azure_lb.AZURE_LB_TCP_RELEASE_SECONDS) == azure_lb.DEFAULT_WORKLOAD_HOLD_SECONDS
    assert isinstance(snat_limits.DEFAULT_AGENT_HOLD_SECONDS, int)
    assert snat_limits.DEFAULT_AGENT_HOLD_SECONDS == azure_lb.AZURE_LB_TCP_RELEASE_SECONDS
    assert azure_lb.WORKLOAD_HOLD_SECONDS_RANGE[0] == 1
    assert snat_limits.AGENT_HOLD_SECONDS_RANGE[0] == 0
    assert not hasattr(azure_lb, "DEFAULT_HOLD_SECONDS")
    assert not hasattr(snat_limits, "DEFAULT_HOLD_SECONDS")


def test_the_backlog_number_is_the_aks_range() -> None:
    backlog = next(number for number in numbers.REGISTRY if "backlog" in number.name)
    assert backlog.value == aks_sysctls.BY_KERNEL_NAME["net.core.netdev_max_backlog"].high


def test_one_number_in_two_spellings_is_written_from_one_home() -> None:
    """The headroom lives once (the sizing's 1.25); Pulumi.yaml takes it as a percent, the modules as a multiplier."""
    headroom = next(number for number in numbers.REGISTRY if number.name.startswith("Workload headroom"))
    assert headroom.value == 25 == stack_config.DEFAULT_HEADROOM_PERCENT
    for path, written, stale in (
        (
            "Pulumi.yaml",
            'measured peak, 0..900 percent."\n    default: 25\n',
            'measured peak, 0..900 percent."\n    default: 30\n',
        ),
        ("modules/aks-outbound/variables.tf", "default     = 1.25\n", "default     = 1.5\n"),
        ("modules/sizing/variables.tf", "optional(number, 1.25)", "optional(number, 1.5)"),
    ):
        text = (numbers.ROOT / path).read_text()
        assert written in text
        assert numbers.rendered(path, text.replace(written, stale, 1)) == text


def test_ranges_derive_from_their_homes() -> None:
    """A range typed in another unit is computed from the home, not typed again (0..900 percent is 1..10 x)."""
    assert stack_config.HEADROOM_PERCENT_RANGE == (0, 900)
    assert outbound.IDLE_TIMEOUT_RANGE == azure_lb.OUTBOUND_IDLE_TIMEOUT_RANGE == (4, 120)
    assert snat_limits.UDP_HOLD_SECONDS_RANGE == (0, 120 * 60)
    assert outbound.NAT_DEFAULT_IDLE_TIMEOUT == nat_gateway.AZURE_DEFAULT_IDLE_TIMEOUT
    assert outbound.LB_DEFAULT_IDLE_TIMEOUT == azure_lb.AKS_LB_DEFAULT_IDLE_TIMEOUT
    assert SnatAlertSpec().threshold_percent == snat_limits.DEFAULT_PRESSURE_PERCENT


def test_a_slot_of_one_number_is_not_a_copy_of_another_of_the_same_digits() -> None:
    """The 4 of the idle timeout's "4..120" is the range's slot, not a copy of the NAT gateway's default 4."""
    nat = next(number for number in numbers.REGISTRY if number.name.startswith("Azure NAT gateway's default idle"))
    path = "modules/aks-outbound/variables.tf"
    text = (numbers.ROOT / path).read_text()
    assert "idle timeout, 4..120 minutes" in text
    assert list(numbers.copies(nat, path, text)) == []
    assert list(numbers.copies(nat, path, text + "\n# idle timeout: 4 minutes on a NAT gateway\n")) != []


def test_examples_are_scanned() -> None:
    assert "examples/aks-dsv6/__main__.py" in numbers.scanned_files()
    assert "examples/aks-natgw/Pulumi.yaml" in numbers.scanned_files()


def test_the_go_constants_are_written_from_the_homes() -> None:
    """The agent's compile-time copies (its --listen default, the image's exposed port) come from the registry."""
    assert (numbers.ROOT / numbers.GO_FILE).read_text() == numbers.go_source(), "run python -m wirespeed.numbers"
    port = next(number for number in numbers.REGISTRY if number.go_name == "MetricsPort")
    assert f"const MetricsPort = {port.value}\n" in numbers.go_source()
    main = (numbers.ROOT / "agent/cmd/wirespeed-agent/main.go").read_text()
    assert '"listen", ":"+strconv.Itoa(numbers.MetricsPort)' in main


@pytest.mark.parametrize("suffix", sorted({path.rsplit(".", 1)[-1] for path in numbers.slot_paths()} | {"go"}))
def test_the_marker_is_a_comment_in_each_slot_files_syntax(suffix: str) -> None:
    marker = numbers.marker_line(f"x.{suffix}")
    assert numbers.MARKER in marker
    if suffix == "py":
        assert ast.dump(ast.parse(marker + "X = 1\n")) == ast.dump(ast.parse("X = 1\n"))
    elif suffix == "md":
        assert marker == f"<!-- {numbers.MARKER} -->\n"
    elif suffix == "go":
        assert marker == f"// {numbers.MARKER}\n\n"
    else:  # Terraform and YAML: a hash comment
        assert marker == f"# {numbers.MARKER}\n"


def test_a_go_file_gets_the_marker_as_a_go_comment_apart_from_its_package_doc() -> None:
    """A Go slot file starts with a // comment and a blank line: it compiles, stays gofmt-clean, and the marker does
    not become part of the package's doc comment."""
    go = "// Package x holds y.\npackage x\n\nconst Port = 1\n"
    written = numbers.rendered("agent/internal/x/x.go", go)
    assert written == f"// {numbers.MARKER}\n\n{go}"
    assert numbers.rendered("agent/internal/x/x.go", written) == written
    require(None if shutil.which("gofmt") else "needs gofmt (Go, the version in agent/go.mod)")
    formatted = subprocess.run(["gofmt"], input=written, capture_output=True, text=True, check=True).stdout
    assert formatted == written


def test_a_file_without_comments_cannot_hold_a_slot() -> None:
    with pytest.raises(ValueError, match=r"checkout-api\.json: no comment syntax"):
        numbers.marker_line("examples/workloads/checkout-api.json")


def test_the_nat_gateways_connection_limits_are_written_from_sizing() -> None:
    """AWS's 55,000 and Azure's 50,000 connections per IP to one destination: typed in sizing/nat_gateway.py only;
    the agent's cost figures' 50,000 flows are another meaning."""
    aws = next(number for number in numbers.REGISTRY if number.name.startswith("Simultaneous connections per IP of an"))
    azure = next(number for number in numbers.REGISTRY if number.name.startswith("Concurrent connections per public"))
    assert (aws.value, azure.value) == (
        nat_gateway.AWS_CONNECTIONS_PER_IP,
        nat_gateway.AZURE_CONNECTIONS_PER_DESTINATION_PER_IP,
    )
    path = "modules/aws-nat-egress-zonal/variables.tf"
    text = (numbers.ROOT / path).read_text()
    assert numbers.rendered(path, text.replace("ip_count x 55,000", "ip_count x 56,000", 1)) == text
    lines = [
        "Cost at 5,000 pods and 50,000 flows at 2,000 new a second:",
        "50,000 connections per IP to one destination",
    ]
    assert [lineno for lineno, _ in numbers.copies(azure, "agent/README.md", "\n".join(lines))] == [2]


def test_the_nat_gateways_ip_limits_are_written_from_sizing() -> None:
    """AWS's 8 IPs per zonal gateway and 32 per AZ regional, Azure's 16 per gateway: a copy is found in a range's top
    (1..16) too, while the Elastic IP quota's ceiling of 8 and the SNAT ports' multiple of 8 are other numbers."""
    by_value = {
        number.value: number for number in numbers.REGISTRY if number.name.startswith(("Most IPs", "Most public IPs"))
    }
    assert sorted(by_value) == sorted(
        (nat_gateway.AWS_ZONAL_MAX_IPS, nat_gateway.AWS_REGIONAL_MAX_IPS_PER_AZ, nat_gateway.AZURE_MAX_IPS)
    )
    zonal, regional, azure = (by_value[v] for v in (8, 32, 16))
    lines = [
        "zonal: one NAT gateway per AZ, at most 8 IPs each",
        "'Elastic IP addresses per public NAT gateway': default 2, adjustable up to 8",
        "allocated ports per node: a multiple of 8 on a zonal pool",
        "regional: up to 32 IPs per AZ",
        "subnet 10.0.0.0/32 per AZ",
        "Managed NAT gateway IPs, 1..16.",
        "NAT gateway at 10.16.0.1",
    ]
    text = "\n".join(lines)
    assert [n for n, _ in numbers.copies(zonal, "docs/aws-nat-egress.md", text)] == [1]
    assert [n for n, _ in numbers.copies(regional, "docs/x.md", text)] == [4]
    assert [n for n, _ in numbers.copies(azure, "docs/x.md", text)] == [6]
    path = "modules/aks-outbound/variables.tf"
    written = (numbers.ROOT / path).read_text()
    assert (
        numbers.rendered(path, written.replace("Managed NAT gateway IPs, 1..16.", "Managed NAT gateway IPs, 1..20."))
        == written
    )


def test_the_probes_defaults_and_bounds_are_written_into_the_agent_from_the_profile_model() -> None:
    """The continuous probe's port, peers and streams (defaults and bounds) live in wirespeed.profile.model; the
    agent's probe package reads them from GO_FILE, so its flags and the profile schema cannot disagree."""
    from wirespeed.profile import model

    go = numbers.go_source()
    for name, value in (
        ("ProbePort", model.PROBE_DEFAULT_PORT),
        ("ProbePeers", model.PROBE_DEFAULT_PEERS),
        ("ProbeMaxPeers", model.PROBE_MAX_PEERS),
        ("ProbeStreams", model.PROBE_DEFAULT_STREAMS),
        ("ProbeMaxStreams", model.PROBE_MAX_STREAMS),
    ):
        assert f"const {name} = {value}\n" in go
    assert model.Probe() == model.Probe(
        port=model.PROBE_DEFAULT_PORT, peers=model.PROBE_DEFAULT_PEERS, streams=model.PROBE_DEFAULT_STREAMS
    )
    assert (model.PROBE_PEERS.high, model.PROBE_STREAMS.high) == (model.PROBE_MAX_PEERS, model.PROBE_MAX_STREAMS)
    probe = numbers.ROOT / "agent/internal/probe"
    assert "DefaultProbePort = numbers.ProbePort\n" in (probe / "fleet.go").read_text()
    peers = (probe / "peers.go").read_text()
    assert "DefaultFleetPeers = numbers.ProbePeers\n" in peers
    assert "MaxFleetPeers     = numbers.ProbeMaxPeers\n" in peers
    client = (probe / "client.go").read_text()
    assert "MaxStreams       = numbers.ProbeMaxStreams\n" in client
    assert "DefaultStreams   = numbers.ProbeStreams\n" in client


def test_the_two_twenties_of_the_by_workload_rows_have_two_names() -> None:
    """The agent's --snat-workload-top default (pairs per node) and size --by-workload's rows per peak are two
    numbers that are both 20: each has its home, and the agent's flag reads its constant from GO_FILE."""
    from wirespeed import names
    from wirespeed.measure import workloads

    rows = next(
        number for number in numbers.REGISTRY if number.value is workloads.MAX_WORKLOADS and "rows" in number.name
    )
    top = next(number for number in numbers.REGISTRY if number.go_name == "SNATWorkloadTop")
    assert (rows.home, top.home) == ("components/wirespeed/measure/workloads.py", "components/wirespeed/names.py")
    assert top.value == names.SNAT_WORKLOAD_TOP
    assert f"const SNATWorkloadTop = {names.SNAT_WORKLOAD_TOP}\n" in numbers.go_source()
    snat = (numbers.ROOT / "agent/cmd/wirespeed-agent/snat.go").read_text()
    assert '"snat-workload-top", numbers.SNATWorkloadTop,' in snat
    path = "docs/sizing.md"
    text = (numbers.ROOT / path).read_text()
    assert "(pairs outside a node's top 20, or past the 20 rows printed)" in text
    assert list(numbers.copies(rows, path, text)) == list(numbers.copies(top, path, text)) == []
