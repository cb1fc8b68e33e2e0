"""The Grafana dashboard (wirespeed.manifests.monitoring.dashboard): every query parsed by promtool, every agent
metric it reads exported by the agent, the rendered JSON a golden file (UPDATE_GOLDEN=1 to refresh)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from clirun import wirespeed
from grafana_schema import SCHEMA_TYPES, schema_modules
from wirespeed.manifests import monitoring

ROOT = Path(__file__).resolve().parents[2]
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


def _as_grafana_sends_it(query: str) -> str:
    """Grafana's variables are not PromQL: promtool sees the window Grafana would pick at a 30 s scrape and each
    filter at All as a regex."""
    query = query.replace("$__rate_interval", "2m")
    return re.sub(r"\$(cluster|pool|node|host)\b", "(a|b.c)", query)


def test_every_query_parses_with_promtool(tmp_path: Path) -> None:
    queries = [_as_grafana_sends_it(q) for q in _queries_in(monitoring.dashboard()) + monitoring.variable_queries()]
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


def agent_series() -> dict[str, set[str]]:
    """The agent's series (a histogram's as its _bucket, _count and _sum series, _bucket with `le`) and each one's
    labels, from the README table the agent's registry generates."""
    series: dict[str, set[str]] = {}
    for name, kind, labels in re.findall(
        r"^\| `(wirespeed_agent_\w+)` \| (\w+) \| ([^|]*) \|", METRICS_README.read_text(), re.M
    ):
        own = set(re.findall(r"`(\w+)`", labels))
        if kind == "histogram":
            series |= {f"{name}_bucket": own | {"le"}, f"{name}_count": own, f"{name}_sum": own}
        else:
            series[name] = own
    return series


def test_every_metric_is_the_agent_s_or_node_exporter_s() -> None:
    exported = set(agent_series())
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


# What the scrape adds to every agent series: the job and instance, the PodMonitor's `node` (NODE_NAME_RELABELING)
# and a multi-cluster setup's `cluster`.
TARGET_LABELS = {"job", "instance", "node", "cluster"}


def test_every_agent_label_a_query_reads_is_the_agent_s() -> None:
    # Matchers and by () lists: a label the agent does not export would match nothing, silently.
    exported = agent_series()
    for query in monitoring.dashboard_queries():
        metrics = re.findall(r"\b(wirespeed_agent_\w+)\{", query)
        if not metrics:
            continue
        labels = set(exported[metrics[0]]) | TARGET_LABELS
        for metric in metrics[1:]:
            labels |= exported[metric]
        used = set(re.findall(r"\b([a-z_]+)(?:=~|!=|=)\"", query))
        used |= {label.strip() for group in re.findall(r"\bby \(([^)]*)\)", query) for label in group.split(",")}
        assert used <= labels, (query, used - labels)


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
    assert board["templating"]["list"][0]["name"] == "datasource"
    for panel in board["panels"]:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
    for variable in board["templating"]["list"][1:]:
        assert variable["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, variable["name"]


def test_cluster_pool_and_node_filters_are_optional_multi_value_with_all() -> None:
    variables = {v["name"]: v for v in monitoring.dashboard()["templating"]["list"]}
    assert list(variables) == ["datasource", "cluster", "pool", "node", "host"]
    for name in ("cluster", "pool", "node", "host"):
        assert variables[name]["multi"], name
        assert variables[name]["includeAll"], name
        assert variables[name]["current"] == {"text": "All", "value": "$__all", "selected": True}, name
    # All matches series without the label, so a setup with no cluster label or no kube-state-metrics loses nothing.
    assert variables["cluster"]["allValue"] == variables["pool"]["allValue"] == ".*"
    # node's All is the listed nodes (the pool choice reaches the panels through it); host is only a helper.
    assert "allValue" not in variables["node"]
    assert "allValue" not in variables["host"]
    assert variables["host"]["hide"] == 2
    assert all(variables[n]["hide"] == 0 for n in ("cluster", "pool", "node"))
    assert variables["pool"]["regex"] == (
        "/(?:label_kubernetes_azure_com_agentpool|label_eks_amazonaws_com_nodegroup|label_karpenter_sh_nodepool)="
        '"([^"]+)"/'
    )


def test_every_query_is_filtered_by_cluster_and_node() -> None:
    for query in _queries_in(monitoring.dashboard()):
        selectors = re.findall(r"\b([a-z_]+)\{([^}]*)\}", query)
        assert selectors, query
        for metric, matchers in selectors:
            assert 'cluster=~"$cluster"' in matchers, (metric, query)
            if metric.startswith("node_"):
                assert 'instance=~"($host|$node)(:[0-9]+)?"' in matchers, (metric, query)
            else:
                assert 'node=~"$node"' in matchers, (metric, query)


@pytest.mark.parametrize(
    ("instance", "node", "host"),
    [
        ("10.224.0.4:9100", "aks-apps-1234-vmss000000", "10.224.0.4"),  # node-exporter's own instance
        ("aks-apps-1234-vmss000000", "aks-apps-1234-vmss000000", "10.224.0.4"),  # kube-prometheus: the node name
    ],
)
def test_a_chosen_node_matches_node_exporter_s_instance_either_way(instance: str, node: str, host: str) -> None:
    # Grafana sends one chosen value as itself (regex-escaped) and Prometheus anchors the regex.
    pattern = re.search(r'instance=~"([^"]+)"', monitoring.PANELS[0].queries[0].expr)
    assert pattern
    regex = pattern.group(1).replace("$host", re.escape(host)).replace("$node", re.escape(node))
    assert re.fullmatch(regex, instance)
    assert not re.fullmatch(regex, "10.224.0.5:9100")


def _grafana_schema_check(tmp_path: Path, board: object) -> subprocess.CompletedProcess[str]:
    """Type-check the board against @grafana/schema's Dashboard with TypeScript: an object literal assigned to the
    type fails on every field the schema lacks (excess property check) and every value of the wrong type."""
    modules = schema_modules()
    (tmp_path / "node_modules").symlink_to(modules)
    (tmp_path / "board.ts").write_text(
        f'import type {{ Dashboard }} from "{SCHEMA_TYPES}";\nexport const board: Dashboard = {json.dumps(board)};\n'
    )
    tsc = [shutil.which("node") or "node", str(modules / "typescript" / "bin" / "tsc")]
    flags = ["--strict", "--noEmit", "--module", "commonjs", "--moduleResolution", "node", "--target", "es2020"]
    return subprocess.run([*tsc, *flags, "board.ts"], cwd=tmp_path, capture_output=True, text=True, check=False)


def test_dashboard_validates_against_grafana_s_published_schema(tmp_path: Path) -> None:
    out = _grafana_schema_check(tmp_path, monitoring.dashboard())
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(lambda b: b.update(style="dark"), "'\"style\"' does not exist in type 'Dashboard'", id="style"),
        pytest.param(
            lambda b: b["templating"]["list"][1].update(auto=False),
            "'\"auto\"' does not exist in type 'VariableModel'",
            id="auto",
        ),
        pytest.param(lambda b: b["panels"][0].update(id="1"), "Type 'string' is not assignable", id="id-type"),
    ],
)
def test_the_schema_check_rejects_what_grafana_s_schema_does_not_have(
    tmp_path: Path, change: Callable[[dict[str, Any]], object], message: str
) -> None:
    board = monitoring.dashboard()
    change(board)
    out = _grafana_schema_check(tmp_path, board)
    assert out.returncode != 0
    assert message in out.stdout, out.stdout + out.stderr


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
