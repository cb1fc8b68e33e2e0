"""scripts/testreport.py: the skip summary that ends `make test`, over real pytest and `go test -json` runs.

Each test writes a tiny suite into a temporary folder and runs the real runner on it (pytest with --junitxml, `go
test` through testreport.py's own wrapper), then reads what the summary makes of it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ALLOWED_MISSING_PROVIDERS, ROOT, require

SCRIPT = ROOT / "scripts" / "testreport.py"
AZURERM = "needs the Terraform provider hashicorp/azurerm in a plugin mirror"
KUBERNETES = "needs the Terraform provider hashicorp/kubernetes in a plugin mirror"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("testreport", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


testreport = load()

GO_SUITE = """package toy

import "testing"

func TestPasses(t *testing.T) { t.Log("chatter plain go test hides") }

func TestNeedsAzurerm(t *testing.T) {
	t.Skip("AZURERM (looked in [])")
}

func TestTable(t *testing.T) {
	t.Run("breaks", func(t *testing.T) { t.Error("boom") })
	t.Run("needs qemu", func(t *testing.T) { t.Skip("needs qemu-system-x86_64\\non PATH") })
	t.Run("fine", func(t *testing.T) {})
}
"""

PY_SUITE = """
import pytest

def test_passes():
    pass

def test_needs_kubernetes_provider():
    pytest.skip("KUBERNETES (looked in nowhere)")

def test_needs_a_tool():
    pytest.skip("needs promtool")

def test_fails():
    assert False

@pytest.mark.xfail(reason="known")
def test_expected_to_fail():
    assert False
"""


@pytest.fixture(scope="module")
def go_events(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """A real `go test` of GO_SUITE through testreport.py: the events file, what it printed and go's status."""
    require(None if shutil.which("go") else "needs the go toolchain on PATH")
    module = tmp_path_factory.mktemp("gomod")
    (module / "go.mod").write_text("module example.com/toy\n\ngo 1.22\n")
    (module / "toy_test.go").write_text(GO_SUITE.replace("AZURERM", AZURERM))
    events = module / "results" / "go-toy.json"
    return (events, *go_test(module, events))


def go_test(module: Path, events: Path) -> tuple[str, int]:
    """testreport.py's `go` command in ``module``: what it printed and go's status."""
    printed = io.StringIO()
    with contextlib.chdir(module):
        status = testreport.run_go(events, ["-count=1", "./..."], out=printed)
    return printed.getvalue(), status


@pytest.fixture(scope="module")
def junit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real pytest run of PY_SUITE with --junitxml, as `make test-python` runs it."""
    folder = tmp_path_factory.mktemp("pysuite")
    (folder / "test_toy.py").write_text(PY_SUITE.replace("KUBERNETES", KUBERNETES))
    report = folder / "pytest.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", str(folder)],
        cwd=folder,
        capture_output=True,
        check=False,
    )
    return report


def test_go_output_is_what_plain_go_test_shows_not_the_json(go_events):
    _, printed, status = go_events
    assert status == 1
    assert "boom" in printed
    assert "--- FAIL: TestTable/breaks" in printed
    assert "--- FAIL: TestTable " in printed
    assert "FAIL\texample.com/toy" in printed
    assert "chatter plain go test hides" not in printed
    assert "needs the Terraform provider" not in printed, "skips are for the summary, as plain go test hides them"
    assert '"Action"' not in printed


def test_every_go_skip_is_collected_with_its_reason(go_events):
    events, _, _ = go_events
    results = testreport.collect([events])
    assert (results.passed, results.failed) == (2, 2)  # TestPasses, fine; breaks and its parent TestTable
    assert [(s.test, s.reason) for s in results.skipped] == [
        ("example.com/toy TestNeedsAzurerm", f"{AZURERM} (looked in [])"),
        ("example.com/toy TestTable/needs_qemu", "needs qemu-system-x86_64 on PATH"),
    ]


def test_every_pytest_skip_is_collected_with_its_reason(junit):
    results = testreport.collect([junit])
    assert (results.passed, results.failed) == (2, 1)  # the xfail counts as passing, as pytest's exit status does
    assert [(s.test.split("::")[-1], s.reason) for s in results.skipped] == [
        ("test_needs_kubernetes_provider", f"{KUBERNETES} (looked in nowhere)"),
        ("test_needs_a_tool", "needs promtool"),
    ]


def test_summary_lists_every_skip_and_fails_ci_only_on_one_not_allowed(go_events, junit):
    results = testreport.collect([go_events[0], junit])
    allowed = testreport.allowed_providers()
    lines, status = testreport.summary(results, allowed, ci=True)
    text = "\n".join(lines)
    assert status == 1
    assert "==> Skipped tests: 4" in text
    assert "1 need the Terraform provider hashicorp/azurerm, allowed: " in text
    assert "1 need the Terraform provider hashicorp/kubernetes, allowed: " in text
    assert "2 NOT on the allow-list (tests/allowed-skips.json):" in text
    assert "      needs promtool" in text
    assert "CI=true: 2 skipped test(s) not on the allow-list" in text
    assert lines[-1] == "total: 4 passed, 3 failed, 4 skipped"
    assert testreport.summary(results, allowed, ci=False)[1] == 0


def test_summary_passes_ci_when_only_allowed_skips_remain(go_events):
    results = testreport.collect([go_events[0]])
    results.skipped = [s for s in results.skipped if "azurerm" in s.reason]
    assert testreport.summary(results, testreport.allowed_providers(), ci=True)[1] == 0


def test_a_suite_without_results_fails_the_summary(tmp_path):
    lines, status = testreport.summary(testreport.collect([tmp_path / "pytest.xml"]), {}, ci=False)
    assert status == 1
    assert f"No results in {tmp_path / 'pytest.xml'}: that suite did not run" in "\n".join(lines)


def test_the_allow_list_is_exactly_the_providers_ci_cannot_get():
    """hashicorp/aws is on the CI image (/opt/tf-plugins): a CI run without it is broken, so only the release with
    regional NAT gateways, which the image lacks, is listed."""
    listed = set(testreport.allowed_providers())
    assert (
        listed
        == ALLOWED_MISSING_PROVIDERS
        == {
            "hashicorp/azurerm",
            "hashicorp/kubernetes",
            "hashicorp/aws >= 6.24.0",
        }
    )


@pytest.mark.parametrize(
    ("reason", "entry"),
    [
        (
            "needs the Terraform provider hashicorp/aws >= 6.24.0 in a plugin mirror (the mirrors hold [5.100.0])",
            "hashicorp/aws >= 6.24.0",
        ),
        ("needs the Terraform provider hashicorp/aws >= 6.25.0 in a plugin mirror", None),
        ("needs the Terraform provider hashicorp/aws in a plugin mirror", None),
        (AZURERM, "hashicorp/azurerm"),
    ],
)
def test_a_versioned_entry_allows_only_that_minimum(reason, entry):
    skip = testreport.Skip("go terratest", "example.com/toy TestRegional", reason)
    assert testreport.allowed_by(skip, testreport.allowed_providers()) == entry


def test_the_command_line_summary_exits_1_under_ci(junit):
    env = {**os.environ, "CI": "true"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "summary", str(junit)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == "total: 2 passed, 1 failed, 2 skipped"


def test_a_go_build_failure_is_printed_as_go_prints_it(tmp_path):
    require(None if shutil.which("go") else "needs the go toolchain on PATH")
    (tmp_path / "go.mod").write_text("module example.com/broken\n\ngo 1.22\n")
    source = 'package broken\n\nimport "testing"\n\nfunc TestX(t *testing.T) { undefined(t) }\n'
    (tmp_path / "broken_test.go").write_text(source)
    printed, status = go_test(tmp_path, tmp_path / "go-broken.json")
    assert status != 0
    assert "undefined: undefined" in printed
    assert "FAIL\texample.com/broken [build failed]" in printed
