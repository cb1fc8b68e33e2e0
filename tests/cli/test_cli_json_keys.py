"""Every `--json` output has exactly the keys docs/cli-json.md documents: the doc is parsed, so they cannot drift.

A key added to the output without a line in the doc fails here, and so does a documented key the output lost.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import typer.main

from clirun import invoke
from conftest import ROOT
from moto_aws import clean_account_env, moto  # noqa: F401 (fixtures: `audit aws` reads a clean moto account)
from wirespeed.cli import app

pytestmark = pytest.mark.usefixtures("clean_account_env")

DOC = ROOT / "docs" / "cli-json.md"
EXAMPLES = ROOT / "examples" / "workloads"
CHECK_FIXTURES = ROOT / "tests" / "fixtures" / "check"

# One or more real invocations per documented command (the argv after the command, without --json).
SAMPLES: dict[str, list[list[str]]] = {
    "size azure-lb": [
        ["--pool", "100:2", "--ports", "4000", "--outbound-ips", "7"],
        ["--pool", "60:10%", "--pool", "5:1", "--connections-per-second", "12"],
        ["--pool", "1000:0", "--pool", "500:0", "--ports", "64"],
    ],
    "size azure-natgw": [["--flows", "200000"], ["--flows", "200000", "--sku", "StandardV2"]],
    "size aws-natgw": [["--connections", "120000"]],
    "size rings": [["--driver", "mlx5_core", "--line-rate-gbps", "100"], ["--driver", "ena", "--line-rate-gbps", "1"]],
    "size backlog": [
        ["--line-rate-gbps", "100"],
        ["--line-rate-gbps", "800", "--stall-ms", "1000"],
        ["--line-rate-gbps", "100", "--cloud", "aws"],
    ],
    "size mtu": [["--driver", "ena"], ["--driver", "mana", "--crosses-gateway"]],
    "plan": [["--workload", str(EXAMPLES / "checkout-api.json")], ["--workload", str(EXAMPLES / "ingest-eks.json")]],
    # A Pulumi program planned under the SDK's mocks (`DIR` in the heading is the positional argument).
    "plan DIR": [[str(ROOT)], [str(ROOT / "examples" / "aks-natgw")]],
    "catalog show": [["D16s_v6"], ["c6in.8xlarge"]],
    "catalog list": [["--cloud", "aws", "--min-gbps", "100"]],
    "profile show": [["throughput"], ["balanced"]],
    # AWS_ENDPOINT_URL points boto3 at moto's server (the clean_account_env fixture): exit 0, every list non-empty.
    "audit aws": [["--region", "eu-west-1"]],
    "check": [
        [str(CHECK_FIXTURES / "aks-export.json")],
        [str(CHECK_FIXTURES / "pr-preview-violations.json")],
        # A real plan of an auto-scaling group and a GCE instance: `unread` lists the instance.
        [str(ROOT / "tests" / "fixtures" / "real" / "tf-asg-launch-template.tf0.13.7.plan.json")],
    ],
}

# Commands whose JSON comes from `--format json` rather than `--json`, and the exit codes that still print it
# (`check` prints its verdict document and exits 1 on a mandatory violation).
FORMAT_JSON = {"check": (0, 1)}


def _strip_parentheses(text: str) -> str:
    while True:
        stripped = re.sub(r"\([^()]*\)", "", text)
        if stripped == text:
            return text
        text = stripped


def documented() -> dict[str, tuple[frozenset[str], dict[str, frozenset[str]]]]:
    """command -> (top-level keys, {key: keys of its items}) as docs/cli-json.md lists them.

    A section's keys are the first column of its table (`rx`, `tx` in one cell counts both); a section without
    a table lists them in prose, where backticks inside parentheses are values, not keys. "per pool: `a`, `b`"
    in a meaning cell lists the keys of that list's items.
    """
    sections: dict[str, tuple[frozenset[str], dict[str, frozenset[str]]]] = {}
    for block in DOC.read_text().split("\n## ")[1:]:
        heading, _, body = block.partition("\n")
        commands = [
            c.removeprefix("wirespeed ").removesuffix(" --json").removesuffix(" --format json")
            for c in re.findall(r"`([^`]+)`", heading)
        ]
        group = commands[0].split()[:-1]
        commands = [c if len(c.split()) > 1 or not group else " ".join([*group, c]) for c in commands]
        rows = [line for line in body.splitlines() if line.startswith("| `")]
        keys: set[str] = set()
        nested: dict[str, frozenset[str]] = {}
        if rows:
            for row in rows:
                cells = [c.strip() for c in row.strip("|").split("|")]
                names = re.findall(r"`([^`]+)`", cells[0])
                keys.update(names)
                per_item = re.search(r"per \w+: (.*)$", cells[-1])
                if per_item:
                    nested[names[0]] = frozenset(re.findall(r"`([^`]+)`", per_item.group(1)))
        else:
            keys.update(re.findall(r"`([^`]+)`", _strip_parentheses(body)))
        for command in commands:
            sections[command] = (frozenset(keys), nested)
    return sections


DOCUMENTED = documented()


def _json(command: str, args: list[str]) -> Any:
    if command in FORMAT_JSON:
        out = invoke(*command.split(), *args, "--format", "json")
        assert out.returncode in FORMAT_JSON[command], out.stderr
    else:
        out = invoke(*command.removesuffix(" DIR").split(), *args, "--json")
        assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


# Keys documented as one or the other: a backlog sized for AWS has no AKS maximum to be capped at, only the kernel's.
EITHER_OR = (frozenset({"capped_at_aks_max", "capped_at_kernel_max"}),)


def _expected(keys: frozenset[str], record: dict[str, Any]) -> frozenset[str]:
    """The documented keys, with each either-or pair narrowed to the one the record has."""
    for pair in EITHER_OR:
        if pair <= keys:
            assert len(pair & set(record)) == 1, f"exactly one of {sorted(pair)}"
            keys = keys - (pair - set(record))
    return keys


def _records(data: Any) -> list[dict[str, Any]]:
    return data if isinstance(data, list) else [data]


# Commands whose --json needs a live cluster or Prometheus: their keys are checked against this doc where one runs.
CLUSTER_COMMANDS = {
    "drift": "tests/drift/test_drift_apiserver.py",
    "prove": "tests/sizing/test_prove_from_prometheus.py",
}


def test_the_doc_parses_into_the_sections_it_has():
    assert set(DOCUMENTED) == set(SAMPLES) | set(CLUSTER_COMMANDS)
    assert DOCUMENTED["size rings"][0] >= {"rx", "tx", "rx_default", "tx_default"}
    assert DOCUMENTED["size azure-lb"][1] == {"pools": {"max_count", "surge_nodes", "nodes_at_max"}}
    assert DOCUMENTED["size mtu"][0] == {"driver", "path", "mtu", "reason"}


def test_every_json_command_is_documented():
    def json_commands(command: Any, path: tuple[str, ...]) -> set[str]:
        params = getattr(command, "params", [])
        prints_json = any(
            p.name == "as_json" or (p.name == "output_format" and "json" in getattr(p.type, "choices", ()))
            for p in params
        )
        found = {" ".join(path)} if prints_json else set()
        for name, sub in getattr(command, "commands", {}).items():
            found |= json_commands(sub, (*path, name))
        return found

    assert json_commands(typer.main.get_command(app), ()) == {c.removesuffix(" DIR") for c in DOCUMENTED}


@pytest.mark.parametrize(
    ("command", "args"),
    [pytest.param(c, a, id=f"{c} {' '.join(a)}".strip()) for c, samples in SAMPLES.items() for a in samples],
)
def test_json_keys_are_exactly_the_documented_ones(command, args):
    keys, nested = DOCUMENTED[command]
    for record in _records(_json(command, args)):
        assert set(record) == _expected(keys, record)
        for key, item_keys in nested.items():
            if command == "check" and key == "unread" and not record[key]:
                continue  # only the sample with an unread compute type lists one
            if command == "check" and key == "violations" and record["passed"]:
                assert record[key] == [], "the clean sample has no violations (advisory ones would be listed)"
                continue
            assert record[key], f"{key}: the sample should produce items to check"
            assert all(set(item) == item_keys for item in record[key])


@pytest.mark.parametrize("workload", [None, EXAMPLES / "checkout-api.json", EXAMPLES / "ingest-eks.json"])
def test_plan_nests_the_documented_objects(workload, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no Pulumi.yaml here: `plan` alone plans the bundled workload
    data = _json("plan", [] if workload is None else ["--workload", str(workload)])
    outbound = "size azure-lb" if "allocated_outbound_ports" in data["outbound"] else "size aws-natgw"
    assert set(data["outbound"]) == DOCUMENTED[outbound][0]
    assert set(data["rings"]) == DOCUMENTED["size rings"][0]
    assert set(data["backlog"]) == _expected(DOCUMENTED["size backlog"][0], data["backlog"])
    assert set(data["instance_type"]) == DOCUMENTED["catalog show"][0]
