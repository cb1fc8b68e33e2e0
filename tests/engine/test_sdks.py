"""The wirespeed Pulumi package's generated SDKs (sdk/, issue 26 item 3): current, and compiling against Pulumi's own
SDKs from the package registries, with the example programs that use them.

- Current: scripts/gen-sdks.sh (Pulumi's code generators, pkg/v3 at the pinned version) writes into a temporary
  folder exactly what sdk/ holds; `make regen` rewrites sdk/.
- TypeScript: examples/ts-aks installed by `npm ci` from its package-lock.json (@pulumi/pulumi from npm) with
  sdk/nodejs beside it as in this repository: the SDK's postinstall compiles it with tsc, then `tsc --noEmit`
  type-checks the program against it, and a program with a wrong argument fails.
- Go: examples/go-node-tuning (its go.mod replaces the SDK's module with ../../sdk/go, and requires
  github.com/pulumi/pulumi/sdk/v3 from the Go module proxy): `go build` and `go vet` of the SDK and the program, and a
  program with a wrong argument fails. -trimpath as the engine's build uses, so the compiled dependencies they share
  come from the Go build cache.
- Python: sdk/python installs (uv, no dependencies) and every component imports with this virtualenv's pulumi.

Each needs its tool (go; node and npm; uv): without it the test skips, and fails under CI=true (tests/conftest.py).
Cold and warm times: bench/setup/RESULTS.md. Nothing here runs a program: no language host for TypeScript, Go or
Python can be built here (docs/languages.md, "What CI cannot run").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pulumi_cli
from conftest import ROOT, require
from test_pulumi_engine_build import required

SDK = ROOT / "sdk"
SCHEMA = json.loads((ROOT / "provider" / "schema.json").read_text())
COMPONENTS = sorted(token.rsplit(":", 1)[-1] for token in SCHEMA["resources"])
TS_EXAMPLE = ROOT / "examples" / "ts-aks"
GO_EXAMPLE = ROOT / "examples" / "go-node-tuning"
SDKGEN = ROOT / "builders" / "pulumi" / "sdkgen"
LANGUAGES = ("go", "nodejs", "python")  # what scripts/gen-sdks.sh writes under sdk/
# What installs or builds leave in a copy and no generator writes (each SDK's own .gitignore lists them).
BUILT = shutil.ignore_patterns("node_modules", "bin", "build", "*.egg-info", "__pycache__")
TIMEOUT_S = 900  # bounds a hang only: a cold Go build or npm download takes minutes on 2 loaded cores


def _need(tool: str, why: str) -> str:
    found = shutil.which(tool)
    require(None if found else f"needs {tool} on PATH ({why})")
    assert found is not None
    return found


def _run(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _committed() -> dict[str, bytes]:
    """sdk/<language>/ as git sees it: tracked files and new ones, not what its .gitignore files exclude."""
    listed = _run(["git", "ls-files", "-co", "--exclude-standard", "--", *(f"sdk/{lang}" for lang in LANGUAGES)], ROOT)
    assert listed.returncode == 0, listed.stderr
    return {name.removeprefix("sdk/"): (ROOT / name).read_bytes() for name in listed.stdout.splitlines()}


def test_the_sdk_generator_uses_the_pinned_pulumi_release():
    """One pin for pkg/v3 (builders/pulumi/versions): the generators are the engine's release (scripts/gen-sdks.sh
    refuses to run otherwise), resolved with the engine's builder's replace, so both share the Go build cache."""
    pinned = pulumi_cli.pins()[pulumi_cli.CLI_MODULE].version
    assert required(SDKGEN / "go.mod", pulumi_cli.CLI_MODULE) == pinned, (
        f"builders/pulumi/sdkgen/go.mod does not require pkg/v3 {pinned} as builders/pulumi/versions pins: run "
        f"(cd builders/pulumi/sdkgen && go get github.com/pulumi/pulumi/pkg/v3@{pinned} && go mod tidy), "
        "then make regen"
    )
    replaces = [
        [line for line in (folder / "go.mod").read_text().splitlines() if line.startswith("replace ")]
        for folder in (SDKGEN, SDKGEN.parent / "cli")
    ]
    assert replaces[0] == replaces[1]


def test_the_go_sources_are_gofmt_clean_and_vetted():
    """The generator and the Go example (the SDK's own files are gofmt'ed by the generator, and vetted below)."""
    _need("go", "builders/pulumi/sdkgen and examples/go-node-tuning are Go")
    unformatted = _run(["gofmt", "-l", SDKGEN, GO_EXAMPLE], ROOT)
    assert unformatted.returncode == 0, unformatted.stderr
    assert unformatted.stdout == "", f"gofmt needed: {unformatted.stdout}"
    vetted = _run(["go", "vet", "-trimpath", "."], SDKGEN)
    assert vetted.returncode == 0, vetted.stdout + vetted.stderr


def test_the_committed_sdks_are_what_the_generators_write(tmp_path):
    _need("go", "scripts/gen-sdks.sh builds builders/pulumi/sdkgen")
    done = _run([ROOT / "scripts" / "gen-sdks.sh", tmp_path / "sdk"], ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    generated, committed = _files(tmp_path / "sdk"), _committed()
    stale = sorted({name for name in generated.keys() | committed.keys() if generated.get(name) != committed.get(name)})
    assert not stale, f"sdk/ is stale ({len(stale)} files differ: {stale[:8]}): run `make regen` and commit sdk/"
    assert {name.split("/", 1)[0] for name in generated} == set(LANGUAGES)


def _layout(tmp_path: Path, sdk: str, example: Path) -> Path:
    """sdk/<sdk> and the example copied into tmp_path as they sit in this repository (the example's relative
    reference to the SDK kept), without anything an earlier install built; the example's copy."""
    shutil.copytree(SDK / sdk, tmp_path / "sdk" / sdk, ignore=BUILT)
    copy = tmp_path / "examples" / example.name
    shutil.copytree(example, copy, ignore=BUILT)
    return copy


@pytest.fixture(scope="module")
def ts_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/ts-aks installed by `npm ci`: @pulumi/pulumi and TypeScript from npm at the lock's versions, the
    SDK (file:../../sdk/nodejs, installed as a copy: .npmrc install-links) compiled by its postinstall."""
    npm = _need("npm", "the TypeScript SDK and examples/ts-aks install @pulumi/pulumi and TypeScript with npm")
    example = _layout(tmp_path_factory.mktemp("ts"), "nodejs", TS_EXAMPLE)
    done = _run(
        [npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"], example, {"npm_config_update_notifier": "false"}
    )
    assert done.returncode == 0, (
        f"{done.stdout}{done.stderr}\nnpm ci failed in a copy of examples/ts-aks; after a change to sdk/nodejs's "
        "package.json refresh the lock there: npm install --package-lock-only"
    )
    return example


def test_the_typescript_sdk_compiles_with_tsc(ts_example):
    built = ts_example / "node_modules" / "@pulumi" / "wirespeed" / "bin"
    for component in COMPONENTS:
        stem = component[0].lower() + component[1:]
        assert (built / f"{stem}.d.ts").is_file(), f"the SDK's postinstall (tsc) wrote no bin/{stem}.d.ts"


def test_the_typescript_example_type_checks_against_the_sdk(ts_example):
    done = _run([ts_example / "node_modules" / ".bin" / "tsc", "--noEmit"], ts_example)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_typescript_program_with_a_wrong_argument_fails_to_type_check(ts_example):
    """The check above type-checks against the SDK's types, not `any`: a required input left out is an error."""
    bad = ts_example / "bad.ts"
    bad.write_text(
        'import * as wirespeed from "@pulumi/wirespeed";\n'
        'new wirespeed.NetworkOptimizedCluster("c", { location: "westeurope" });\n'
    )
    options = ["--noEmit", "--strict", "--skipLibCheck", "--target", "ES2022", "--module", "commonjs"]
    done = _run([ts_example / "node_modules" / ".bin" / "tsc", *options, bad.name], ts_example)
    assert done.returncode != 0
    assert "resourceGroupName" in done.stdout, done.stdout


@pytest.fixture(scope="module")
def go_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _need("go", "the Go SDK and examples/go-node-tuning are built and vetted with go")
    return _layout(tmp_path_factory.mktemp("go"), "go", GO_EXAMPLE)


SDK_PACKAGES = "github.com/wirespeed-io/wirespeed/sdk/go/wirespeed/..."


def test_the_go_sdk_and_example_build_and_vet(go_example):
    for command in (["build", "-trimpath", "-o", os.devnull], ["vet", "-trimpath"]):
        done = _run(["go", *command, ".", SDK_PACKAGES], go_example)
        assert done.returncode == 0, f"go {' '.join(command)}: {done.stdout}{done.stderr}"


def test_a_go_program_with_a_wrong_argument_fails_to_build(go_example):
    main = go_example / "main.go"
    text = main.read_text()
    assert "Profiles:   profiles," in text
    main.write_text(text.replace("Profiles:   profiles,", 'Profiles:   "throughput",'))
    try:
        done = _run(["go", "vet", "-trimpath", "."], go_example)
    finally:
        main.write_text(text)
    assert done.returncode != 0
    assert "Profiles" in done.stderr or "[]interface" in done.stderr, done.stderr


def test_the_python_sdk_installs_and_imports(tmp_path):
    uv = os.environ.get("UV") or shutil.which("uv")
    require(None if uv else "needs uv on PATH to install sdk/python (make test passes the uv it installed as UV)")
    assert uv is not None
    source = tmp_path / "python"
    shutil.copytree(SDK / "python", source, ignore=BUILT)
    target = tmp_path / "site"
    done = _run([uv, "pip", "install", "--python", sys.executable, "--target", target, "--no-deps", source], tmp_path)
    assert done.returncode == 0, done.stderr
    probe = f"import pulumi_wirespeed as w; print([c for c in {COMPONENTS!r} if not hasattr(w, c)])"
    imported = _run([sys.executable, "-c", probe], tmp_path, {"PYTHONPATH": str(target)})
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "[]"


def test_the_languages_page_names_every_component():
    page = (ROOT / "docs" / "languages.md").read_text()
    assert [c for c in COMPONENTS if f"`wirespeed:index:{c}`" not in page] == []
