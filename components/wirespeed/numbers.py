"""Numbers that cross a boundary (Python, stack config, Terraform, Go, READMEs), each with one home.

A registered number is defined once, in its home module beside its source. Every other place that must spell it
out (a Terraform default, a ``Pulumi.yaml`` default, a help text in a README, a prose line in a doc) is a *slot*:
a pattern around the digits, which ``python -m wirespeed.numbers`` (``make regen``) rewrites from the home. Places
that can read the value at run time do so instead (Python imports it; the Go agent reads the embedded profile
schema, which is generated). ``tests/test_numbers_one_home.py`` fails when a slot is stale and when a literal
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
from pathlib import Path

from wirespeed.sizing import aks_sysctls, azure_lb

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
)
# Not scanned: Go tests, module tests, the generated Azure README (wirespeed.azure.docs renders it from the code)
# and this registry, whose patterns and examples spell the numbers on purpose.
NOT_SCANNED = (
    "agent/*_test.go",
    "*/tests/*",
    "components/wirespeed/azure/README.md",
    "components/wirespeed/numbers.py",
)
# What every file with a slot says at its top, so whoever edits it knows those digits are written from elsewhere.
MARKER = (
    "Numbers registered in wirespeed.numbers are written into this file by python -m wirespeed.numbers (make regen) "
    "from their one home; do not edit them here."
)
# Generated regions inside a scanned file (modules' input tables come from variables.tf through tfdocs).
GENERATED_REGION = re.compile(r"<!-- BEGIN_TF_DOCS -->.*?<!-- END_TF_DOCS -->", re.S)


@dataclass(frozen=True)
class Slot:
    """A place outside the home that spells the number: ``pattern`` finds it, its group ``n`` holds the digits."""

    path: str
    pattern: str


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
    examples: tuple[tuple[str, str], ...] = ()
    """(path, words on the line) of worked examples: inputs that happen to equal the value, or arithmetic shown
    with it (``1.36 x 240 x 1.25 = 408``), which stay right if the default changes."""


def _plain(value: int) -> str:
    return str(value)


def _thousands(value: int) -> str:
    return f"{value:,}"


_AKS_BACKLOG = aks_sysctls.BY_KERNEL_NAME["net.core.netdev_max_backlog"]

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
            Slot("modules/sizing/variables.tf", r"hold_seconds\n    \(1\.\.3,600, default (?P<n>\d+)\)"),
            Slot("modules/sizing/variables.tf", r"hold_seconds           = optional\(number, (?P<n>\d+)\)"),
            Slot("docs/sizing.md", r"\(`--hold-seconds`, default (?P<n>\d+)\)"),
            Slot("docs/sizing.md", r"less than the hold time ago \((?P<n>\d+) s\)"),
            Slot("docs/references.md", r"~4 minutes after use \(the (?P<n>\d+) s hold\)"),
            Slot("agent/README.md", r"`hold_seconds`, else `(?P<n>\d+)s`"),
            Slot("agent/README.md", r"`--snat-hold` overrides both, default (?P<n>\d+) s"),
            Slot("agent/README.md", r"releasing a TCP port (?P<n>\d+) s after a FIN/ACK"),
            Slot("agent/README.md", r"16 s after a RST, so (?P<n>\d+) s over-counts"),
        ),
        examples=(
            ("components/wirespeed/sizing/azure_lb.py", "needs exactly 408 ports"),
            ("modules/sizing/README.md", "held 240 s"),
            ("modules/sizing/README.md", "hold_seconds           = 240"),
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
)


def _slot_matches(number: Number, slot: Slot, text: str) -> list[re.Match[str]]:
    found = list(re.finditer(slot.pattern, text))
    if len(found) != 1:
        raise LookupError(f"{slot.path}: slot {slot.pattern!r} of {number.name} matches {len(found)} times, not once")
    return found


def marker_line(path: str) -> str:
    return f"<!-- {MARKER} -->\n" if path.endswith(".md") else f"# {MARKER}\n"


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
            text = text[:start] + number.spell(number.value) + text[end:]
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
    if path == number.home:
        return
    spans = [m.span("n") for slot in number.slots if slot.path == path for m in re.finditer(slot.pattern, text)]
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


def main() -> int:
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
