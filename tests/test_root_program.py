"""The root Pulumi program (`pulumi up` from stack config) run under Pulumi's own mocks: no cloud, no CLI.

Each case runs in a fresh interpreter because the Pulumi runtime keeps global state (mocks, config, stack).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

# Runs __main__.py with the real pulumi SDK: mocks answer resource registrations, config comes from
# set_all_config exactly as `pulumi config set` would provide it, and exports are collected.
RUNNER = """
import json, runpy, sys
import pulumi

class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return [f"{args.name}-id", args.inputs]

    def call(self, args):
        return {}

pulumi.runtime.set_mocks(Mocks(), project="wirespeed", stack="test", preview=False)
pulumi.runtime.set_all_config({"wirespeed:workload": sys.argv[1]} if sys.argv[1] else {})
exports = {}
pulumi.export = lambda name, value: exports.__setitem__(name, value)
runpy.run_path(sys.argv[2], run_name="__main__")
print(json.dumps(exports))
"""


def run_program(workload: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUNNER, workload, str(ROOT / "__main__.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )


@pytest.mark.parametrize(
    ("workload", "cloud_key"),
    [
        pytest.param("", "allocated_outbound_ports", id="bundled-example"),
        pytest.param("examples/workloads/checkout-api.json", "allocated_outbound_ports", id="azure"),
        pytest.param("examples/workloads/ingest-eks.json", "ips", id="aws"),
    ],
)
def test_program_exports_the_plan(workload, cloud_key):
    out = run_program(workload)
    assert out.returncode == 0, out.stderr
    exports = json.loads(out.stdout)
    assert set(exports) == {"instance_type", "outbound", "rings", "backlog", "profile"}
    assert cloud_key in exports["outbound"]
    assert exports["profile"]["sysctls"]["net.core.netdev_max_backlog"] == exports["backlog"]["netdev_max_backlog"]


def test_bad_workload_config_fails_with_the_field():
    out = run_program("no/such/workload.json")
    assert out.returncode != 0
    assert (
        "workload: 'no/such/workload.json' is not allowed: a readable file (No such file or directory)" in out.stderr
    )


def test_dev_extra_pins_the_same_pulumi_as_the_project():
    import tomllib

    project = {
        line.split("==")[0]: line for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line
    }
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    assert project["pulumi"] in dev
