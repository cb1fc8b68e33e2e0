#!/usr/bin/env python3
"""Mutation testing of the pure sizing and rule code: how many deliberate slips do the fast tests catch?

mutmut (``pip install -e '.[bench]'``) rewrites one operator, constant or call at a time in
components/wirespeed/sizing/ and rules/ and runs, for each mutant, only the fast in-process tests that reach the
mutated function (mutmut records which tests call which function on a first clean run). A mutant the tests fail on
is killed; one they pass with survived and needs a test, or is equivalent (no behaviour differs) and is explained
in RESULTS.md.

mutmut copies sources from ``./``, ``src/`` or ``source/`` only, and reads its settings from ./pyproject.toml, so
the run happens in a scratch tree (build/mutation/ by default): ``src/wirespeed`` is a copy of the package, tests/,
components/ and examples/ are copied beside it (tests read data files through the repository root), and a
pyproject.toml carries the [tool.mutmut] settings written below. Nothing in the repository is modified.

    bench/mutation/run.py                                # every file of sizing/ and rules/
    bench/mutation/run.py --only sizing/azure_lb.py rules/aks_outbound.py rules/tuning.py
    bench/mutation/run.py --record                       # also write bench/mutation/results/<time>.json

The summary (score, survivors with their diffs) is printed and written as JSON; RESULTS.md is written by hand
from it, with every survivor explained.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchlib import REPO, loadavg, log, machine, record, source

PACKAGE = REPO / "components" / "wirespeed"
SCOPES = ("sizing", "rules")
# The fast, in-process tests of sizing and rules (~25 s in all on the bench machine; each mutant runs only those
# of them that call the mutated function). Tests that start the console script or the policy pack's process
# cannot see a mutant (mutmut switches mutants inside the test process) and would only cost time.
TESTS = (
    "tests/sizing/test_boundaries.py",
    "tests/sizing/test_sizing_aws_nat.py",
    "tests/sizing/test_sizing_azure_lb.py",
    "tests/sizing/test_sizing_exact.py",
    "tests/sizing/test_sizing_nat_gateway.py",
    "tests/sizing/test_sizing_rings_backlog.py",
    "tests/rules/test_rules_agent.py",
    "tests/rules/test_rules_aks_outbound.py",
    "tests/rules/test_rules_cloud_refuses.py",
    "tests/rules/test_rules_engine.py",
    "tests/rules/test_rules_nap.py",
    "tests/rules/test_rules_natgw.py",
    "tests/rules/test_rules_sku.py",
    "tests/rules/test_rules_tuning.py",
    "tests/rules/test_rules_tuning_edges.py",
    "tests/rules/test_rules_user_data.py",
    "tests/components/test_aws_rules_agree.py",
    # The rest of sizing/ and rules/ (measured peaks, line rates, AKS sysctls, node auto-provisioning, the profile
    # model the profile rule calls, the rules' declared reads): their own in-process tests.
    "tests/components/test_measured_peak_azure.py",
    "tests/sizing/test_size_aws_from_prometheus.py",
    "tests/rules/test_line_rate_minimums.py",
    "tests/components/test_azure_validate.py",
    "tests/components/test_azure_nap.py",
    "tests/profiles/test_profile.py",
    "tests/rules/test_rules_reads.py",
    "tests/sizing/test_sizing_nap.py",
    "tests/sizing/test_sizing_measured.py",
    "tests/rules/test_rules_engine_edges.py",
    "tests/rules/test_rules_aks_readers.py",
    "tests/sizing/test_sizing_plans_exact_output.py",
    "tests/rules/test_rules_nap_reading.py",
    "tests/rules/test_rules_sku_reading.py",
    "tests/rules/test_rules_agent_reading.py",
    "tests/rules/test_rules_natgw_edges.py",
)
# What tests read through the repository root besides tests/ (catalog data, example stacks and workloads, the
# documented JSON keys).
ALSO_COPY = ("components", "examples", "docs")
STATUS = re.compile(r"^\s*(?P<name>\S+): (?P<status>[a-z][a-z ]*)$")


def pytest_paths() -> list[str]:
    """The repository's pytest pythonpath (tests/ and each of its folders): the suites import helpers and each
    other by bare name."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    return list(config["tool"]["pytest"]["ini_options"]["pythonpath"])


def pyproject(only: list[str], tests: list[str]) -> str:
    def array(items: list[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"

    return f"""[tool.mutmut]
source_paths = ["src/wirespeed"]
only_mutate = {array(only)}
also_copy = {array(list(ALSO_COPY))}
pytest_add_cli_args_test_selection = {array(tests)}
# Hypothesis draws the same examples every run, so a mutant's verdict does not depend on luck.
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "--hypothesis-seed=0"]
use_git_change_detection = false

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = {array(pytest_paths())}
addopts = "-ra --strict-markers"
markers = ["netns: needs root to create network namespaces"]
"""


def build_tree(work: Path, only: list[str], tests: list[str]) -> None:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    shutil.copytree(PACKAGE, work / "src" / "wirespeed", ignore=ignore)
    shutil.copytree(REPO / "tests", work / "tests", ignore=ignore)
    for name in ALSO_COPY:
        shutil.copytree(REPO / name, work / name, ignore=ignore, symlinks=True)
    (work / "pyproject.toml").write_text(pyproject(only, tests))


def mutmut(work: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "mutmut"
    return subprocess.run([str(exe), *args], cwd=work, capture_output=True, text=True, check=False, timeout=timeout)


def summarise(work: Path) -> dict[str, Any]:
    listed = mutmut(work, "results", "--all", "true")
    statuses: dict[str, str] = {}
    for line in listed.stdout.splitlines():
        match = STATUS.match(line)
        if match:
            statuses[match["name"]] = match["status"].strip()
    counts: dict[str, int] = {}
    for status in statuses.values():
        counts[status] = counts.get(status, 0) + 1
    survivors = []
    for name, status in sorted(statuses.items()):
        if status in {"survived", "no tests", "timeout", "suspicious"}:
            diff = mutmut(work, "show", name).stdout
            survivors.append({"name": name, "status": status, "diff": diff})
    # Killed: a test failed; caught by type check and timeout count as detected too (mutmut's own score).
    detected = counts.get("killed", 0) + counts.get("caught by type check", 0) + counts.get("timeout", 0)
    total = sum(n for status, n in counts.items() if status not in {"skipped", "not checked"})
    by_file: dict[str, dict[str, int]] = {}
    for name, status in statuses.items():
        module = name.split(".x", 1)[0].split(".x_", 1)[0]
        module = ".".join(part for part in module.split(".") if not part.startswith("x"))
        by_file.setdefault(module, {}).setdefault(status, 0)
        by_file[module][status] += 1
    return {
        "counts": counts,
        "total": total,
        "detected": detected,
        "score_pct": round(100 * detected / total, 2) if total else None,
        "by_module": by_file,
        "survivors": survivors,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="files under components/wirespeed/ (default: all of sizing/, rules/)")
    parser.add_argument("--work", type=Path, default=REPO / "build" / "mutation", help="scratch tree")
    parser.add_argument("--max-children", type=int, default=2, help="mutants run in parallel (one per core)")
    parser.add_argument("--keep", action="store_true", help="reuse the scratch tree and mutmut's finished results")
    parser.add_argument("--record", action="store_true", help="write bench/mutation/results/<time>.json")
    args = parser.parse_args()

    if args.only:
        only = [f"src/wirespeed/{path}" for path in args.only]
    else:
        only = [f"src/wirespeed/{scope}/*" for scope in SCOPES]
    tests = list(TESTS)
    if missing := [t for t in tests if not (REPO / t).exists()]:
        # A renamed test file would otherwise drop out silently and its mutants would read as survivors.
        raise SystemExit(f"run.py: TESTS names files that do not exist: {', '.join(missing)}")
    if not (args.keep and (args.work / "mutants").exists()):
        build_tree(args.work, only, tests)
    log(f"mutmut over {', '.join(only)} with {len(tests)} test files, {args.max_children} at a time")
    load_before = loadavg()
    started = time.perf_counter()
    run = mutmut(args.work, "run", "--max-children", str(args.max_children))
    wall = time.perf_counter() - started
    (args.work / "mutmut-run.log").write_text(run.stdout + run.stderr)
    if run.returncode != 0:
        log(f"mutmut run exited {run.returncode}; its output is in {args.work / 'mutmut-run.log'}")
        print(run.stdout[-4000:] + run.stderr[-4000:], file=sys.stderr)
        return 2
    result = {
        "bench": "mutation",
        "tool": mutmut(args.work, "--version").stdout.strip() or "mutmut",
        "mutated": only,
        "tests": tests,
        "max_children": args.max_children,
        "wall_s": round(wall, 1),
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "machine": machine(),
        "source": source(),
        **summarise(args.work),
    }
    text = json.dumps(result, indent=2)
    (args.work / "summary.json").write_text(text + "\n")
    if args.record:
        record(Path(__file__).resolve().parent, result)
    print(json.dumps({k: result[k] for k in ("counts", "total", "detected", "score_pct", "wall_s")}, indent=2))
    for survivor in result["survivors"]:
        print(f"\n--- {survivor['name']} ({survivor['status']})\n{survivor['diff']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
