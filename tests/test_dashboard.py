"""The Grafana dashboard (wirespeed.manifests.monitoring.dashboard): every query parsed by promtool, every agent
metric it reads exported by the agent, the rendered JSON a golden file (UPDATE_GOLDEN=1 to refresh)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from clirun import wirespeed
from wirespeed.manifests import monitoring

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "monitoring" / "dashboard.json"
METRICS_README = ROOT / "agent" / "internal" / "metrics" / "README.md"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
# node-exporter's default collectors (softnet, netdev, conntrack) and the scrape's own `up`: what the dashboard may
# read besides the agent. The agent exports none of these (agent/internal/metrics/README.md).
NODE_EXPORTER = {
    "node_softnet_dropped_total",
    "node_softnet_times_squeezed_total",
    "node_network_receive_drop_total",
    "node_nf_conntrack_entries",
    "node_nf_conntrack_entries_limit",
    "up",
}


def _queries_in(board: dict[str, object]) -> list[str]:
    panels = board["panels"]
    assert isinstance(panels, list)
    return [t["expr"] for p in panels for t in p["targets"]]


def test_every_query_parses_with_promtool(tmp_path: Path) -> None:
    # Grafana's $__rate_interval is not PromQL: promtool sees the window Grafana would pick at a 30 s scrape.
    queries = [q.replace("$__rate_interval", "2m") for q in _queries_in(monitoring.dashboard())]
    rules = {
        "groups": [
            {
                "name": "dashboard-queries",
                "rules": [{"record": f"wirespeed_dashboard:query_{i}", "expr": q} for i, q in enumerate(queries)],
            }
        ]
    }
    (tmp_path / "queries.yaml").write_text(yaml.safe_dump(rules, sort_keys=False))
    promtool = shutil.which("promtool")
    assert promtool, "promtool missing: run scripts/install-system-deps.sh (Debian package prometheus)"
    out = subprocess.run(
        [promtool, "check", "rules", "queries.yaml"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SUCCESS: {len(queries)} rules found" in out.stdout


def test_dashboard_is_what_the_panels_say() -> None:
    assert _queries_in(monitoring.dashboard()) == monitoring.dashboard_queries()


def test_every_metric_is_the_agent_s_or_node_exporter_s() -> None:
    exported = set(re.findall(r"^\| `(wirespeed_agent_\w+)` \|", METRICS_README.read_text(), re.M))
    names = {
        m
        for q in monitoring.dashboard_queries()
        for m in re.findall(r"\b([a-z_][a-z0-9_]*)(?=\{|\[|\)| /|$)", q)
        if m.startswith(("wirespeed_agent_", "node_", "up"))
    }
    assert {n for n in names if n.startswith("wirespeed_agent_")} <= exported
    assert {n for n in names if not n.startswith("wirespeed_agent_")} <= NODE_EXPORTER
    # The series: agent driver counters plus node-exporter's softnet and network drops.
    assert {
        "wirespeed_agent_nic_driver_counter_total",
        "node_softnet_dropped_total",
        "node_network_receive_drop_total",
    } <= names


def test_every_panel_has_options_grafana_can_read() -> None:
    # The builder leaves `options: null` unless something sets it; Grafana expects an object.
    for panel in monitoring.dashboard()["panels"]:
        assert panel["options"]["legend"]["displayMode"] == "table", panel["title"]
        assert panel["options"]["tooltip"] == {"mode": "multi", "sort": "desc"}, panel["title"]


def test_every_panel_has_its_own_id_and_the_board_no_deprecated_style() -> None:
    board = monitoring.dashboard()
    ids = [panel.get("id") for panel in board["panels"]]
    assert ids == list(range(1, len(monitoring.PANELS) + 1)), ids
    assert "style" not in board


def test_every_panel_reads_the_datasource_variable() -> None:
    board = monitoring.dashboard()
    assert [v["name"] for v in board["templating"]["list"]] == ["datasource"]
    for panel in board["panels"]:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]


def test_rendered_dashboard_matches_golden() -> None:
    out = wirespeed("render", "dashboard")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == monitoring.dashboard()
    if UPDATE:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(out.stdout)
    assert out.stdout == GOLDEN.read_text(), f"{GOLDEN.name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"


@pytest.mark.parametrize(
    ("uid", "message"),
    [
        pytest.param("", "''", id="empty"),
        pytest.param("a b", "'a b'", id="space"),
        pytest.param("x" * 41, repr("x" * 41), id="too-long"),
    ],
)
def test_bad_uid_names_the_flag(uid: str, message: str) -> None:
    out = wirespeed("render", "dashboard", "--uid", uid)
    assert out.returncode == 2
    assert out.stderr == (
        f"error: --uid: {message} is not allowed; allowed: a Grafana dashboard UID: letters, digits, '-' and '_', "
        "1-40 characters\n"
    )


def test_uid_is_the_one_asked_for() -> None:
    out = wirespeed("render", "dashboard", "--uid", "net-drops_2")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["uid"] == "net-drops_2"
