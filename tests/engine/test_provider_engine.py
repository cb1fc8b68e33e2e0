"""The component provider under the real engine (issue 26, item 2): the CLI `make engine` builds launches
provider/bin/pulumi-resource-wirespeed (no Python language host: the Go module proxy does not serve it) for
`pulumi package get-schema` and for a YAML program (`runtime: yaml`, the YAML language host `make engine` builds)
that constructs wirespeed components.

What cannot run here: `pulumi up` of a cloud component with good inputs. The AKS and EKS components create their
children through azure-native and aws, which the module proxy does not serve. Bad inputs never get that far: the
component refuses them before anything registers, which is what this checks. `NodeTuning`'s children go through
the kubernetes provider, which `make engine` builds: tests/engine/test_engine_yaml_node_tuning.py runs it end to end.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pulumi
import pytest

import pulumi_cli
from conftest import ROOT, require
from test_provider import BAD
from wirespeed.kubernetes.node_tuning import NodeTuning
from wirespeed.provider import host

PLUGIN_DIR = ROOT / "provider"
PLUGIN = PLUGIN_DIR / "bin" / "pulumi-resource-wirespeed"


def _run(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """`pulumi ARGS` with the provider run by this test's Python (the virtualenv that has the library)."""
    return pulumi_cli.run(args, cwd, home, extra_env={"WIRESPEED_PROVIDER_PYTHON": sys.executable})


def test_get_schema_from_the_running_plugin_is_the_committed_schema(tmp_path):
    require(pulumi_cli.missing())
    done = _run(["package", "get-schema", str(PLUGIN)], tmp_path, tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads((PLUGIN_DIR / "schema.json").read_text())


def _program(folder: Path, component: type[Any], properties: dict[str, Any]) -> Path:
    """A YAML project constructing ``component`` through the plugin in provider/."""
    folder.mkdir(parents=True)
    program = {
        "name": "wirespeed-provider-test",
        "runtime": "yaml",
        "plugins": {"providers": [{"name": "wirespeed", "path": str(PLUGIN.parent)}]},
        "resources": {"tuned": {"type": f"wirespeed:index:{component.__name__}", "properties": properties}},
    }
    (folder / "Pulumi.yaml").write_text(json.dumps(program, indent=2))  # JSON is YAML
    return folder


def _python_api_error(component: type[Any], args: Any) -> pulumi.InputPropertiesError:
    with pytest.raises(pulumi.InputPropertiesError) as raised:
        component("tuned", args)
    return raised.value


@pytest.mark.parametrize(("component", "properties", "args"), BAD)
def test_bad_inputs_fail_the_preview_and_the_update_with_the_python_apis_words(tmp_path, component, properties, args):
    require(pulumi_cli.missing())
    expected = _python_api_error(component, args)
    assert len(expected.errors) > 1
    home = tmp_path / "home"
    project = _program(tmp_path / "project", component, properties)
    assert _run(["stack", "init", "test"], project, home).returncode == 0
    for command in (["preview"], ["up", "--yes"]):
        done = _run(command, project, home)
        out = done.stdout + done.stderr
        assert done.returncode != 0, out
        # Every problem, in one run, as the engine lists a provider's property errors (errorToMessage in
        # pkg/resource/deploy/source_eval.go): "- property PATH [with value V] has a problem: REASON".
        for error in expected.errors:
            line = rf"- property {re.escape(error['property_path'])}( with value .*)? has a problem: "
            assert re.search(line + re.escape(error["reason"]), out), out
    exported = _run(["stack", "export"], project, home)
    assert exported.returncode == 0, exported.stderr
    resources = json.loads(exported.stdout)["deployment"].get("resources") or []
    assert [r["type"] for r in resources if not r["type"].startswith("pulumi:")] == []


def test_a_bad_profile_document_fails_the_preview_with_the_profiles_own_words(tmp_path):
    """What only another language can send (a profile as a document, not a Profile): the provider's own check,
    in the words `wirespeed profile` uses for a profile file, every problem at once."""
    require(pulumi_cli.missing())
    properties = {"profiles": [{"name": "Bad Name", "mtu": {"value": 1}}]}
    with pytest.raises(pulumi.InputPropertiesError) as raised:
        host.to_args(NodeTuning, properties)
    assert len(raised.value.errors) > 1
    home = tmp_path / "home"
    project = _program(tmp_path / "project", NodeTuning, properties)
    assert _run(["stack", "init", "test"], project, home).returncode == 0
    done = _run(["preview"], project, home)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    for error in raised.value.errors:
        line = rf"- property {re.escape(error['property_path'])}( with value .*)? has a problem: "
        assert re.search(line + re.escape(error["reason"]), out), out
