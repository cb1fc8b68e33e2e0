"""The real Pulumi engine for the tests: the CLI, YAML language host and kubernetes provider `make engine` builds
from source (scripts/build-pulumi-engine.sh) at the versions builders/pulumi/versions pins, run offline.

Offline means: a Pulumi home and a `file://` backend of the test's own, no update check, no plugin download, and
every HTTP(S) request the CLI or the pack might make sent to a loopback port nothing listens on, so a call that
should not happen fails here instead of leaving the machine. There is no Python language host (the Go module proxy
does not serve it) and CLI v3.276 needs one to start a pack from its folder; it does start an executable named by
`--policy-pack` (with the engine's address as its argument, reading the PulumiPolicy.yaml beside it for the pack's
version). So each run points `--policy-pack` at a link to the `pulumi-analyzer-policy-python` the build script
writes beside the CLI, next to a copy of policies/wirespeed/PulumiPolicy.yaml; WIRESPEED_POLICY_PACK tells it the
pack folder and WIRESPEED_POLICY_PYTHON this virtualenv's Python (which holds what the pack's requirements.txt
installs), and it runs `python -u -m pulumi.policy` there as Pulumi's own shim does. Everything past the launch is
the engine's: reading the export, decrypting secrets, configuring the pack from --policy-pack-config, calling
Remediate, Analyze and AnalyzeStack, printing the verdict and the exit status.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ROOT / "builders" / "pulumi" / "versions"
BIN = ROOT / "build" / "pulumi" / "bin"
PULUMI = BIN / "pulumi"
POLICY_SHIM = BIN / "pulumi-analyzer-policy-python"
PACK = ROOT / "policies" / "wirespeed"
CLI_MODULE = "github.com/pulumi/pulumi/pkg/v3"
YAML_MODULE = "github.com/pulumi/pulumi-yaml"
KUBERNETES_MODULE = "github.com/pulumi/pulumi-kubernetes/provider/v4"
# A loopback port nothing listens on (9, discard: never served here): where any HTTP(S) request is sent.
NOWHERE = "http://127.0.0.1:9"
TIMEOUT_S = 300  # bounds a hang only; a run takes seconds (bench/setup/RESULTS.md)
# What `pulumi policy analyze` prints when a mandatory policy failed (pkg/cmd/pulumi/policy/policy_analyze.go);
# exit 1 without it is an error (the file refused, the pack crashed).
MANDATORY_FAILED = "one or more mandatory policy violations were found"


@dataclass(frozen=True)
class Pin:
    """One line of builders/pulumi/versions."""

    module: str
    version: str
    folder: str  # the builder module, builders/pulumi/<folder>
    command: str  # the package built, relative to the module (./X: the builder module's own package X)
    variable: str  # what -X links the version into

    @property
    def binary(self) -> Path:
        return BIN / self.command.rsplit("/", 1)[-1]


def pins() -> dict[str, Pin]:
    """builders/pulumi/versions by module path."""
    found = {}
    for line in VERSIONS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            pin = Pin(*line.split())
            found[pin.module] = pin
    return found


def missing() -> str | None:
    """Why the engine cannot run here (to skip, or fail under CI=true), or None."""
    want = pins()[CLI_MODULE].version
    for path in (*(pin.binary for pin in pins().values()), POLICY_SHIM):
        if not os.access(path, os.X_OK):
            return f"needs the Pulumi engine built from source ({path.relative_to(ROOT)} is missing): run `make engine`"
    have = subprocess.run([PULUMI, "version"], capture_output=True, text=True, timeout=60, check=False).stdout.strip()
    if have != want:
        return (
            f"build/pulumi/bin/pulumi is {have or 'unversioned'}, builders/pulumi/versions pins {want}: "
            "run `make engine`"
        )
    return None


def environment(home: Path, passphrase: str | None = None) -> dict[str, str]:
    """The CLI's environment: this process's PATH behind the engine's bin folder, nothing else of the caller's
    Pulumi settings (a PULUMI_CONFIG_PASSPHRASE of the caller's must not decide a test)."""
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "PULUMI_HOME": str(home / ".pulumi"),
        "PULUMI_BACKEND_URL": f"file://{home / 'state'}",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_SKIP_CONFIRMATIONS": "true",
        "PULUMI_COPILOT": "false",
        "NO_COLOR": "1",
        "HTTP_PROXY": NOWHERE,
        "HTTPS_PROXY": NOWHERE,
        "http_proxy": NOWHERE,
        "https_proxy": NOWHERE,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "WIRESPEED_POLICY_PYTHON": sys.executable,
        "WIRESPEED_POLICY_PACK": str(PACK),
    }
    if passphrase is not None:
        env["PULUMI_CONFIG_PASSPHRASE"] = passphrase
    return env


@dataclass(frozen=True, order=True)
class Finding:
    rule: str
    urn: str
    level: str


@dataclass(frozen=True)
class Analysis:
    """One `pulumi policy analyze --json` run: its exit code, verdict and findings."""

    returncode: int
    findings: frozenset[Finding]
    events: tuple[dict[str, Any], ...]
    stdout: str
    stderr: str

    @property
    def messages(self) -> dict[Finding, list[str]]:
        """Each violation's message as the rule wrote it: the pack's SDK sends the policy's description, a newline,
        then the message (pulumi_policy's analyzer servicer)."""
        found: dict[Finding, list[str]] = {}
        for event in self.events:
            if "policyEvent" in event:
                message = event["policyEvent"]["message"]
                found.setdefault(_finding(event), []).append(message.split("\n", 1)[-1])
        return found

    @property
    def verdict(self) -> str:
        """pass | mandatory | error: exit 1 is both a mandatory violation and any error; the message tells."""
        if self.returncode == 0:
            return "pass"
        if self.returncode == 1 and MANDATORY_FAILED in self.stdout + self.stderr:
            return "mandatory"
        return "error"


def run(
    args: list[str], cwd: Path, home: Path, passphrase: str | None = "", extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`pulumi ARGS --non-interactive` in ``cwd`` against the local backend in ``home`` (an empty passphrase by
    default: the passphrase secrets provider a `file://` stack is created with, without a prompt), with
    ``extra_env`` added to the environment (what a plugin the engine launches reads)."""
    (home / "state").mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [str(PULUMI), *args, "--non-interactive"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        cwd=cwd,
        env={**environment(home, passphrase), **(extra_env or {})},
    )


def analyze(export: Path, home: Path, config: Path | None = None, passphrase: str | None = None) -> Analysis:
    """`pulumi policy analyze --file EXPORT --policy-pack policies/wirespeed --json [--policy-pack-config F]`."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "state").mkdir(exist_ok=True)
    command = [str(PULUMI), "policy", "analyze", "--file", str(export), "--policy-pack", str(launcher(home)), "--json"]
    if config is not None:
        command += ["--policy-pack-config", str(config)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        cwd=home,
        env=environment(home, passphrase),
    )
    events = tuple(_events(done.stdout))
    findings = frozenset(
        _finding(event) for event in events if {"policyEvent", "policyRemediationEvent"} & event.keys()
    )
    return Analysis(done.returncode, findings, events, done.stdout, done.stderr)


def _finding(event: dict[str, Any]) -> Finding:
    """A violation, or a remediation (`pulumi policy analyze` reports what it would change, and changes nothing)."""
    if "policyEvent" in event:
        body = event["policyEvent"]
        return Finding(body["policyName"], body.get("resourceUrn", ""), body["enforcementLevel"])
    body = event["policyRemediationEvent"]
    return Finding(body["policyName"], body.get("resourceUrn", ""), "remediate")


def launcher(home: Path) -> Path:
    """The executable `--policy-pack` names: a link to the shim beside a copy of the pack's PulumiPolicy.yaml."""
    folder = home / "pack"
    folder.mkdir(exist_ok=True)
    shutil.copyfile(PACK / "PulumiPolicy.yaml", folder / "PulumiPolicy.yaml")
    link = folder / "wirespeed"
    if not link.is_symlink():
        link.symlink_to(POLICY_SHIM)
    return link


def _events(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            events.append(json.loads(line))
    return events
