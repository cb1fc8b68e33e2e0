"""`wirespeed drift` against a hostile or broken API server: a local HTTP server (real sockets, the real kubernetes
client) that drip-feeds bytes, repeats or never ends its continue tokens, answers HTML, or sends Node objects of
odd types; and a kubeconfig whose exec credential plugin sleeps. Each ends in exit 2 with one ``error:`` line (or
a verdict), never a traceback or a hang: the console script runs with --timeout and a subprocess guard."""

from __future__ import annotations

import itertools
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from clirun import WIRESPEED, running
from wirespeed.drift import cluster
from wirespeed.drift.judge import judge_node
from wirespeed.drift.profiles import profiles_from_config_maps

Answer = Callable[[BaseHTTPRequestHandler], None]


def json_answer(body: Any) -> Answer:
    def send(handler: BaseHTTPRequestHandler) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return send


def drip(handler: BaseHTTPRequestHandler) -> None:
    """Headers, then one byte a second of a body that would take a day: no single read ever times out."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "86400")
    handler.end_headers()
    try:
        for _ in range(86_400):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(1)
    except OSError:
        return


def continue_tokens(tokens: Iterator[str]) -> Answer:
    def send(handler: BaseHTTPRequestHandler) -> None:
        json_answer({"kind": "NodeList", "items": [], "metadata": {"continue": next(tokens)}})(handler)

    return send


HTML = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


@pytest.fixture
def server() -> Iterator[tuple[str, dict[str, Answer]]]:
    """A local HTTP API server; tests set what each path answers (default: an empty list)."""
    answers: dict[str, Answer] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            answers.get(path, json_answer({"kind": "List", "items": [], "metadata": {}}))(self)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", answers
    finally:
        httpd.shutdown()
        httpd.server_close()


def kubeconfig(tmp_path: Path, server_url: str, user: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server_url}}],
                "users": [{"name": "u", "user": user or {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def drift(config: Path, *args: str, guard: float = 60) -> subprocess.CompletedProcess[str]:
    assert WIRESPEED
    return subprocess.run(
        [WIRESPEED, "drift", "--kubeconfig", str(config), *args],
        capture_output=True,
        text=True,
        timeout=guard,
        check=False,
    )


def assert_one_error(out: subprocess.CompletedProcess[str], *words: str) -> None:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stdout + out.stderr
    assert out.stderr.startswith("error: --kubeconfig "), out.stderr
    assert out.stderr.count("\n") == 1, out.stderr
    for word in words:
        assert word in out.stderr, out.stderr


def test_a_drip_fed_body_ends_at_the_deadline(server, tmp_path):
    url, answers = server
    answers["/api/v1/configmaps"] = drip
    started = time.monotonic()
    out = drift(kubeconfig(tmp_path, url), "--timeout", "3")
    assert_one_error(out, "not read within --timeout 3 s")
    assert time.monotonic() - started < 30


def test_an_exec_credential_plugin_that_sleeps_is_ended_at_the_deadline(server, tmp_path):
    url, _ = server
    pids = tmp_path / "pids"
    plugin = tmp_path / "plugin.sh"
    # A shell script that waits on a child of its own, as wrappers around a real credential helper do: killing the
    # script alone would leave the helper running.
    plugin.write_text(f"#!/bin/sh\nsleep 600 &\necho $$ $! > {pids}\nwait\n")
    plugin.chmod(0o755)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": str(plugin)}}
    out = drift(kubeconfig(tmp_path, url, user), "--timeout", "3")
    assert_one_error(out, "not read within --timeout 3 s")
    # The plugin and what it started were killed with the command, not left sleeping behind it.
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 2
    deadline = time.monotonic() + 10
    while any(map(running, started)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in started if running(pid)] == []


def test_a_repeated_continue_token_is_refused(server, tmp_path):
    url, answers = server
    answers["/api/v1/configmaps"] = continue_tokens(itertools.repeat("same"))
    out = drift(kubeconfig(tmp_path, url))
    assert_one_error(out, "GET /api/v1/configmaps: the server repeated a continue token")


def test_endless_new_continue_tokens_are_capped(server, tmp_path, monkeypatch):
    url, answers = server
    answers["/api/v1/configmaps"] = continue_tokens(f"t{n}" for n in itertools.count())
    target = cluster.Target(kubeconfig(tmp_path, url), None)
    monkeypatch.setattr(cluster, "MAX_PAGES", 20)  # the cap itself, without 10,000 round trips
    with cluster.connect(target) as api, pytest.raises(cluster.ClusterUnreachableError, match="more than 20 pages"):
        cluster.list_profile_config_maps(api, target)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (HTML, "the answer is not JSON (it starts '<html><head><title>502 Bad Gateway</titl')"),
        (b"[" * 100_000, "the answer is not JSON"),
        (b'"a string"', "not a Kubernetes list (a JSON str)"),
        (b'{"items": "nodes"}', "items are not a list of objects"),
        (b'{"items": ["node"]}', "items are not a list of objects"),
        (b'{"items": [], "metadata": {"continue": 7}}', "metadata.continue is not a string"),
    ],
    ids=["html", "deep", "string", "items-string", "items-of-strings", "continue-number"],
)
def test_malformed_list_bodies_are_one_error(server, tmp_path, body, words):
    url, answers = server
    answers["/api/v1/nodes"] = json_answer(body)
    out = drift(kubeconfig(tmp_path, url))
    assert_one_error(out, "GET /api/v1/nodes", words)


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize(
    ("node", "words"),
    [
        ({"metadata": {"name": "n", "labels": ["wirespeed.io/profile", "throughput"]}},
         "Node 'n': metadata.labels is a JSON list, not an object"),
        ({"metadata": {"name": "n", "labels": {"wirespeed.io/profile": "throughput"}, "annotations": {
            "wirespeed.io/tuning-status": 7}}},
         "Node 'n': metadata.annotations['wirespeed.io/tuning-status'] is a JSON int, not a string"),
        ({"metadata": "n", "status": {"conditions": "Ready"}}, "a Node: metadata is a JSON str, not an object"),
        ({"metadata": {"name": "n", "labels": {"wirespeed.io/profile": 5}}, "status": {"conditions": [7, None]}},
         "Node 'n': metadata.labels['wirespeed.io/profile'] is a JSON int, not a string"),
    ],
    ids=["labels-list", "annotation-number", "metadata-string", "label-number"],
)  # fmt: skip
def test_a_node_whose_labels_cannot_be_read_is_not_passed_as_unmanaged(server, tmp_path, node, words):
    """Counted as a node without a profile label, a node whose labels are not labels would let drift exit 0 on a
    node it never judged: a gate does not pass what it could not read."""
    url, answers = server
    answers["/api/v1/nodes"] = json_answer({"kind": "NodeList", "items": [node], "metadata": {}})
    out = drift(kubeconfig(tmp_path, url), "--json")
    assert_one_error(out, "GET /api/v1/nodes: " + words, "not a Kubernetes Node, nothing was judged")


@pytest.mark.parametrize(
    "node",
    [
        {"metadata": {"name": "n", "labels": {"wirespeed.io/profile": "throughput"}, "annotations": {
            "wirespeed.io/tuning-status": deep(100_000)}}},
        {"metadata": {"name": "n", "labels": {"wirespeed.io/profile": "throughput"}},
         "status": {"conditions": [7, None, {"type": 5}]}},
        {"metadata": {"name": "n", "labels": {"wirespeed.io/profile": "throughput"}}, "status": "Ready"},
    ],
    ids=["annotation-deep", "conditions-odd", "status-string"],
)  # fmt: skip
def test_odd_node_types_are_judged_not_crashed_on(server, tmp_path, node):
    url, answers = server
    answers["/api/v1/nodes"] = json_answer({"kind": "NodeList", "items": [node], "metadata": {}})
    out = drift(kubeconfig(tmp_path, url), "--json")
    assert "Traceback" not in out.stdout + out.stderr
    assert out.returncode == 1, out.stderr  # labelled, and no readable report: drifted
    json.loads(out.stdout)


def test_a_page_larger_than_the_cap_is_refused(server, tmp_path, monkeypatch):
    from wirespeed import io_limits

    url, answers = server
    padding = "x" * 4096
    answers["/api/v1/nodes"] = json_answer({"kind": "NodeList", "items": [], "metadata": {"x": padding}})
    target = cluster.Target(kubeconfig(tmp_path, url), None)
    monkeypatch.setattr(io_limits, "API_PAGE_LIMIT", 1024)  # the cap itself, without sending 256 MiB
    with cluster.connect(target) as api, pytest.raises(cluster.ClusterUnreachableError) as info:
        list(cluster.list_nodes(api, target, None))
    words = "GET /api/v1/nodes: the answer is larger than the 1,024 bytes a page of 500 objects may be"
    assert words in str(info.value)


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "too-large"])
def test_a_kubeconfig_that_is_not_a_small_regular_file_is_refused_at_once(tmp_path, kind, monkeypatch):
    import os

    path = tmp_path / "kubeconfig"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: the client's open() would block until the deadline
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_bytes(b"#" * ((16 << 20) + 1))
    started = time.monotonic()
    out = drift(path, "--timeout", "60")
    assert_one_error(out, f"--kubeconfig {path}: not a usable kubeconfig: {path}: ")
    assert time.monotonic() - started < 30  # refused at once, not at the deadline
    # $KUBECONFIG's files are held to the same rules.
    assert WIRESPEED
    env = {**os.environ, "KUBECONFIG": f"{tmp_path / 'missing'}:{path}"}
    out = subprocess.run([WIRESPEED, "drift"], capture_output=True, text=True, timeout=60, env=env, check=False)
    assert out.returncode == 2, out.stderr
    assert f"not a usable kubeconfig: {path}: " in out.stderr


def test_a_kubeconfig_of_a_billion_laughs_is_refused_while_it_is_read(server, tmp_path):
    """An exec plugin's args as nine levels of nine aliases (9**9 strings): the client would build that list and
    spin until --timeout, then blame the plugin or the API server. Refused by the reader Pulumi.yaml shares."""
    from wirespeed.yaml_input import YAML_NODE_LIMIT

    url, _ = server
    path = kubeconfig(tmp_path, url, {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "true"}})
    levels = ['  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    text = path.read_text().replace("command: 'true'", "command: 'true'\n      args: *l9")
    path.write_text("laughs:\n" + "\n".join(levels) + "\n" + text)
    assert "args: *l9" in path.read_text()
    out = drift(path, "--timeout", "60")
    assert_one_error(
        out,
        f"--kubeconfig {path}: not a usable kubeconfig: {path}: line 8: its aliases expand it past the "
        f"{YAML_NODE_LIMIT:,} nodes a YAML file may have with every alias expanded",
    )


def test_a_report_dated_in_the_future_is_not_fresh():
    from datetime import UTC, datetime, timedelta

    from wirespeed.drift.judge import NodeFacts

    now = datetime(2026, 1, 1, tzinfo=UTC)
    report = {"profile": "throughput", "state": "applied", "time": "2099-01-01T00:00:00Z"}
    node = NodeFacts(
        "n", {"wirespeed.io/profile": "throughput"}, {"wirespeed.io/tuning-status": json.dumps(report)}, None
    )
    verdict = judge_node(node, profiles_from_config_maps([]), now, timedelta(minutes=15))
    assert [f.kind for f in verdict.findings] == ["unknown-profile", "stale"]
    assert "dated in the future" in verdict.findings[1].message
    # Within the allowed clock skew it is fresh.
    report["time"] = (now + timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    node = NodeFacts(
        "n", {"wirespeed.io/profile": "throughput"}, {"wirespeed.io/tuning-status": json.dumps(report)}, None
    )
    assert [f.kind for f in judge_node(node, {}, now, timedelta(minutes=15)).findings] == ["unknown-profile"]
