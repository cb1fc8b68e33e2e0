# ruff: noqa: F811  (the `netns` fixture is imported from tests/userdata_run.py and taken as a parameter)
"""Bottlerocket user data: sysctls in ``settings.kernel.sysctl``, and the agent image as a bootstrap container for the
rings and MTU (``settings.bootstrap-containers.wirespeed-tuning``), parsed back with tomllib as Bottlerocket reads
TOML. The bootstrap container's user-data is then handed to the real agent (``wirespeed-agent bootstrap``, the mode
the image runs with no arguments on Bottlerocket) in a fresh network namespace with veth links: MTU applied, the
ring read veth refuses reported, exit 0. veth has no rings; rings on real drivers: agent/test/qemu.

Golden renders (tests/golden/userdata): UPDATE_GOLDEN=1 .venv/bin/pytest tests/userdata/test_userdata_bottlerocket.py
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from builtin_profiles import THROUGHPUT_BACKLOG
from conftest import ROOT
from userdata_run import (
    IP,
    netns,  # noqa: F401 (the pytest fixture)
)
from wirespeed.aws.capacity import plan_node_group
from wirespeed.aws.karpenter import plan_karpenter
from wirespeed.manifests.options import DEFAULT_IMAGE, IMAGE_ALLOWED
from wirespeed.problems import Problem
from wirespeed.profile import load_profile, validate_profile
from wirespeed.profiles import builtin_profile
from wirespeed.userdata import BOOTSTRAP_CONTAINER, render_bottlerocket_settings

GOLDEN = ROOT / "tests" / "golden" / "userdata"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
ECR_IMAGE = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/wirespeed-agent:v1.2.3"


def check_golden(name: str, text: str) -> None:
    golden = GOLDEN / name
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"{name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"


def bootstrap(text: str) -> dict[str, Any]:
    container: dict[str, Any] = tomllib.loads(text)["settings"]["bootstrap-containers"][BOOTSTRAP_CONTAINER]
    return container


def decoded_profile(text: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(base64.b64decode(bootstrap(text)["user-data"]))
    return document


def test_node_group_golden_ena_express():
    """The managed node group's launch template user data: ENA Express adds MTU 8,900 and the ENA RX ring."""
    plan, problems = plan_node_group(
        instance_types=["c6in.8xlarge"], operating_system="bottlerocket", ena_express=True, agent_image=ECR_IMAGE
    )
    assert problems == []
    assert plan is not None
    check_golden("nodegroup-throughput-ena-express-bottlerocket.toml", plan.user_data)


def test_karpenter_golden_graviton():
    """The EC2NodeClass userData of a Bottlerocket Karpenter pool (Karpenter merges its own settings into it)."""
    plan, problems = plan_karpenter(
        name="graviton", profile="balanced", architecture="arm64", operating_system="bottlerocket"
    )
    assert problems == []
    assert plan is not None
    check_golden("karpenter-balanced-bottlerocket.toml", plan.user_data)
    assert bootstrap(plan.user_data)["source"] == DEFAULT_IMAGE


def test_qemu_real_driver_golden():
    """The settings agent/test/qemu/bootstrap_test.go hands the agent in the guest, as Bottlerocket would: rendered
    from qemu-bootstrap.json beside it (e1000e rings and MTU)."""
    profile = load_profile((GOLDEN / "qemu-bootstrap.json").read_text())
    text = render_bottlerocket_settings(profile)
    check_golden("qemu-bootstrap-bottlerocket.toml", text)
    assert decoded_profile(text)["mtu"] == {"value": 8900, "drivers": ["e1000e"]}


def test_bootstrap_container_settings():
    text = render_bottlerocket_settings(builtin_profile("throughput"), ECR_IMAGE)
    settings = tomllib.loads(text)["settings"]
    assert settings["kernel"]["sysctl"] == {"net.core.netdev_max_backlog": str(THROUGHPUT_BACKLOG)}
    container = bootstrap(text)
    # mode always: rings and MTU do not survive a reboot; essential false: a failure never halts the boot.
    assert {k: v for k, v in container.items() if k != "user-data"} == {
        "source": ECR_IMAGE,
        "mode": "always",
        "essential": False,
    }


def test_user_data_is_the_profile_without_sysctls_and_passes_the_schema():
    profile = builtin_profile("throughput")
    document = decoded_profile(render_bottlerocket_settings(profile))
    carried = validate_profile(document)
    assert (carried.rings, carried.mtu, carried.interfaces) == (profile.rings, profile.mtu, profile.interfaces)
    assert document["sysctls"] == {}
    assert "outbound" not in document
    # EC2 user data is capped at 16 KB before base64; the whole TOML stays far below it.
    assert len(render_bottlerocket_settings(profile).encode()) < 4096


def test_no_bootstrap_container_without_rings_or_mtu():
    sysctls_only = validate_profile({"name": "backlog", "sysctls": {"net.core.netdev_max_backlog": 4096}})
    settings = tomllib.loads(render_bottlerocket_settings(sysctls_only))["settings"]
    assert "bootstrap-containers" not in settings
    assert settings["kernel"]["sysctl"] == {"net.core.netdev_max_backlog": "4096"}


@pytest.mark.parametrize("image", ["wirespeed-agent", "ghcr.io/wirespeed-io/wirespeed-agent", "", 3])
def test_an_untagged_or_malformed_agent_image_is_refused_by_both_plans(image):
    _, problems = plan_node_group(instance_types=["c6in.8xlarge"], operating_system="bottlerocket", agent_image=image)
    assert problems == [Problem("agent_image", image, IMAGE_ALLOWED)]
    _, problems = plan_karpenter(name="pool", operating_system="bottlerocket", agent_image=image)
    assert problems == [Problem("agent_image", image, IMAGE_ALLOWED)]


@pytest.fixture(scope="module")
def agent_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("WIRESPEED_AGENT_BIN"):
        return Path(os.environ["WIRESPEED_AGENT_BIN"])
    binary = tmp_path_factory.mktemp("agent") / "wirespeed-agent"
    subprocess.run(
        ["go", "build", "-trimpath", "-o", str(binary), "./cmd/wirespeed-agent"],
        cwd=ROOT / "agent",
        env=os.environ | {"CGO_ENABLED": "0"},
        check=True,
        timeout=600,
    )
    return binary


@pytest.mark.netns
def test_the_real_agent_applies_the_bootstrap_user_data_in_a_netns(tmp_path, netns, agent_binary):
    profile = validate_profile(
        {
            "name": "veth-lab",
            "interfaces": {"roles": ["virtual"], "include": ["ws*"]},
            "rings": {"veth": {"rx": 512}},
            "mtu": {"value": 9000, "drivers": ["veth"]},
            "sysctls": {"net.core.netdev_max_backlog": 4096},
        }
    )
    container = bootstrap(render_bottlerocket_settings(profile))
    # Where Bottlerocket writes the decoded user-data for the container (agent/cmd/wirespeed-agent/bootstrap.go).
    user_data = tmp_path / "user-data"
    user_data.write_bytes(base64.b64decode(container["user-data"]))
    proc_sys = tmp_path / "proc-sys"
    (proc_sys / "net" / "core").mkdir(parents=True)
    (proc_sys / "net" / "core" / "netdev_max_backlog").write_text("1000\n")
    command = [str(agent_binary), "bootstrap", "--user-data", str(user_data), "--proc-sys-root", str(proc_sys)]
    run = subprocess.run(
        [IP, "netns", "exec", netns, *command],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    (line,) = run.stdout.splitlines()
    report = json.loads(line)
    assert (report["profile"], report["state"]) == ("veth-lab", "degraded")
    assert {i["name"]: i["mtu"] for i in report["interfaces"]} == {
        "ws0": {"desired": 9000, "current": 9000},
        "ws1": {"desired": 9000, "current": 9000},
    }
    assert all("ETHTOOL_GRINGPARAM" in i["error"] for i in report["interfaces"])
    for link in ("ws0", "ws1"):
        mtu = subprocess.run([IP, "netns", "exec", netns, "cat", f"/sys/class/net/{link}/mtu"], capture_output=True)
        assert mtu.stdout.strip() == b"9000"
    # The sysctls are Bottlerocket's (settings.kernel.sysctl): the bootstrap container leaves them alone.
    assert report["sysctls"] == {}
    assert (proc_sys / "net" / "core" / "netdev_max_backlog").read_text() == "1000\n"
