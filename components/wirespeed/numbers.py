"""Numbers that cross a boundary (Python, stack config, Terraform, Go, READMEs), each with one home.

A registered number is defined once, in its home module beside its source. Every other place that must spell it
out (a Terraform default, a ``Pulumi.yaml`` default, a help text in a README, a prose line in a doc) is a *slot*:
a pattern around the digits, which ``python -m wirespeed.numbers`` (``make regen``) rewrites from the home. Places
that can read the value at run time do so instead (Python imports it; the Go agent reads the embedded profile
schema, which is generated). ``tests/repo/test_numbers_one_home.py`` fails when a slot is stale and when a literal
copy of a registered number turns up anywhere in the scanned surfaces outside its home, its slots and the worked
examples listed here.

    python -m wirespeed.numbers      # rewrite every slot from the homes; prints what it changed
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from wirespeed import names
from wirespeed.manifests import node_tuning
from wirespeed.measure import workloads
from wirespeed.profile import model as profile_model
from wirespeed.sizing import aks_sysctls, azure_lb, nat_gateway, snat_limits

ROOT = Path(__file__).resolve().parents[2]

# The surfaces a number crosses into, as git pathspec-like globs (fnmatch, repository-relative). Tests, golden files
# and vectors are outputs of the code, not homes or copies, and are not scanned.
SURFACES = (
    "components/wirespeed/*.py",
    "Pulumi*.yaml",
    "modules/*.tf",
    "modules/*README.md",
    "agent/*.go",
    "README.md",
    "agent/README.md",
    "docs/*.md",
    "examples/*.py",
    "examples/*.md",
    "examples/*.yaml",
    "examples/*.tf",
    "examples/*.json",
)
# Not scanned: Go tests, module tests, the generated Azure README (wirespeed.azure.docs renders it from the code)
# and this registry, whose patterns and examples spell the numbers on purpose.
NOT_SCANNED = (
    "agent/internal/numbers/numbers.go",  # GO_FILE, written whole from the registry
    "agent/*_test.go",
    "*/tests/*",
    "components/wirespeed/azure/README.md",
    "components/wirespeed/numbers.py",
)
# What every file with a slot says at its top, so whoever edits it knows those digits are written from elsewhere.
# One line short enough for a Python comment.
MARKER = (
    "Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: "
    "do not edit them."
)
# The Go agent's copy of the numbers it needs at compile time (a flag default, the image's exposed port): the
# registry's numbers with a go_name, as Go constants. The agent imports it instead of typing the digits.
GO_FILE = "agent/internal/numbers/numbers.go"
# Generated regions inside a scanned file (modules' input tables come from variables.tf through tfdocs).
GENERATED_REGION = re.compile(r"<!-- BEGIN_TF_DOCS -->.*?<!-- END_TF_DOCS -->", re.S)


@dataclass(frozen=True)
class Slot:
    """A place outside the home that spells the number: ``pattern`` finds it, its group ``n`` holds the digits."""

    path: str
    pattern: str
    spell: Callable[[int], str] | None = None
    """How this slot writes the number when not as the number's own ``spell`` (the headroom 25 as ``1.25``)."""


@dataclass(frozen=True)
class Number:
    name: str
    value: int
    home: str
    """The file that defines it (with its source cited there)."""
    spell: Callable[[int], str]
    """How the slots write it (``240``, ``3,240,000``)."""
    digits: str
    """A regex for the number in any spelling a copy might use (``240``, ``240.0``; ``3,240,000``, ``3_240_000``)."""
    meaning: str
    """A regex for words on the same line that tie the digits to this number's meaning (a 240 that is a bucket count
    or part of an address is not the SNAT hold)."""
    slots: tuple[Slot, ...]
    go_name: str | None = None
    """The Go constant the agent reads it as (in GO_FILE), when Go needs it at compile time (a flag's default)."""
    examples: tuple[tuple[str, str], ...] = ()
    """(path, words on the line) of lines that are not copies: worked examples (inputs that happen to equal the
    value, or arithmetic shown with it, ``1.36 x 240 x 1.25 = 408``, which stay right if the default changes), and
    other facts that share the digits and the words (the NAT gateway's fixed 4-minute UDP timer beside the 4-minute
    default TCP idle timeout), each cited at its own home."""


def _plain(value: int) -> str:
    return str(value)


def _thousands(value: int) -> str:
    return f"{value:,}"


def _multiplier(percent: int) -> str:
    """A headroom percent as the multiplier the sizing takes: 25 as ``1.25``."""
    return f"{1 + percent / 100:g}"


def _whole(name: str, value: float) -> int:
    if value != int(value):
        raise ValueError(f"{name} {value} is not a whole number: the registry holds whole numbers")
    return int(value)


def _around(path: str, before: str, after: str) -> Slot:
    """A slot for the digits between two literal texts on a line (thousands separators allowed)."""
    return Slot(path, re.escape(before) + r"(?P<n>[\d,]+)" + re.escape(after))


def _small(digits: str) -> str:
    """A regex for a small number's digits standing alone: not inside a word (ipv4), a decimal or a bigger number."""
    return rf"(?<![\w.,]){digits}(?![\w]|[.,]\d)"


def _bound(digits: str) -> str:
    """``_small`` that also finds the top of a range (the 16 of ``1..16``), never a decimal's digits (``10.16``)."""
    return rf"(?<![\w,/:])(?<![^.]\.){digits}(?![\w/]|[.,]\d)"


_AKS_BACKLOG = aks_sysctls.BY_KERNEL_NAME["net.core.netdev_max_backlog"]

# Where the idle timeout's range is spelled "4..120": (path, the words before it).
_IDLE_RANGE_TEXTS = (
    ("Pulumi.yaml", r"Outbound idle timeout, "),
    ("components/wirespeed/azure/spec.py", r"Outbound flow idle timeout, "),
    ("modules/aks-outbound/variables.tf", r"Outbound flow idle timeout, "),
    ("modules/aks-outbound/README.md", r"\n- Idle timeout "),
    ("examples/aks-natgw/Pulumi.yaml", r"NAT gateway idle timeout, "),
    ("examples/aks-natgw/README.md", r"`idleTimeoutMinutes` \("),
)
# Lines where another 4 sits beside "idle": the load balancer's 4-minute TCP release, the NAT gateway's fixed UDP
# timer, the azurerm provider's own lower bound, and test inputs.
_IDLE_OTHER_FOURS = (
    ("components/wirespeed/sizing/azure_lb.py", "port 4 minutes after a FIN/ACK"),
    ("components/wirespeed/sizing/snat_limits.py", "TCP 4 minutes after a FIN/ACK"),
    ("components/wirespeed/sizing/snat_limits.py", "its UDP idle timeout is 4 minutes and not configurable"),
    ("components/wirespeed/sizing/snat_limits.py", "AZURE_NAT_GATEWAY_UDP_IDLE_SECONDS = 4 * 60"),
    ("components/wirespeed/terraform/aks_outbound.py", '"idle_timeout_minutes": 4}'),
    ("modules/aks-outbound/README.md", "idle timeout of 4..100 minutes on `load_balancer_profile`"),
)

# Lines where a 20 sits beside the words of the by-workload rows and is neither: pool sizes in the Terraform
# vectors' cases and a command line, a node group's size, the agent's --snat-top (destinations, not workloads).
_WORKLOAD_ROWS = r"(?i)workload|\brows\b"
_OTHER_TWENTIES = (
    ("components/wirespeed/terraform/aks_outbound.py", '("lb_workload_two_pools", [(250, "64.4%"), (20, "2")]'),
    ("components/wirespeed/terraform/sizing.py", '("workload_below_dynamic_default", [(20, "10%")]'),
    ("components/wirespeed/terraform/sizing.py", '[_pool(250, "10%"), _pool(20, "2")], workload='),
    ("docs/sizing.md", "wirespeed size azure-lb --pool 20 --from-prometheus"),
    ("examples/eks-c6in/README.md", "2..20 nodes"),
)

REGISTRY: tuple[Number, ...] = (
    Number(
        name="SNAT hold seconds (Azure load balancer's TCP port release after a FIN)",
        value=azure_lb.AZURE_LB_TCP_RELEASE_SECONDS,
        home="components/wirespeed/sizing/azure_lb.py",
        spell=_plain,
        digits=r"(?<![\d/])(?<!\d[.,])240(\.0)?(?!\d|[.,]\d)",
        meaning=r"(?i)hold|reuse|FIN",
        slots=(
            Slot("Pulumi.yaml", r"wirespeed:holdSeconds:\n(?:    .*\n)*?    default: (?P<n>\d+)"),
            Slot("modules/aks-outbound/variables.tf", r'variable "hold_seconds" \{\n[^}]*?Default (?P<n>\d+)\."'),
            Slot("modules/aks-outbound/variables.tf", r'variable "hold_seconds" \{\n[^}]*?default     = (?P<n>\d+)\n'),
            Slot("modules/node-tuning/variables.tf", r"hold_seconds \(default (?P<n>\d+):"),
            Slot("modules/sizing/variables.tf", r"hold_seconds\n    \(1\.\.[\d,]+, default (?P<n>\d+)\)"),
            Slot("modules/sizing/variables.tf", r"hold_seconds           = optional\(number, (?P<n>\d+)\)"),
            Slot("docs/sizing.md", r"\(`--hold-seconds`, default (?P<n>\d+)\)"),
            Slot("docs/sizing.md", r"less than the hold time ago \((?P<n>\d+) s\)"),
            Slot("docs/references.md", r"~4 minutes after use \(the (?P<n>\d+) s hold\)"),
            Slot("agent/README.md", r"`hold_seconds`, else `(?P<n>\d+)s`"),
            Slot("agent/README.md", r"`--snat-hold` overrides both, default (?P<n>\d+) s"),
            Slot("agent/README.md", r"releasing a TCP port (?P<n>\d+) s after a FIN/ACK"),
            Slot("agent/README.md", r"16 s after a RST, so (?P<n>\d+) s over-counts"),
            Slot("examples/aks-dsv6/README.md", r"reuse cooldown, ~(?P<n>\d+) s\."),
            Slot("examples/aks-dsv6/__main__.py", r"is then held ~(?P<n>\d+) s \(connection"),
        ),
        examples=(
            ("components/wirespeed/sizing/azure_lb.py", "needs exactly 408 ports"),
            ("modules/sizing/README.md", "held 240 s"),
            ("modules/sizing/README.md", "hold_seconds           = 240"),
            ("examples/workloads/checkout-api.json", '"hold_seconds": 240'),
        ),
    ),
    Number(
        name="AKS's maximum net.core.netdev_max_backlog",
        value=_AKS_BACKLOG.high,
        home="components/wirespeed/sizing/aks_sysctls.py",
        spell=_thousands,
        digits=r"(?<![\d,_])3[,_]?240[,_]?000(?![\d,_])",
        meaning=r"(?i)backlog|AKS",
        slots=(
            Slot("modules/sizing/README.md", r"within AKS's 1,000\.\.(?P<n>[\d,]+)\."),
            Slot("docs/cli-json.md", r"more than AKS's (?P<n>[\d,]+) would be needed"),
        ),
    ),
    Number(
        name="Workload headroom, percent (the sizing's default multiplier 1.25)",
        value=round((azure_lb.DEFAULT_HEADROOM - 1) * 100),
        home="components/wirespeed/sizing/azure_lb.py",
        spell=_plain,
        digits=r"(?<![\w.,])(1\.25|25)(?![\w]|[.,]\d)",
        meaning=r"(?i)headroom",
        slots=(
            Slot("Pulumi.yaml", r"wirespeed:headroomPercent:\n(?:    .*\n)*?    default: (?P<n>\d+)"),
            Slot(
                "modules/aks-outbound/variables.tf",
                r'variable "headroom" \{\n[^}]*?Default (?P<n>[\d.]+)\."',
                _multiplier,
            ),
            Slot(
                "modules/aks-outbound/variables.tf",
                r'variable "headroom" \{\n[^}]*?default     = (?P<n>[\d.]+)\n',
                _multiplier,
            ),
            Slot("modules/sizing/variables.tf", r"headroom \(1\.\.\d+, default (?P<n>[\d.]+)\)", _multiplier),
            Slot(
                "modules/sizing/variables.tf",
                r"headroom               = optional\(number, (?P<n>[\d.]+)\)",
                _multiplier,
            ),
            Slot("docs/sizing.md", r"--headroom (?P<n>\d+)% \(default\)"),
            Slot(
                "components/wirespeed/azure/spec.py",
                r"or the measured peak, 1\.\.\d+\. Default (?P<n>[\d.]+)\.\"\"\"",
                _multiplier,
            ),
        ),
        examples=(
            ("Pulumi.measured.yaml", "wirespeed:headroomPercent: 25"),
            ("components/wirespeed/azure/stack_config.py", "plus a quarter"),
            ("components/wirespeed/cli/measured.py", "a percent (25%) or a multiplier (1.25)"),
            ("components/wirespeed/cli/measured.py", "from {low} to {high} (1.25)"),
            ("components/wirespeed/cli/measured.py", "``25%`` is 1.25"),
            ("components/wirespeed/cli/size.py", "a multiplier (1.25) or a percent (25%)"),
            ("components/wirespeed/sizing/measured.py", "``1.25`` as ``25%``"),
            ("docs/sizing.md", "`wirespeed:headroomPercent 25`"),
            ("examples/aks-dsv6/README.md", "12/s x 240 s x 1.25 headroom"),
            ("examples/workloads/checkout-api.json", '"headroom": 1.25'),
            ("modules/sizing/README.md", "with 1.25 headroom is 408 ports"),
            ("modules/sizing/README.md", "headroom               = 1.25"),
        ),
    ),
    Number(
        name="Headroom ceiling (the sizing's multiplier 10, wirespeed:headroomPercent's 900)",
        value=_whole("HEADROOM_RANGE's top", azure_lb.HEADROOM_RANGE[1]),
        home="components/wirespeed/sizing/azure_lb.py",
        spell=_plain,
        digits=_small("(10|900)"),
        meaning=r"(?i)headroom",
        slots=(
            Slot("Pulumi.yaml", r"or the measured peak, 0\.\.(?P<n>\d+) percent", lambda top: str((top - 1) * 100)),
            Slot("modules/aks-outbound/variables.tf", r"Multiplier over the mean ports in use, 1\.\.(?P<n>\d+)\."),
            Slot("modules/sizing/variables.tf", r"headroom \(1\.\.(?P<n>\d+), default"),
            Slot("components/wirespeed/azure/spec.py", r"or the measured peak, 1\.\.(?P<n>\d+)\. Default"),
        ),
        examples=(
            # Surges of 10% and test inputs on a line that names the headroom.
            ("docs/sizing.md", "default 10%, the AKS API default"),
            ("examples/workloads/README.md", '`"10%"`), `outbound`'),
            ("components/wirespeed/terraform/aks_outbound.py", '("invalid_headroom", [(10, "10%")]'),
            ("components/wirespeed/terraform/aks_outbound.py", '("infeasible_ports_per_node", [(10, "1")]'),
            ("components/wirespeed/terraform/sizing.py", '("invalid_headroom", [(10, "10%")]'),
        ),
    ),
    Number(
        name="SNAT pressure threshold, percent (the agent's SNATPortPressure and the UsedSnatPorts alert)",
        value=snat_limits.DEFAULT_PRESSURE_PERCENT,
        home="components/wirespeed/sizing/snat_limits.py",
        spell=_plain,
        digits=_small(r"80(\.0)?"),
        meaning=r"(?i)pressure|threshold|alert|UsedSnatPorts",
        slots=(
            Slot("Pulumi.yaml", r"wirespeed:snatAlertPercent:\n(?:    .*\n)*?    default: (?P<n>\d+)"),
            Slot("agent/README.md", r"`outbound\.pressure_percent` \(default (?P<n>\d+)\)"),
            Slot(
                "components/wirespeed/azure/spec.py", r"Percent of the allocated ports, 1\.\.99\. Default (?P<n>\d+)\."
            ),
            Slot("docs/sizing.md", r"when one destination passes\n(?P<n>\d+)% of it"),
            Slot("modules/node-tuning/README.md", r"fires\) when one passes (?P<n>\d+)% of"),
            Slot("modules/node-tuning/variables.tf", r"pressure_percent \(default (?P<n>\d+)\)"),
            Slot("examples/eks-regional-nat/README.md", r"when one destination on a node passes (?P<n>\d+)% of"),
        ),
        examples=(
            ("Pulumi.dev.yaml", "wirespeed:snatAlertPercent: 80"),
            ("agent/README.md", "(81%, threshold 80%)"),
            ("agent/README.md", "80%); checkout/payments-api"),
            ("components/wirespeed/drift/judge.py", "threshold 80%)``"),
            ("examples/aks-dsv6/README.md", "`UsedSnatPorts` > 80% of 3,600"),
            ("examples/aks-dsv6/__main__.py", "SnatAlertSpec(threshold_percent=80)"),
        ),
    ),
    Number(
        name="The root project's connections/s per node (Pulumi.yaml's wirespeed:connectionsPerSecond default)",
        value=12,
        home="Pulumi.yaml",
        spell=_plain,
        digits=_small(r"12(\.0)?"),
        meaning=r"(?i)connections.?per.?second|connectionsPerSecond|connections/s",
        slots=(),
        examples=(
            # Inputs that are 12 on purpose: each example's own workload, and command lines.
            ("Pulumi.dev.yaml", "wirespeed:connectionsPerSecond: 12"),
            ("README.md", "--connections-per-second 12"),
            ("components/wirespeed/cli/size.py", "--connections-per-second 12"),
            ("docs/aks.md", "12 connections/s per node"),
            ("docs/aks.md", "connections_per_second=12"),
            ("docs/inputs.md", "write 12 without quotes"),
            ("docs/sizing.md", "--connections-per-second 12"),
            ("examples/aks-dsv6/README.md", "12 new connections/s per node"),
            ("examples/aks-dsv6/__main__.py", "12 new connections/s per node"),
            ("examples/aks-existing-cluster/Pulumi.dev.yaml", "connectionsPerSecond: 12"),
            ("examples/aks-nap/README.md", "12 new connections/s x 240 s x 1.25"),
            ("examples/workloads/README.md", "12 new connections/s per node"),
            ("examples/workloads/checkout-api.json", '"connections_per_second": 12'),
        ),
    ),
    Number(
        name="Outbound idle timeout's minimum, minutes (load balancer and NAT gateway)",
        value=azure_lb.OUTBOUND_IDLE_TIMEOUT_RANGE[0],
        home="components/wirespeed/sizing/azure_lb.py",
        spell=_plain,
        digits=_small("4"),
        meaning=r"(?i)idle",
        slots=tuple(Slot(path, rf"{lead}(?P<n>\d+)\.\.\d+") for path, lead in _IDLE_RANGE_TEXTS),
        examples=_IDLE_OTHER_FOURS,
    ),
    Number(
        name="Outbound idle timeout's maximum, minutes (load balancer and NAT gateway)",
        value=azure_lb.OUTBOUND_IDLE_TIMEOUT_RANGE[1],
        home="components/wirespeed/sizing/azure_lb.py",
        spell=_plain,
        digits=_small("120"),
        meaning=r"(?i)idle",
        slots=(
            *(Slot(path, rf"{lead}\d+\.\.(?P<n>\d+)") for path, lead in _IDLE_RANGE_TEXTS),
            Slot("modules/aks-outbound/README.md", r"below AKS's (?P<n>\d+): the provider"),
            Slot("modules/aks-outbound/README.md", r"the provider refuses 101\.\.(?P<n>\d+)\."),
        ),
        examples=(("components/wirespeed/terraform/aks_outbound.py", '"idle_timeout_minutes": 120'),),
    ),
    Number(
        name="AKS's default load balancer idle timeout, minutes",
        value=azure_lb.AKS_LB_DEFAULT_IDLE_TIMEOUT,
        home="components/wirespeed/sizing/azure_lb.py",
        spell=_plain,
        digits=_small("30"),
        meaning=r"(?i)idle",
        slots=(
            Slot("Pulumi.yaml", r"0 takes the default \((?P<n>\d+) load balancer"),
            Slot("components/wirespeed/azure/spec.py", r"minutes\. Default (?P<n>\d+) \(load balancer\)"),
            Slot("modules/aks-outbound/variables.tf", r"Default null: (?P<n>\d+) \(load balancer\)"),
            Slot("modules/aks-outbound/README.md", r"; default (?P<n>\d+) \(load balancer\)"),
        ),
        examples=(
            ("agent/internal/probe/server.go", "idleTimeout = 30 * time.Second"),  # the probe's HTTP keep-alive
        ),
    ),
    Number(
        name="Azure NAT gateway's default idle timeout, minutes",
        value=nat_gateway.AZURE_DEFAULT_IDLE_TIMEOUT,
        home="components/wirespeed/sizing/nat_gateway.py",
        spell=_plain,
        digits=_small("4"),
        meaning=r"(?i)idle",
        slots=(
            Slot("Pulumi.yaml", r"load balancer, (?P<n>\d+) NAT gateway\)"),
            Slot("components/wirespeed/azure/spec.py", r"\(load balancer\) or (?P<n>\d+) \(NAT gateway\)\.\"\"\""),
            Slot("modules/aks-outbound/variables.tf", r"\(load balancer\) or (?P<n>\d+) \(NAT gateway\)\.\""),
            Slot("modules/aks-outbound/README.md", r"\(load balancer\) or (?P<n>\d+) \(NAT gateway\)\.\n"),
            Slot(
                "examples/aks-natgw/Pulumi.yaml",
                r"aks-natgw:idleTimeoutMinutes:\n(?:    .*\n)*?    default: (?P<n>\d+)",
            ),
            Slot("examples/aks-natgw/README.md", r"idle timeout (?P<n>\d+) min \|"),
        ),
        examples=_IDLE_OTHER_FOURS,
    ),
    Number(
        name="Longest hold, seconds (the workload sizing's 1..3,600 and the agent's 0..3,600)",
        value=azure_lb.WORKLOAD_HOLD_SECONDS_RANGE[1],
        home="components/wirespeed/sizing/azure_lb.py",
        spell=_thousands,
        digits=r"(?<![\d,_.])3[,_]?600(?![\d,_]|\.\d)",
        meaning=r"(?i)hold_seconds|hold seconds|SNAT port stays taken",
        slots=(
            Slot("components/wirespeed/azure/spec.py", r"reuse cooldown\)\. 1\.\.(?P<n>[\d,]+)\.\"\"\""),
            Slot("modules/aks-outbound/variables.tf", r"reuse cooldown\), 1\.\.(?P<n>[\d,]+)\. Default"),
            Slot("modules/sizing/variables.tf", r"hold_seconds\n    \(1\.\.(?P<n>[\d,]+), default"),
        ),
    ),
    Number(
        name="The agent pod's memory request in MiB (the DaemonSet's resources.requests.memory)",
        value=node_tuning.MEMORY_REQUEST_MIB,
        home="components/wirespeed/manifests/node_tuning.py",
        spell=_plain,
        digits=_small("48"),
        meaning=r"(?i)\brequests?\b",
        slots=(_around("docs/node-tuning.md", "Requests 10m CPU / ", " MiB, limit"),),
    ),
    Number(
        name="The agent pod's memory limit in MiB (the DaemonSet's resources.limits.memory)",
        value=node_tuning.MEMORY_LIMIT_MIB,
        home="components/wirespeed/manifests/node_tuning.py",
        spell=_plain,
        digits=_small("64"),
        meaning=r"(?i)\bmemory limit\b|\blimit \d+ MiB",
        slots=(_around("docs/node-tuning.md", " MiB, limit ", " MiB and no CPU limit"),),
    ),
    Number(
        name="The agent pod's Go soft memory limit in MiB (its GOMEMLIMIT)",
        value=node_tuning.GO_MEMORY_LIMIT_MIB,
        home="components/wirespeed/manifests/node_tuning.py",
        spell=_plain,
        digits=_small("48"),
        meaning=r"GOMEMLIMIT",
        slots=(_around("docs/node-tuning.md", "sets `GOMEMLIMIT=", "MiB`"),),
    ),
    Number(
        name="The agent's metrics port (--listen's default, the DaemonSet's containerPort, the image's exposed port)",
        value=node_tuning.METRICS_PORT,
        home="components/wirespeed/manifests/options.py",
        spell=_plain,
        digits=r"(?<![\d.])9808(?!\d)",
        meaning=r".",
        slots=(
            Slot("agent/README.md", r"\| `--listen ADDR` \| `:(?P<n>\d+)` \|"),
            Slot("agent/README.md", r"next to the metrics' (?P<n>\d+)\)"),
            Slot("agent/README.md", r"\n`(?P<n>\d+)/tcp`, the labels"),
        ),
        go_name="MetricsPort",
    ),
    Number(
        name="SNAT ports per public IP of an Azure NAT gateway",
        value=nat_gateway.AZURE_PORTS_PER_IP,
        home="components/wirespeed/sizing/nat_gateway.py",
        spell=_thousands,
        digits=r"(?<![\d,_.])64[,_]?512(?![\d,_]|\.\d)",
        meaning=r".",
        slots=(
            _around("Pulumi.yaml", "outbound flows of the cluster (", " per IP)"),
            _around("components/wirespeed/azure/spec.py", "IPs sized at ", " ports each (max"),
            _around("docs/cli-json.md", "| public IPs (", " ports each, max"),
            _around("docs/cli-json.md", "that limit's (", " ports, or"),
            _around("docs/sizing.md", "# Azure NAT gateway IPs (", " ports each, max"),
            _around("docs/sizing.md", "| Azure NAT gateway | ", " ports per IP,"),
            _around("docs/sizing.md", "11,000 / ", " ports and"),
            _around("examples/aks-natgw/Pulumi.yaml", "sizes the NAT gateway's IPs (", " ports each, max"),
            _around("examples/aks-natgw/README.md", "SNAT ports on demand (", " per public IP"),
            _around("examples/aks-natgw/__main__.py", "SNAT ports on demand (", " per IP)"),
            _around("modules/aks-outbound/README.md", "sized from `nat_gateway_flows` (", " ports per IP,"),
            _around("modules/aks-outbound/variables.tf", "NAT gateway IPs sized at ", " ports each"),
            _around("modules/aks-outbound/variables.tf", "(ports on demand, ", " per IP). Create-only"),
            _around("modules/sizing/README.md", "\n", " ports per IP, up to"),
            _around("modules/sizing/outputs.tf", "demand, per_ip (", "), capacity"),
        ),
    ),
    Number(
        name="SNAT ports per frontend public IP of an Azure load balancer",
        value=azure_lb.PORTS_PER_IP,
        home="components/wirespeed/sizing/azure_lb.py",
        spell=_thousands,
        digits=r"(?<![\d,_.])64[,_]?000(?![\d,_]|\.\d)",
        meaning=r"(?i)\bIPs?\b|IP\(s\)|outbound_ips",
        slots=(
            _around("docs/cli-json.md", "| `outbound_ips x ", "` |"),
            _around("docs/sizing.md", "7 IP(s) x ", " = 448,000 available"),
            _around("examples/aks-dsv6/README.md", "252,000 ports; ", " per IP."),
            _around("examples/aks-existing-cluster/README.md", "pool) <= ", " x outbound IPs`"),
            _around("modules/aks-outbound/README.md", "2 IP(s) x ", " = 128,000 available"),
            _around("modules/sizing/README.md", "The limits (", " ports per IP,"),
            _around("modules/sizing/outputs.tf", '"outbound_ips x ', '."'),
        ),
    ),
    Number(
        name="Most allocatedOutboundPorts per node on AKS (the same digits as the per-IP ports, another limit)",
        value=azure_lb.MAX_PORTS_PER_NODE,
        home="components/wirespeed/sizing/azure_lb.py",
        spell=_thousands,
        digits=r"(?<![\d,_.])64[,_]?000(?![\d,_]|\.\d)",
        meaning=r"(?i)multiple of|per node|allocatedOutboundPorts|allocated_outbound_ports",
        slots=(Slot("Pulumi.yaml", r"SNAT ports per node \(multiple of 8, up to (?P<n>\d+)\)", _plain),),
        examples=(("agent/internal/profile/messages.go", '"must be a multiple of 8 between 8 and 64,000"'),),
    ),
    Number(
        name="Simultaneous connections per IP of an AWS NAT gateway to one destination (IP, port, protocol)",
        value=nat_gateway.AWS_CONNECTIONS_PER_IP,
        home="components/wirespeed/sizing/nat_gateway.py",
        spell=_thousands,
        digits=r"(?<![\d,_.])55[,_]?000(?![\d,_]|\.\d)",
        meaning=r".",
        slots=(
            _around("Pulumi.yaml", "to its busiest destination (", " per NAT IP, max"),
            _around("agent/README.md", " (Azure) or ", " (AWS) per IP"),
            _around("components/wirespeed/audit/aws.py", "so connections failed (", " per destination per IP"),
            _around("components/wirespeed/aws/egress.py", "\n", " simultaneous connections to one destination"),
            _around("components/wirespeed/aws/nat_egress.py", "or one per AZ. ", " per IP; more than"),
            _around("components/wirespeed/aws/snat.py", "on its node with ``", " x public_ips``"),
            _around("components/wirespeed/manifests/monitoring.py", "an AWS NAT gateway's ", " connections per IP"),
            _around("components/wirespeed/profile/model.py", "Azure NAT gateway, ", " per IP for an AWS one"),
            _around("components/wirespeed/sizing/aws_nat.py", "Each IP carries ", " simultaneous"),
            _around("components/wirespeed/sizing/aws_nat.py", "to its busiest destination /\n", ")`` IPs."),
            _around("components/wirespeed/sizing/snat_limits.py", "nat-gateway-basics.html: ", " simultaneous"),
            _around("components/wirespeed/terraform/aws_nat_egress.py", "each module's rules read (", " connections"),
            _around("docs/aws-nat-egress.md", "(IP, port, protocol) | ", " | VPC User Guide"),
            _around("docs/aws-nat-egress.md", "address can support up to ", " simultaneous"),
            _around("docs/aws-nat-egress.md", "regional gateway | 32, each adding ", " connections"),
            _around("docs/aws-nat-egress.md", "(`ceil(peak / ", ")`, at least 1"),
            _around("docs/cli-json.md", "IP carries to one destination (", ") |"),
            _around("docs/eks.md", "Elastic IPs sized at ", " connections per destination"),
            _around("docs/sizing.md", "# AWS NAT IPs per AZ (", " per destination"),
            _around("docs/sizing.md", "| AWS NAT gateway | ", " connections per IP"),
            _around("docs/sizing.md", "the AZ's IPs x ", " connections to one destination |"),
            _around("examples/eks-c6in/Pulumi.yaml", "busiest destination (", " per NAT IP"),
            _around("examples/eks-c6in/README.md", "2 Elastic IPs each (", " per IP;"),
            _around("examples/eks-c6in/__main__.py", "busiest destination need (", " per IP)"),
            _around("examples/eks-regional-nat/Pulumi.yaml", "busiest destination (", " per IP, up to"),
            _around("examples/eks-regional-nat/README.md", "| Elastic IPs | ", " connections per IP ->"),
            _around("modules/aws-nat-egress-regional/README.md", "per AZ, each adding ", " concurrent"),
            _around("modules/aws-nat-egress-regional/README.md", "`ceil(peak / ", ")` Elastic IPs"),
            _around("modules/aws-nat-egress-regional/README.md", "the agent's SNATPortPressure: ", " x the"),
            _around("modules/aws-nat-egress-regional/outputs.tf", "on a node nears ", " x those IPs"),
            _around("modules/aws-nat-egress-regional/sizing.tf", "regional mode): ", " connections"),
            _around("modules/aws-nat-egress-regional/variables.tf", "the plan for ip_count x ", " connections"),
            _around("modules/aws-nat-egress-regional/variables.tf", "    every AZ: ", " per IP, more than"),
            _around("modules/aws-nat-egress-zonal/README.md", "A NAT gateway IP carries ", " simultaneous"),
            _around("modules/aws-nat-egress-zonal/README.md", "`ceil(connections / ", ")`, at"),
            _around("modules/aws-nat-egress-zonal/README.md", "planned as `ip_count x ", "` connections"),
            _around("modules/aws-nat-egress-zonal/README.md", "the agent's SNATPortPressure: ", " x the"),
            _around("modules/aws-nat-egress-zonal/outputs.tf", "on a node nears ", " x those IPs"),
            _around("modules/aws-nat-egress-zonal/sizing.tf", "(wirespeed.sizing.nat_gateway): ", " connections"),
            _around("modules/aws-nat-egress-zonal/variables.tf", "the plan for ip_count x ", " connections"),
            _around("modules/aws-nat-egress-zonal/variables.tf", "    every AZ: ", " per IP, more than"),
            _around("modules/aws-nat-egress/README.md", "from the same demand inputs (", " connections"),
            _around("modules/aws-nat-egress/variables.tf", "for every AZ: ", " per IP, at most"),
            _around("modules/sizing/README.md", "(one AWS NAT gateway, ", " connections"),
            _around("modules/sizing/outputs.tf", "    per_ip (", "), capacity"),
        ),
        examples=(
            # Worked arithmetic: a stated peak divided by the limit, an alert's threshold of a stated IP count.
            ("docs/sizing.md", "+ 25% = 87,500 / 55,000 = **2 IPs**"),
            ("examples/eks-regional-nat/README.md", "80% of 11 x 55,000"),
            ("examples/eks-regional-nat/__main__.py", "need 11 IPs (55,000 each)"),
        ),
    ),
    Number(
        name="Concurrent connections per public IP of an Azure NAT gateway to one destination endpoint",
        value=nat_gateway.AZURE_CONNECTIONS_PER_DESTINATION_PER_IP,
        home="components/wirespeed/sizing/nat_gateway.py",
        spell=_thousands,
        digits=r"(?<![\d,_.])50[,_]?000(?![\d,_]|\.\d)",
        # Not the 50,000 flows or conntrack entries the agent's cost figures count.
        meaning=r"(?i)destination|per IP|NAT gateway|Azure",
        slots=(
            _around("agent/README.md", "for `azure-load-balancer`; ", " (Azure) or"),
            _around("components/wirespeed/profile/model.py", "load balancer; ", " per IP for an Azure NAT"),
            _around("components/wirespeed/sizing/snat_limits.py", "'Performance': up to ", " concurrent"),
            _around("docs/cli-json.md", " ports, or ", " connections to one destination)"),
            _around("docs/sizing.md", " ports per IP, and ", " connections per IP"),
        ),
        examples=(
            # Worked arithmetic on a measured peak, and a sample of the measured report's wording.
            ("docs/sizing.md", "7,000 / 50,000 per destination: **1 IP**"),
            ("components/wirespeed/measure/workloads.py", "``2 IP(s) x 50,000 connections to one"),
        ),
    ),
    Number(
        name="Most IPs on an AWS zonal NAT gateway (1 primary and 7 secondary)",
        value=nat_gateway.AWS_ZONAL_MAX_IPS,
        home="components/wirespeed/sizing/nat_gateway.py",
        spell=_plain,
        digits=_bound("8"),
        # Not the 8 of the SNAT ports' multiple of 8 (8..64,000), nor the Elastic IP quota's ceiling (examples).
        meaning=r"(?i)^(?!.*multiple of 8)(?!.*\b8\.\.64,000).*(zonal|NAT gateway|NAT IP|secondary|Elastic IP|\b8 IPs\b"
        r"|gateway.s 8)",
        slots=(
            _around("Pulumi.yaml", " per NAT IP, max ", " IPs zonal"),
            _around("components/wirespeed/audit/aws.py", "add IPs, up to ", " on a\n"),
            _around("components/wirespeed/aws/egress.py", "plan_aws_nat`: at most ", " IPs per"),
            _around("components/wirespeed/aws/nat_egress.py", " per IP; more than ", " IPs ("),
            _around("components/wirespeed/aws/nat_egress.py", "in its public subnet (at most ", " IPs each)"),
            _around("components/wirespeed/rules/_natgw.py", "``secondaryAllocationIds`` (at most ", ")."),
            _around("components/wirespeed/sizing/aws_nat.py", "one gateway per AZ, at most ", " IPs each"),
            _around("components/wirespeed/sizing/snat_limits.py", "nat-gateways-regional.html), ", " on a zonal"),
            _around("components/wirespeed/terraform/aws_nat_egress.py", "to one destination, 1..", " IPs per zonal"),
            _around("docs/aws-nat-egress.md", "| IPs on a zonal NAT gateway | ", ": 1 primary"),
            _around("docs/aws-nat-egress.md", 'same page: "up to ', " IPv4 addresses"),
            _around("docs/aws-nat-egress.md", "at least 1, at most ", " zonal or"),
            _around("docs/cli-json.md", "`max_ips_per_az` | int | ", " (zonal:"),
            _around("docs/eks.md", "NAT gateway per AZ, at most ", " IPs;"),
            _around("docs/sizing.md", "per destination; zonal max ", ")"),
            _around("examples/eks-c6in/Pulumi.yaml", " per NAT IP, max ", " IPs)."),
            _around("examples/eks-regional-nat/README.md", "where a zonal gateway takes ", "):"),
            _around("examples/eks-regional-nat/README.md", "a zonal gateway tops out at ", ", "),
            _around("examples/eks-regional-nat/__main__.py", "gateway's ", " carry,"),
            _around("modules/aws-nat-egress-regional/README.md", "(a zonal gateway takes ", "). What"),
            _around("modules/aws-nat-egress-regional/examples/basic/main.tf", " zonal gateway's ", " carry"),
            _around("modules/aws-nat-egress-zonal/README.md", "\nleast 1, at most ", " (1 primary"),
            _around("modules/aws-nat-egress-zonal/sizing.tf", "at least 1, at most ", " on a zonal"),
            _around("modules/aws-nat-egress-zonal/variables.tf", "Elastic IPs per gateway, 1..", ", instead"),
            _around("modules/aws-nat-egress-zonal/variables.tf", " (", " IPs) refused (a regional"),
            _around("modules/aws-nat-egress/README.md", "in its public subnet, at\nmost ", " IPs each)"),
            _around("modules/aws-nat-egress/main.tf", "in its public subnet, at most ", " IPs"),
            _around("modules/aws-nat-egress/variables.tf", "sizing from connections: 1..", " (zonal),"),
            _around("modules/aws-nat-egress/variables.tf", "(public_subnet_ids), at most ", " IPs each."),
            _around("modules/aws-nat-egress/variables.tf", " per IP, at most ", " IPs (zonal)"),
            _around("modules/sizing/README.md", "per IP to one destination, up to ", " IPs);"),
            _around("modules/sizing/main.tf", " AWS: at most ", " IPs on a"),
            _around("modules/sizing/outputs.tf", "feasible (at most ", " IPs zonal"),
            _around("modules/sizing/variables.tf", "zonal (one AZ, at most ", " IPs) or"),
        ),
        examples=(
            # The 'Elastic IP addresses per public NAT gateway' quota's ceiling: another fact (nat_gateway.Quota).
            ("docs/aws-nat-egress.md", "default 2, adjustable up to 8"),
            ("modules/aws-nat-egress-regional/README.md", "default 2, up to 8)"),
        ),
    ),
    Number(
        name="Most IPs per AZ on an AWS regional NAT gateway",
        value=nat_gateway.AWS_REGIONAL_MAX_IPS_PER_AZ,
        home="components/wirespeed/sizing/nat_gateway.py",
        spell=_plain,
        digits=_bound("32"),
        meaning=r"(?i)regional|per AZ",
        slots=(
            _around("Pulumi.yaml", "natPrivateRouteTables, up to ", " IPs per"),
            _around("Pulumi.yaml", " IPs zonal, ", " per AZ regional"),
            _around("components/wirespeed/audit/aws.py", "\n  zonal gateway, ", " per AZ"),
            _around("components/wirespeed/aws/egress.py", "\nzonal gateway, ", " per AZ of a regional"),
            _around("components/wirespeed/aws/nat_egress.py", "\n    more than ", " per AZ"),
            _around("components/wirespeed/aws/nat_egress.py", "the VPC, no public subnet, up to ", " IPs per AZ."),
            _around("components/wirespeed/aws/snat.py", " regional gateway's ", " per AZ,"),
            _around("components/wirespeed/rules/_natgw.py", " (manual, at most ", " per AZ),"),
            _around("components/wirespeed/rules/_natgw.py", " per AZ up to ", ", so only"),
            _around("components/wirespeed/rules/_natgw.py", " a peak beyond ", " IPs"),
            _around("components/wirespeed/rules/aws_natgw_eip_quota.py", "a regional AZ takes up to ", "\n"),
            _around("components/wirespeed/sizing/aws_nat.py", "one gateway with up to ", " IPs per"),
            _around("components/wirespeed/sizing/snat_limits.py", "\n# up to ", " in the node's AZ"),
            _around("components/wirespeed/terraform/aws_nat_egress.py", " IPs per zonal gateway or 1..", " per"),
            _around("docs/aws-nat-egress.md", "| IPs per AZ on a regional gateway | ", ", each"),
            _around("docs/aws-nat-egress.md", " takes ", " IPs per"),
            _around("docs/aws-nat-egress.md", " zonal or ", " regional)"),
            _around("docs/aws-nat-egress.md", " a peak beyond ", " IPs"),
            _around("docs/cli-json.md", " secondary) or ", " (regional"),
            _around("docs/eks.md", "one gateway for the VPC, up to ", " IPs per"),
            _around("docs/sizing.md", "  # regional: ", " per"),
            _around("examples/eks-regional-nat/Pulumi.yaml", " per IP, up to ", " IPs per"),
            _around("examples/eks-regional-nat/README.md", "for every AZ, up to ", " IPs per"),
            _around("examples/eks-regional-nat/README.md", " adds IPs up to ", " per AZ;"),
            _around("examples/eks-regional-nat/__main__.py", "one regional gateway with up to ", " IPs per"),
            _around("modules/aws-nat-egress-regional/README.md", "\n", " IPs per AZ (a zonal"),
            _around("modules/aws-nat-egress-regional/README.md", " supports up to ", " IP"),
            _around("modules/aws-nat-egress-regional/README.md", " addresses given; AWS adds IPs (up to ", " per AZ)"),
            _around("modules/aws-nat-egress-regional/README.md", " checked against the ", "-per-AZ"),
            _around("modules/aws-nat-egress-regional/README.md", " regional page gives ", " per AZ"),
            _around("modules/aws-nat-egress-regional/sizing.tf", "at least 1, at most ", " per AZ."),
            _around("modules/aws-nat-egress-regional/sizing.tf", "# up to ", " IPs per"),
            _around("modules/aws-nat-egress-regional/variables.tf", "Elastic IPs per AZ, 1..", ", instead"),
            _around("modules/aws-nat-egress-regional/variables.tf", " adds IPs (up to ", " per AZ)"),
            _around("modules/aws-nat-egress-zonal/README.md", "\ngateway (up to ", " IPs per AZ: "),
            _around("modules/aws-nat-egress-zonal/variables.tf", " carries up to ", " IPs per"),
            _around("modules/aws-nat-egress/README.md", "\nthe VPC, up to ", " IPs per AZ, `ip_mode`"),
            _around("modules/aws-nat-egress/examples/basic/main.tf", " AWS adds up to ", " IPs per"),
            _around("modules/aws-nat-egress/main.tf", "for the VPC, up to ", " IPs per"),
            _around("modules/aws-nat-egress/variables.tf", " (zonal), 1..", " (regional"),
            _around("modules/aws-nat-egress/variables.tf", "availability_zones), up to ", " IPs per"),
            _around("modules/aws-nat-egress/variables.tf", " IPs (zonal) or ", " per AZ"),
            _around("modules/node-tuning/variables.tf", " regional gateway's ", " per AZ);"),
            _around("modules/sizing/main.tf", "\n# ", " per AZ on a regional one."),
            _around("modules/sizing/outputs.tf", " IPs zonal, ", " per AZ"),
            _around("modules/sizing/variables.tf", " regional (at most ", " IPs per"),
        ),
    ),
    Number(
        name="Most public IPs on an Azure NAT gateway (either SKU)",
        value=nat_gateway.AZURE_MAX_IPS,
        home="components/wirespeed/sizing/nat_gateway.py",
        spell=_plain,
        digits=_bound("16"),
        meaning=r"(?i)NAT gateway|natGateway|nat_gateway|natgw|azure-nat|max 16|most 16|up to 16 IPs|1\.\.16",
        slots=(
            _around("Pulumi.yaml", "managedNATGateway: IP count 1..", " when"),
            _around("components/wirespeed/azure/spec.py", "Managed NAT gateway IPs, 1..", ". Conflicts"),
            _around("components/wirespeed/azure/spec.py", " ports each (max ", "). Conflicts"),
            _around("components/wirespeed/sizing/snat_limits.py", "# takes up to ", " (nat_gateway"),
            _around("docs/cli-json.md", " ports each, max ", ") |"),
            _around("docs/sizing.md", "# Azure NAT gateway IPs (64,512 ports each, max ", ")"),
            _around("examples/aks-natgw/Pulumi.yaml", " ports each, max ", ")."),
            _around("examples/aks-natgw/README.md", " per public IP, 1..", " IPs)"),
            _around("examples/aks-natgw/__main__.py", "its IP count (1..", ") from"),
            _around("modules/aks-outbound/README.md", " ports per IP, at most ", ")."),
            _around("modules/aks-outbound/variables.tf", "\n    (at most ", "). Conflicts"),
            _around("modules/aks-outbound/variables.tf", "Managed NAT gateway IPs, 1..", ". Conflicts"),
            _around("modules/node-tuning/variables.tf", "an Azure NAT gateway's ", ", an AWS"),
            _around("modules/sizing/README.md", " ports per IP, up to ", " IPs) and"),
            _around("modules/sizing/outputs.tf", "feasible (at most ", " IPs) and infeasible"),
        ),
        examples=(
            ("agent/README.md", "16 s after a RST"),  # the load balancer's RST release
            ("agent/cmd/wirespeed-agent/bootstrap.go", "at most 16 KB"),  # EC2 user data
        ),
    ),
    Number(
        name="The continuous probe's default port (the profile's probe.port, the agent's --probe-port)",
        value=profile_model.PROBE_DEFAULT_PORT,
        home="components/wirespeed/profile/model.py",
        spell=_plain,
        digits=r"(?<![\d.])9[_,]?809(?!\d)",
        meaning=r".",
        slots=(
            Slot("agent/README.md", r"\(wirespeed uses port \*\*(?P<n>\d+)\*\*, next to"),
            _around("agent/README.md", "`--probe-port` (default ", ", TCP;"),
            _around("agent/README.md", "65,535, default ", "), `peers`"),
            _around("components/wirespeed/cli/render.py", "TCP port (the agent's default is ", "): sets"),
            _around("docs/node-tuning.md", "**serves TCP port ", "** (the section's"),
            _around("docs/node-tuning.md", "containerPort: ", ", hostPort:"),
            _around("docs/node-tuning.md", ", hostPort: ", ", protocol: TCP}"),
            _around("docs/node-tuning.md", "node-tuning --probe-port ", "`, `probe_port"),
            _around("docs/node-tuning.md", "`probe_port = ", "` on"),
            _around("docs/node-tuning.md", "allow ingress TCP ", " from the node"),
            _around("docs/node-tuning.md", "an inbound rule TCP ", " whose source"),
            _around("docs/node-tuning.md", "an inbound allow, TCP ", ", source"),
            _around("modules/node-tuning/README.md", "\n`probe_port = ", "` runs the agent's"),
            _around("modules/node-tuning/README.md", "containerPort = ", ", hostPort ="),
            _around("modules/node-tuning/README.md", ", hostPort = ", ", protocol"),
            _around("modules/node-tuning/README.md", "node-tuning --probe-port ", "` (`tests/vectors"),
            _around("modules/node-tuning/variables.tf", "(the agent's default is ", "): sets"),
        ),
        go_name="ProbePort",
    ),
    Number(
        name="The continuous probe's default peers per node (the profile's probe.peers, the agent's --probe-peers)",
        value=profile_model.PROBE_DEFAULT_PEERS,
        home="components/wirespeed/profile/model.py",
        spell=_plain,
        digits=_bound("8"),
        meaning=r"(?i)\bpeers\b",
        slots=(
            _around("agent/README.md", "`--probe-peers` peers (default ", ", at most"),
            _around("agent/README.md", ", default ", ") and `streams` (1 to"),
            _around("docs/node-tuning.md", "InternalIPs:\n", " peers x"),
            _around("modules/node-tuning/README.md", "default ", " peers x"),
        ),
        examples=(
            # Worked arithmetic at the defaults, a lab's own peers, and series counts at them.
            ("agent/internal/metrics/probe.go", "5,000-node fleet at 8 peers"),
            ("agent/internal/metrics/probe.go", "160 at 8 peers"),
            ("agent/internal/probe/fleet.go", "8 peers x 4 streams x 1/s"),
            ("components/wirespeed/measure/probe.py", "(8 peers x 4 streams x"),
            ("docs/node-tuning.md", "At the probe's defaults (8 peers x"),
        ),
        go_name="ProbePeers",
    ),
    Number(
        name="The continuous probe's most peers per node (the profile's probe.peers bound, --probe-peers')",
        value=profile_model.PROBE_MAX_PEERS,
        home="components/wirespeed/profile/model.py",
        spell=_plain,
        digits=_bound("32"),
        meaning=r"(?i)\bpeers\b",
        slots=(
            _around("agent/README.md", ", at most ", ") with `--probe-streams`"),
            _around("agent/README.md", "`peers` (1 to ", ", default"),
        ),
        examples=(
            # The round trips a second at the defaults (8 x 4 x 1/s), and a percent.
            ("agent/internal/probe/fleet.go", "8 peers x 4 streams x 1/s = 32 round trips/s"),
            ("docs/node-tuning.md", "1/sqrt(10), 32%"),
        ),
        go_name="ProbeMaxPeers",
    ),
    Number(
        name="The probe's default streams per peer (the profile's probe.streams, --probe-streams and probe --streams)",
        value=profile_model.PROBE_DEFAULT_STREAMS,
        home="components/wirespeed/profile/model.py",
        spell=_plain,
        digits=_bound("4"),
        meaning=r"(?i)\bstreams\b",
        slots=(
            Slot("agent/README.md", r"\| `--streams N` \| `(?P<n>\d+)` \|"),
            _around("agent/README.md", "`--probe-streams` streams each (default ", ")"),
            _around("agent/README.md", ", default ", "), each the default of its"),
            _around("docs/node-tuning.md", " peers x ", " streams at 1 round trip"),
            _around("modules/node-tuning/README.md", " peers x ", " streams) in every"),
        ),
        examples=(
            ("agent/README.md", "(4 streams x 50/s x 3 s)"),  # a lab's own streams
            ("agent/internal/probe/fleet.go", "8 peers x 4 streams x 1/s"),
            ("components/wirespeed/measure/probe.py", "(8 peers x 4 streams x"),
            ("docs/node-tuning.md", "4 streams x 1 round trip a second) one node makes"),
        ),
        go_name="ProbeStreams",
    ),
    Number(
        name="The one-off probe's most peers (wirespeed-agent probe --peer)",
        value=profile_model.PROBE_ONE_OFF_MAX_PEERS,
        home="components/wirespeed/profile/model.py",
        spell=_plain,
        digits=_bound("64"),
        meaning=r"(?i)\bpeers\b",
        slots=(_around("agent/README.md", "peers to probe, `host:port`, at most ", ", no repeats"),),
        go_name="ProbeOneOffMaxPeers",
    ),
    Number(
        name="The probe's most streams per peer (the profile's probe.streams bound, --probe-streams' and --streams')",
        value=profile_model.PROBE_MAX_STREAMS,
        home="components/wirespeed/profile/model.py",
        spell=_plain,
        digits=_bound("64"),
        meaning=r"(?i)\bstreams\b",
        slots=(
            _around("agent/README.md", "synchronous streams (connections) per peer, 1..", " |"),
            _around("agent/README.md", "65 per source address (", " streams and"),
            _around("agent/README.md", "`streams` (1 to ", ", default"),
        ),
        examples=(("agent/README.md", "A dump streams one 64 KiB buffer"),),
        go_name="ProbeMaxStreams",
    ),
    Number(
        name="(workload, destination) rows one peak names in wirespeed size --by-workload (its topk)",
        value=workloads.MAX_WORKLOADS,
        home="components/wirespeed/measure/workloads.py",
        spell=_plain,
        digits=_bound("20"),
        meaning=_WORKLOAD_ROWS,
        slots=(
            _around("docs/cli-json.md", "`workloads` (busiest first, at most ", ", each"),
            _around("docs/cli-json.md", "`--snat-workload-top`, or past the ", " rows)."),
            _around("docs/limits.md", "(`--by-workload` asks for at most ", " rows per peak"),
            _around("docs/sizing.md", ", or past the ", " rows printed)"),
        ),
        examples=_OTHER_TWENTIES,
    ),
    Number(
        name="(workload, destination) pairs the agent names per node (--snat-workload-top's default)",
        value=names.SNAT_WORKLOAD_TOP,
        home="components/wirespeed/names.py",
        spell=_plain,
        digits=_bound("20"),
        meaning=_WORKLOAD_ROWS,
        slots=(
            Slot("agent/README.md", r"\| `--snat-workload-top N` \| `(?P<n>\d+)` \|"),
            _around("agent/README.md", "the `--snat-workload-top` (default ", ") busiest pairs"),
            _around("docs/sizing.md", "`: its top ", " (workload,\ndestination) pairs"),
            _around("docs/sizing.md", "(pairs outside a node's top ", ", or past the"),
        ),
        go_name="SNATWorkloadTop",
        examples=_OTHER_TWENTIES,
    ),
)


def _slot_matches(number: Number, slot: Slot, text: str) -> list[re.Match[str]]:
    found = list(re.finditer(slot.pattern, text))
    if len(found) != 1:
        raise LookupError(f"{slot.path}: slot {slot.pattern!r} of {number.name} matches {len(found)} times, not once")
    return found


# The marker as each kind of slot file comments a line. Go's is followed by a blank line so that it never joins the
# package's doc comment (or a build constraint's comment group) below it.
_MARKER_LINES = {
    ".md": f"<!-- {MARKER} -->\n",
    ".go": f"// {MARKER}\n\n",
    ".py": f"# {MARKER}\n",
    ".tf": f"# {MARKER}\n",
    ".yaml": f"# {MARKER}\n",
    ".yml": f"# {MARKER}\n",
}


def marker_line(path: str) -> str:
    """The marker as a comment line in ``path``'s syntax; a file that has no comments (JSON) cannot hold a slot."""
    try:
        return _MARKER_LINES[PurePosixPath(path).suffix]
    except KeyError:
        raise ValueError(f"{path}: no comment syntax known for the marker, so it cannot hold a slot") from None


def rendered(path: str, text: str) -> str:
    """``text`` of ``path`` with every slot it holds written from its number's home, and the marker on top."""
    if MARKER not in text:
        text = marker_line(path) + text
    for number in REGISTRY:
        for slot in number.slots:
            if slot.path != path:
                continue
            (match,) = _slot_matches(number, slot, text)
            start, end = match.span("n")
            text = text[:start] + (slot.spell or number.spell)(number.value) + text[end:]
    return text


def slot_paths() -> list[str]:
    return sorted({slot.path for number in REGISTRY for slot in number.slots})


def scanned_files() -> list[str]:
    """Every tracked file on a surface a number crosses into."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return [
        path
        for path in listed.splitlines()
        if any(fnmatch(path, glob) for glob in SURFACES) and not any(fnmatch(path, glob) for glob in NOT_SCANNED)
    ]


def copies(number: Number, path: str, text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of each literal copy of ``number`` in ``text`` that is not its home, a slot or an example."""
    if any(path == other.home for other in REGISTRY if other is number or other.value == number.value):
        return  # its home, or the home of another number of the same value (the idle timeout's minimum and NAT's 4)
    # Every slot's digits are written from a home, whichever number's: the 4 of the idle timeout's range "4..120" is
    # not a copy of the NAT gateway's default idle timeout of 4.
    spans = [m.span("n") for other in REGISTRY for slot in other.slots if slot.path == path
             for m in re.finditer(slot.pattern, text)]  # fmt: skip
    spans += [m.span() for m in GENERATED_REGION.finditer(text)]
    offset = 0
    for lineno, line in enumerate(text.splitlines(keepends=True), 1):
        if re.search(number.meaning, line) and not any(path == p and words in line for p, words in number.examples):
            for match in re.finditer(number.digits, line):
                at = offset + match.start()
                if not any(start <= at < end for start, end in spans):
                    yield lineno, line.rstrip("\n")
                    break
        offset += len(line)


def go_source() -> str:
    """GO_FILE's text: one constant per registered number with a go_name, documented with its name and home."""
    lines = [
        "// Code generated by python -m wirespeed.numbers (make regen) from wirespeed.numbers.REGISTRY. DO NOT EDIT.",
        "",
        "// Package numbers holds the numbers the agent shares with wirespeed's Python side, each written from its one",
        "// home (the file named beside it), so the two never disagree.",
        "package numbers",
    ]
    for number in REGISTRY:
        if number.go_name is not None:
            lines += [
                "",
                f'// {number.go_name} is "{number.name}", defined in {number.home}.',
                f"const {number.go_name} = {number.value}",
            ]
    return "\n".join(lines) + "\n"


def main() -> int:
    go = ROOT / GO_FILE
    if not go.is_file() or go.read_text() != go_source():
        go.parent.mkdir(parents=True, exist_ok=True)
        go.write_text(go_source())
        print(f"wrote {GO_FILE}")
    for path in slot_paths():
        file = ROOT / path
        text = file.read_text()
        new = rendered(path, text)
        if new != text:
            file.write_text(new)
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
