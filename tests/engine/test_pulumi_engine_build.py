"""The engine as a pinned build step (issue 26, item 1): scripts/build-pulumi-engine.sh (`make engine`) builds the
Pulumi CLI, the YAML language host and the kubernetes provider at the versions builders/pulumi/versions pins, and does
nothing when they are built."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import pulumi_cli
from conftest import ROOT, prerequisite_gate, require

SCRIPT = ROOT / "scripts" / "build-pulumi-engine.sh"


def required(go_mod: Path, module: str) -> str | None:
    """The version a go.mod's require lines (block or single) name for ``module``."""
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(module)} (v\S+)", go_mod.read_text(), flags=re.MULTILINE)
    return found[1] if found else None


def test_each_builder_module_requires_the_pinned_version():
    pins = pulumi_cli.pins()
    assert set(pins) == {pulumi_cli.CLI_MODULE, pulumi_cli.YAML_MODULE, pulumi_cli.KUBERNETES_MODULE}
    for pin in pins.values():
        go_mod = ROOT / "builders" / "pulumi" / pin.folder / "go.mod"
        assert required(go_mod, pin.module) == pin.version, (
            f"{go_mod.relative_to(ROOT)} does not require {pin.module} {pin.version} as builders/pulumi/versions pins: "
            "run `make engine` (it updates go.mod and go.sum) and commit them"
        )
        assert (go_mod.parent / "go.sum").is_file()


def test_the_cli_module_repeats_pkg_v3s_one_replace_that_is_not_a_local_path():
    # pulumi/pulumi pkg/go.mod v3.276.0: `replace github.com/atotto/clipboard => github.com/tgummerer/clipboard
    # v0.0.0-20241001131231-d02d263e614e` (its other replace, sdk/v3 => ../sdk, is the require of sdk/v3 v3.276.0).
    go_mod = ROOT / "builders" / "pulumi" / "cli" / "go.mod"
    replaces = re.findall(r"^replace (.+)$", go_mod.read_text(), flags=re.MULTILINE)
    clipboard = "github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e"
    assert replaces == [f"github.com/atotto/clipboard => {clipboard}"]
    cli = pulumi_cli.pins()[pulumi_cli.CLI_MODULE]
    assert required(go_mod, "github.com/pulumi/pulumi/sdk/v3") == cli.version


def test_the_kubernetes_builder_serves_the_provider_as_its_own_main_go_does():
    """builders/pulumi/kubernetes/pulumi-resource-kubernetes stands in for the provider's cmd/pulumi-resource-kubernetes
    (whose embedded files the module zip lacks): the same call with the same name and the same two embedded files,
    checked against the pinned module's main.go so a bump that changes it fails here."""
    require(None if shutil.which("go") else "needs the go toolchain on PATH")
    pin = pulumi_cli.pins()[pulumi_cli.KUBERNETES_MODULE]
    builder = ROOT / "builders" / "pulumi" / pin.folder
    where = subprocess.run(
        ["go", "list", "-m", "-f", "{{.Dir}}", pin.module], cwd=builder, capture_output=True, text=True, check=True
    ).stdout.strip()
    upstream = (Path(where) / "cmd" / "pulumi-resource-kubernetes" / "main.go").read_text()
    ours = (builder / pin.command / "main.go").read_text()
    assert 'var providerName = "kubernetes"' in upstream
    assert "provider.Serve(providerName, version.Version, pulumiSchema, terraformMapping)" in upstream
    assert 'provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)' in ours
    for embedded in ("//go:embed schema-embed.json", "//go:embed terraform-mapping-embed.json"):
        assert embedded in upstream
        assert embedded in ours
    assert pin.variable == f"{pin.module}/pkg/version.Version"


def test_a_missing_engine_names_make_engine_and_fails_under_ci(monkeypatch, tmp_path):
    monkeypatch.setattr(pulumi_cli, "BIN", tmp_path)
    monkeypatch.setattr(pulumi_cli, "POLICY_SHIM", tmp_path / "pulumi-analyzer-policy-python")
    monkeypatch.setattr(pulumi_cli, "ROOT", tmp_path.parent)
    reason = pulumi_cli.missing()
    assert reason is not None
    assert "run `make engine`" in reason
    assert prerequisite_gate(reason, "true") == ("fail", reason + "; CI=true, so this is a failure, not a skip")


def test_the_built_binaries_are_the_pinned_ones():
    require(pulumi_cli.missing())  # also checks `pulumi version` against the pin
    for pin in pulumi_cli.pins().values():
        stamp = (pin.binary.parent / f".{pin.binary.name}.pinned").read_text()
        assert stamp.startswith(f"{pin.module} {pin.version} "), stamp


def test_a_second_build_builds_nothing():
    require(pulumi_cli.missing())
    before = {pin.binary: pin.binary.stat().st_mtime_ns for pin in pulumi_cli.pins().values()}
    done = subprocess.run([SCRIPT], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    for pin in pulumi_cli.pins().values():
        assert f"build/pulumi/bin/{pin.binary.name} {pin.version} (up to date)" in done.stdout
    assert {binary: binary.stat().st_mtime_ns for binary in before} == before


def test_the_policy_shim_it_writes_passes_shellcheck():
    require(pulumi_cli.missing())
    require(None if shutil.which("shellcheck") else "shellcheck not found: install the Debian package shellcheck")
    done = subprocess.run(["shellcheck", pulumi_cli.POLICY_SHIM], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        pytest.param([], {}, "no policy pack: pass its folder or set WIRESPEED_POLICY_PACK", id="no-pack"),
        pytest.param(
            [str(pulumi_cli.PACK), "-virtualenv=absent-venv"],
            {},
            f"the pack's virtualenv {pulumi_cli.PACK}/absent-venv has no bin/python",
            id="virtualenv-without-python",
        ),
    ],
)
def test_the_policy_shim_says_what_is_missing(args, env, says):
    require(pulumi_cli.missing())
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WIRESPEED_POLICY_")}
    done = subprocess.run(
        [pulumi_cli.POLICY_SHIM, "127.0.0.1:1", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**clean, **env},
    )
    assert done.returncode == 1
    assert says in done.stderr


def test_the_yaml_language_host_runs_a_program_on_the_local_backend(tmp_path):
    """What the YAML examples of issue 26 stand on: the CLI finds pulumi-language-yaml beside it, runs a program
    and keeps its outputs in a `file://` backend, offline."""
    require(pulumi_cli.missing())
    program = tmp_path / "program"
    program.mkdir()
    (program / "Pulumi.yaml").write_text(
        "name: smoke\nruntime: yaml\nvariables:\n  word: wirespeed\noutputs:\n  greeting: hello ${word}\n"
    )
    home = tmp_path / "home"
    for args in (["stack", "init", "dev"], ["up", "--yes", "--skip-preview"]):
        done = pulumi_cli.run(args, program, home)
        assert done.returncode == 0, done.stdout + done.stderr
    output = pulumi_cli.run(["stack", "output", "greeting"], program, home)
    assert output.stdout.strip() == "hello wirespeed", output.stderr
