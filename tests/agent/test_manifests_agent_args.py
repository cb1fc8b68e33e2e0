"""The DaemonSet's command line is one the real agent accepts, and its paths line up with the pod's mounts.

The agent is built from agent/ (as the image is) and run with the container's exact args, each path rewritten
from the pod's view (/etc/wirespeed, /host/proc/sys, /host/sys) to a temporary tree laid out as the volumes
would be, plus ``--once --dry-run`` so it reads everything and writes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from wirespeed.manifests import NodeTuningOptions, node_tuning_objects
from wirespeed.profiles import builtin_profile


@pytest.fixture(scope="session")
def agent_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    binary = tmp_path_factory.mktemp("agent") / "wirespeed-agent"
    env = os.environ | {"CGO_ENABLED": "0"}
    subprocess.run(
        ["go", "build", "-trimpath", "-o", str(binary), "./cmd/wirespeed-agent"],
        cwd=ROOT / "agent",
        env=env,
        check=True,
        timeout=600,
    )
    return binary


def daemon_set_and_config_map(profile: str) -> tuple[dict[str, Any], dict[str, Any]]:
    objs = node_tuning_objects([builtin_profile(profile)], NodeTuningOptions())
    (ds,) = [o for o in objs if o["kind"] == "DaemonSet"]
    (cm,) = [o for o in objs if o["kind"] == "ConfigMap"]
    return ds, cm


def lay_out_pod(root: Path, ds: dict[str, Any], cm: dict[str, Any]) -> list[str]:
    """Create the pod's volumes under ``root`` and return the container args pointing into it."""
    pod = ds["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"]}
    for path, volume in mounts.items():
        target = root / path.lstrip("/")
        target.mkdir(parents=True)
        if "configMap" in volume:
            assert volume["configMap"]["name"] == cm["metadata"]["name"]
            for item in volume["configMap"]["items"]:
                (target / item["path"]).write_text(cm["data"][item["key"]])
        elif volume["hostPath"]["path"] == "/proc/sys/net":
            # The host's netdev_max_backlog at its kernel default, as the agent finds it on a fresh node.
            (target / "core").mkdir()
            (target / "core" / "netdev_max_backlog").write_text("1000\n")

    def rewrite(arg: str) -> str:
        # Every absolute path in the args is a path in the pod's filesystem: move it under root.
        flag, _, value = arg.partition("=")
        return f"{flag}={root}{value}" if value.startswith("/") else arg

    return [rewrite(a) for a in container["args"]]


def container_env(ds: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the kubelet would set it on node-1 (the Downward API's spec.nodeName)."""
    (container,) = ds["spec"]["template"]["spec"]["containers"]
    fields = {"spec.nodeName": "node-1"}

    def value(e: dict[str, Any]) -> str:
        return e["value"] if "value" in e else fields[e["valueFrom"]["fieldRef"]["fieldPath"]]

    return {e["name"]: value(e) for e in container["env"]}


def run_agent(binary: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "")} | env  # no KUBERNETES_SERVICE_HOST: no API calls
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=60, check=False, env=env)


@pytest.mark.parametrize("profile", ["throughput", "balanced"])
def test_agent_accepts_the_daemon_sets_args_and_reads_the_mounted_files(agent_binary, tmp_path, profile):
    ds, cm = daemon_set_and_config_map(profile)
    args = lay_out_pod(tmp_path, ds, cm)
    assert all(str(tmp_path) in a for a in args if a.split("=", 1)[0] in {"--profile", "--proc-sys-root", "--sys-root"})

    env = container_env(ds)
    assert set(env) == {"NODE_NAME", "GOMEMLIMIT"}
    out = run_agent(agent_binary, [*args, "--once", "--dry-run"], env)

    assert "flag provided but not defined" not in out.stderr
    assert "bad flags" not in out.stderr
    assert out.returncode in (0, 1), out.stderr  # 2 would mean bad flags or an unreadable profile
    report = json.loads(out.stdout)
    # The profile came from the ConfigMap file at --profile ...
    assert report["profile"] == profile
    # ... and the sysctl was read through --proc-sys-root from where /proc/sys/net is mounted.
    want = builtin_profile(profile).sysctls.as_dict()["net.core.netdev_max_backlog"]
    assert report["sysctls"]["net.core.netdev_max_backlog"] == {"desired": want, "current": 1000}
    assert (tmp_path / "host/proc/sys/net/core/netdev_max_backlog").read_text() == "1000\n"  # dry run


def test_an_unknown_flag_is_refused_so_the_check_above_can_fail(agent_binary, tmp_path):
    ds, cm = daemon_set_and_config_map("throughput")
    args = lay_out_pod(tmp_path, ds, cm)
    out = run_agent(agent_binary, [*args, "--proc-sys-rot=/x", "--once", "--dry-run"], container_env(ds))
    assert out.returncode == 2
    assert "flag provided but not defined: -proc-sys-rot" in out.stderr


def test_the_go_runtime_refuses_a_memory_limit_in_kubernetes_units_so_the_check_above_can_fail(agent_binary, tmp_path):
    # GOMEMLIMIT takes Go's units (MiB); a quantity as resources spell it (Mi) stops the runtime before main.
    ds, cm = daemon_set_and_config_map("throughput")
    args = lay_out_pod(tmp_path, ds, cm)
    env = container_env(ds)
    assert env["GOMEMLIMIT"].endswith("MiB")
    out = run_agent(agent_binary, [*args, "--once", "--dry-run"], env | {"GOMEMLIMIT": env["GOMEMLIMIT"][:-1]})
    assert out.returncode == 2
    assert "GOMEMLIMIT" in out.stderr
