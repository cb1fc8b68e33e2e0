from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import settings

from apiserver import ApiServer, PrerequisiteMissingError, running

# Speed is measured in bench/, never asserted in tests: hypothesis' default 200 ms per-example deadline is a
# timed assertion that fails at random on a loaded 2-core CI machine.
settings.register_profile("wirespeed", deadline=None)
settings.load_profile("wirespeed")

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"


def python_examples() -> list[Path]:
    """The example projects written in Python (`runtime: python`, or `runtime: {name: python}`): the ones
    `wirespeed plan` runs and a requirements.txt installs. Examples in other languages use the wirespeed provider
    instead: examples/ts-aks and examples/go-node-tuning through the generated SDKs (tests/engine/test_sdks.py
    compiles them), examples/yaml-node-tuning by type token (tests/engine/test_engine_yaml_node_tuning.py runs it
    under the engine)."""
    found = []
    for project in sorted((ROOT / "examples").glob("*/Pulumi.yaml")):
        runtime = yaml.safe_load(project.read_text())["runtime"]
        if (runtime["name"] if isinstance(runtime, dict) else runtime) == "python":
            found.append(project.parent)
    return found


# Capability bits (include/uapi/linux/capability.h) a test needs to create network namespaces and links.
NETNS_CAPABILITIES = {"CAP_SYS_ADMIN": 21, "CAP_NET_ADMIN": 12}
PROC_SELF_STATUS = Path("/proc/self/status")  # replaced by tests/repo/test_netns_marker.py to run unprivileged


def missing_netns_privilege(proc_status: str, euid: int) -> str | None:
    """Why a process with this /proc/self/status and euid cannot create network namespaces, or None.

    The same rule and words as the Go tests (agent/internal/links/linkstest.RequireNetnsPrivilege): the
    effective capabilities decide, not the euid alone, so root without them in a container is caught too.
    """
    effective = 0
    for line in proc_status.splitlines():
        if line.startswith("CapEff:"):
            effective = int(line.split()[1], 16)
    missing = [name for name, bit in NETNS_CAPABILITIES.items() if not effective >> bit & 1]
    if not missing:
        return None
    return f"needs root to create network namespaces (missing {', '.join(missing)}; euid {euid}): run the tests as root"


# The only prerequisites a CI run may lack (scripts/testreport.py and tests/terratest/tftest read the same file).
ALLOWED_SKIPS: dict[str, Any] = json.loads((ROOT / "tests" / "allowed-skips.json").read_text())
ALLOWED_MISSING_PROVIDERS: frozenset[str] = frozenset(ALLOWED_SKIPS["terraform_providers"])


def prerequisite_gate(reason: str | None, ci: str | None, allowed_in_ci: bool = False) -> tuple[str, str] | None:
    """What to do with a test whose prerequisite (root, a built binary, a Debian tool, a provider plugin) is missing
    for ``reason``: None to run it, else ("skip" | "fail", message). Under CI=true a missing prerequisite fails, as
    the QEMU and Go netns tests do, so a CI job cannot pass by running nothing; only what tests/allowed-skips.json
    names (``allowed_in_ci``: Terraform providers CI cannot get) is skipped there too."""
    if reason is None:
        return None
    if ci == "true" and not allowed_in_ci:
        return "fail", reason + "; CI=true, so this is a failure, not a skip"
    return "skip", reason


def require(reason: str | None, allowed_in_ci: bool = False) -> None:
    """Skip the running test naming ``reason`` (fail it under CI=true unless ``allowed_in_ci``); nothing when
    ``reason`` is None."""
    decision = prerequisite_gate(reason, os.environ.get("CI"), allowed_in_ci)
    if decision is None:
        return
    action, message = decision
    if action == "fail":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def require_provider(address: str, present: bool, looked_in: str) -> None:
    """Skip the running test when the Terraform provider ``address`` (hashicorp/aws) is not in a plugin mirror; under
    CI=true fail it instead, unless tests/allowed-skips.json names the provider. The words are tftest.NeedProvider's,
    which scripts/testreport.py matches against the allow-list."""
    if present:
        return
    require(
        f"needs the Terraform provider {address} in a plugin mirror (looked in {looked_in}; provider plugins cannot "
        "be downloaded here): docs/development.md, 'Skipped tests', says how to get it",
        allowed_in_ci=address in ALLOWED_MISSING_PROVIDERS,
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("netns") is None:
        return
    require(missing_netns_privilege(PROC_SELF_STATUS.read_text(), os.geteuid()))


@pytest.fixture(scope="session")
def profile_vectors() -> dict[str, Any]:
    return json.loads((VECTORS / "profiles.json").read_text())


@pytest.fixture(scope="session")
def apiserver() -> Iterator[ApiServer]:
    """One real etcd + kube-apiserver for the session (tests/apiserver.py); skipped locally, failed under CI=true,
    when etcd or the built kube-apiserver is missing."""
    try:
        with running() as server:
            yield server
    except PrerequisiteMissingError as exc:
        require(str(exc))
