"""The gate under the real engine (issue 26, item 5): `pulumi policy analyze --file EXPORT --policy-pack
policies/wirespeed` (the Pulumi CLI built from source, tests/pulumi_cli.py) and `wirespeed check EXPORT` on every
stack export the suite has, with and without a `--policy-pack-config`: the same verdict (pass, mandatory violation,
or the file refused) and the same set of (rule, URN, level). Where they differ on purpose, docs/policy-gates.md's
table under "Where `wirespeed check` and `pulumi policy analyze`" says so, and the test holds exactly that table: a
listed case must really differ, an unlisted one must agree.

The exports: every committed `pulumi stack export` under tests/fixtures (the hand-written ones and the real-input
corpus in tests/fixtures/real), each with each config; the pull requests tests/check/test_check_cli.py derives from the
AKS export; the stacks tests/rules/test_policy_pack_process.py hands the pack by hand over gRPC (here the engine does);
and the shapes where the two readers could part: secrets with and without the passphrase, deleted resources, a
config naming no rule, `null` property dependencies. One engine run per export and config (~2 s each, mostly the
pack's Python start-up: bench/setup/RESULTS.md); they run CPU-count at a time.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import pulumi_cli
from clirun import invoke
from conftest import ROOT, require
from fixtures.rules.engine import fixture, nap_objects
from pulumi_cli import Analysis, Finding
from secret_exports import CLUSTER, PULUMI_PASSPHRASE, cluster_with_secret_ports, encrypted, export, state
from test_check_cli import PULL_REQUESTS
from test_policy_pack_process import NAT_GATEWAY, NAT_PEAK, regional_nat
from wirespeed.values import SECRET_SIG, SIG_KEY

FIXTURES = ROOT / "tests" / "fixtures"
AKS_EXPORT = FIXTURES / "check" / "aks-export.json"
POLICY_GATES = ROOT / "docs" / "policy-gates.md"
# The configs the pack's tests use: none (each rule's default level), the check fixtures' advisory ring override,
# and the pack's example (remediate levels, raised thresholds).
CONFIGS: dict[str, Path | None] = {
    "no-config": None,
    "ring-advisory": FIXTURES / "check" / "ring-advisory-config.json",
    "example": ROOT / "policies" / "wirespeed" / "config.example.json",
}
NO_AGENT_CHECK = {"tuning-agent-present": "disabled"}  # the process tests' stacks have no DaemonSet
LEVELS = {"mandatory", "advisory", "remediate", "disabled"}


def committed_exports() -> list[Path]:
    """Every `pulumi stack export` document under tests/fixtures (a JSON object with `version` and `deployment`)."""
    found = []
    for path in sorted(FIXTURES.rglob("*.json")):
        text = path.read_text(errors="replace")
        if '"deployment"' not in text:
            continue
        try:
            document = json.loads(text)
        except ValueError:
            continue  # a fixture of something unreadable, which the readers' own tests use
        if isinstance(document, dict) and {"version", "deployment"} <= document.keys():
            found.append(path)
    return found


@dataclass(frozen=True)
class Case:
    id: str
    document: Callable[[], Any] | Path
    config: dict[str, Any] | Path | None = None
    passphrase: str | None = None
    # The rules the engine must report (sorted, one per finding), where the case replaces a hand-driven gRPC test of
    # tests/rules/test_policy_pack_process.py: agreement alone would also hold if both sides found nothing.
    engine_says: tuple[str, ...] | None = None


def _aks(change: Callable[[dict[str, Any]], None]) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        document = json.loads(AKS_EXPORT.read_text())
        change(document)
        return dict(document)

    return build


def _one_cluster(inputs: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """An export of one cluster whose inputs (and outputs, the same) ``inputs`` makes when the case runs (a secret
    costs a key derivation: not at collection)."""
    return lambda: export([state(CLUSTER, "aks", inputs())])


def _ports(ports: Any) -> dict[str, Any]:
    return cluster_with_secret_ports(ports, fixture("aks_cluster"))


def _outputs_overflow() -> tuple[dict[str, Any], dict[str, Any]]:
    """Inputs that fit, outputs that overflow SNAT (1 IP, 96 nodes x 4,000 ports): stack rules read outputs."""
    inputs, outputs = fixture("aks_cluster"), fixture("aks_cluster")
    outputs["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"]["count"] = 1
    outputs["agentPoolProfiles"][0]["maxCount"] = 95
    return inputs, outputs


def _without_outputs() -> dict[str, Any]:
    _, overflowing = _outputs_overflow()
    resource = state(CLUSTER, "aks", overflowing)
    del resource["outputs"]  # `pulumi stack export` leaves it out when a resource has none
    return export([resource])


def _nap_two_clusters() -> dict[str, Any]:
    """tests/rules/test_policy_pack_process.py's two clusters, the NodePool parented under one of them."""
    stack = "urn:pulumi:dev::wirespeed"
    component = "wirespeed:azure:NetworkOptimizedCluster"
    node_pool = "kubernetes:karpenter.sh/v1:NodePool"
    checkout, other = fixture("aks_cluster"), fixture("aks_cluster")
    checkout["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"]["count"] = 3
    other["resourceName"] = "aks-other"
    other["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"]["count"] = 1
    urns = {name: f"{stack}::{component}::{name}" for name in ("checkout", "other")}
    components = [{"urn": u, "custom": False, "type": component, "inputs": {}, "outputs": {}} for u in urns.values()]
    members = [
        state(CLUSTER, "aks", checkout) | {"parent": urns["checkout"]},
        state(CLUSTER, "aks-other", other) | {"parent": urns["other"]},
        state(node_pool, "net", nap_objects()["NodePool"]) | {"parent": urns["checkout"]},
    ]
    return export([*components, *members])


def _nat_gateways() -> dict[str, Any]:
    """tests/rules/test_policy_pack_process.py's NAT gateways: regional with 3 and 2 IPs per AZ, regional with 11 each,
    regional automatic, and a zonal one with 3 IPs (over the default per-gateway quota)."""
    return export(
        [
            state(NAT_GATEWAY, "regional", regional_nat(("eu-west-1a", 3), ("eu-west-1b", 2))),
            state(NAT_GATEWAY, "wide", regional_nat(("eu-west-1a", 11), ("eu-west-1b", 11))),
            state(NAT_GATEWAY, "automatic", regional_nat()),
            state(NAT_GATEWAY, "zonal", fixture("nat_gateway")),
        ]
    )


def _deleted_copy() -> dict[str, Any]:
    """A replaced cluster's old copy (`delete: true`, ports 0) beside its compliant successor: neither side judges
    the old one."""
    document = export([state(CLUSTER, "aks", fixture("aks_cluster"))])
    old = state(CLUSTER, "aks", _ports(0)) | {"delete": True}
    document["deployment"]["resources"].append(old)
    return document


def _secret_from_another_stack() -> dict[str, Any]:
    """A passphrase export whose one secret was sealed under another stack's key (pasted from it by hand): a
    well-formed ciphertext the passphrase does not open."""
    nonce, key = os.urandom(12), AESGCM.generate_key(bit_length=256)
    sealed = AESGCM(key).encrypt(nonce, b"4000", None)
    foreign = f"v1:{base64.b64encode(nonce).decode()}:{base64.b64encode(sealed).decode()}"
    return export([state(CLUSTER, "aks", _ports({SIG_KEY: SECRET_SIG, "ciphertext": foreign}))])


def _no_secrets_provider() -> dict[str, Any]:
    """A secret (a fine 4,000 ports) but no `secrets_providers`: a file `pulumi stack export` does not write."""
    document = export([state(CLUSTER, "aks", _ports(encrypted(4000)))])
    del document["deployment"]["secrets_providers"]
    return document


def _null_property_dependencies() -> dict[str, Any]:
    """What CLI 3.102 wrote for an input with no dependencies: `"propertyDependencies": {"<input>": null}`."""
    document = json.loads(AKS_EXPORT.read_text())
    for resource in document["deployment"]["resources"]:
        if resource.get("propertyDependencies"):
            first = next(iter(resource["propertyDependencies"]))
            resource["propertyDependencies"][first] = None
    return dict(document)


def cases() -> list[Case]:
    found = [
        Case(f"{path.relative_to(FIXTURES)}:{name}", path, config)
        for path in committed_exports()
        for name, config in CONFIGS.items()
        # The ring override concerns a wirespeed profile ConfigMap, which only the hand-written exports hold.
        if name != "ring-advisory" or path.is_relative_to(FIXTURES / "check")
    ]
    found += [
        Case(f"aks-export:{name}", _aks(change), engine_says=(rule_id,))
        for name, (change, rule_id, _) in PULL_REQUESTS.items()
    ]
    found += [
        Case(
            "secret-zero:with-passphrase",
            _one_cluster(lambda: _ports(encrypted(0))),
            NO_AGENT_CHECK,
            PULUMI_PASSPHRASE,
            engine_says=("aks-allocated-outbound-ports-default",),
        ),
        Case(
            "secret-fine:with-passphrase",
            _one_cluster(lambda: _ports(encrypted(4000))),
            NO_AGENT_CHECK,
            PULUMI_PASSPHRASE,
            engine_says=(),
        ),
        Case(
            "secret:without-passphrase",
            _one_cluster(lambda: _ports(encrypted(4000))),
            NO_AGENT_CHECK,
            engine_says=("aks-allocated-outbound-ports-default", "aks-snat-capacity", "aks-snat-ports-minimum"),
        ),
        Case(
            "secret:wrong-passphrase",
            _one_cluster(lambda: _ports(encrypted(4000))),
            NO_AGENT_CHECK,
            "not-the-passphrase",
        ),
        Case("secret:sealed-by-another-stack", _secret_from_another_stack, NO_AGENT_CHECK, PULUMI_PASSPHRASE),
        Case("secret:no-secrets-provider", _no_secrets_provider, NO_AGENT_CHECK, PULUMI_PASSPHRASE),
        Case(
            "stack-rules-read-outputs",
            lambda: export([state(CLUSTER, "aks", *_outputs_overflow())]),
            NO_AGENT_CHECK,
            engine_says=("aks-snat-capacity",),
        ),
        Case(
            "stack-rules-read-outputs:swapped",
            lambda: export([state(CLUSTER, "aks", *reversed(_outputs_overflow()))]),
            NO_AGENT_CHECK,
            engine_says=(),
        ),
        Case("stack-rules-no-outputs", _without_outputs, NO_AGENT_CHECK, engine_says=()),
        Case("nap-node-pool-in-its-cluster", _nap_two_clusters, NO_AGENT_CHECK, engine_says=("aks-snat-capacity",)),
        Case("deleted-copy-not-judged", _deleted_copy, NO_AGENT_CHECK, engine_says=()),
        Case("nat-gateways:peak-120000", _nat_gateways, NAT_PEAK),
        Case(
            "nat-gateways:peak-600000",
            _nat_gateways,
            {"aws-natgw-capacity": {"peakConnectionsPerDestination": 600_000}},
        ),
        Case(
            "config-names-no-rule",
            _aks(PULL_REQUESTS["allocated-outbound-ports-0"][0]),
            {"aks-snat-port-minimum": "disabled"},
            engine_says=("aks-allocated-outbound-ports-default",),  # the misspelt entry disabled nothing
        ),
        Case("null-property-dependencies", _null_property_dependencies),
        Case(
            "remediate:mana-rx-ring-1024",
            _aks(PULL_REQUESTS["mana-rx-ring-1024"][0]),
            {"nic-ring-minimum": "remediate", "tuning-agent-present": "mandatory"},
        ),
    ]
    return found


CASES = cases()


# --- docs/policy-gates.md's table of differences -----------------------------------------------------------------

TABLE_HEAD = "| case | the engine with the pack | `wirespeed check` |"
# Each row of docs/policy-gates.md's table, by its first column, and the cases above that show it.
DIFFERENCES: dict[str, set[str]] = {
    "unknown rule name in the config file": {"config-names-no-rule"},
    "`remediate` level": {"remediate:mana-rx-ring-1024"},
    "a passphrase that does not open a secret": {"secret:wrong-passphrase", "secret:sealed-by-another-stack"},
    "encrypted secrets but no secrets provider": {"secret:no-secrets-provider"},
}


def documented_rows() -> list[str]:
    text = POLICY_GATES.read_text()
    head = text.index(TABLE_HEAD)
    rows = []
    for line in text[head:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip())
    return rows


def test_the_docs_table_is_the_tests():
    assert documented_rows() == list(DIFFERENCES)


# --- running both sides ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checked:
    verdict: str  # pass | mandatory | error
    findings: frozenset[Finding]
    messages: dict[Finding, list[tuple[str, bool]]]  # (message, unchecked) per finding
    output: str


CHECK_VERDICTS = {0: "pass", 1: "mandatory", 2: "error"}  # docs/policy-gates.md: wirespeed check's exit status


def run_check(
    export_path: Path, config: Path | None, passphrase: str | None, monkeypatch: pytest.MonkeyPatch
) -> Checked:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    if passphrase is None:
        monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    else:
        monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", passphrase)
    args = ["check", str(export_path), "--format", "json"] + (["--config", str(config)] if config else [])
    out = invoke(*args)
    verdict = CHECK_VERDICTS[out.returncode]
    messages: dict[Finding, list[tuple[str, bool]]] = {}
    if verdict != "error":
        for v in json.loads(out.stdout)["violations"]:
            messages.setdefault(Finding(v["rule"], v["urn"], v["enforcement"]), []).append(
                (v["message"], v["unchecked"])
            )
    return Checked(verdict, frozenset(messages), messages, out.stdout + out.stderr)


def materialise(case: Case, folder: Path) -> tuple[Path, Path | None]:
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(case.document, Path):
        export_path = case.document
    else:
        export_path = folder / "export.json"
        export_path.write_text(json.dumps(case.document(), indent=2))
    config: Path | None
    if isinstance(case.config, dict):
        config = folder / "policy-config.json"
        config.write_text(json.dumps(case.config))
    else:
        config = case.config
    return export_path, config


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, Path | None, Analysis]]]:
    """Every case through the engine once, CPU-count runs at a time (each is mostly the pack's start-up)."""
    require(pulumi_cli.missing())
    root = tmp_path_factory.mktemp("engine")
    folders = {case.id: root / re.sub(r"[^\w.-]", "_", case.id) for case in CASES}
    inputs = {case.id: materialise(case, folders[case.id]) for case in CASES}

    def one(case: Case) -> tuple[str, tuple[Path, Path | None, Analysis]]:
        export_path, config = inputs[case.id]
        home = folders[case.id] / "home"  # a Pulumi home and backend of its own: runs share nothing
        return case.id, (export_path, config, pulumi_cli.analyze(export_path, home, config, case.passphrase))

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        yield dict(pool.map(one, CASES))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_check_and_the_engine_agree_except_where_the_readme_says(case, engine_runs, monkeypatch):
    export_path, config, analysis = engine_runs[case.id]
    if case.engine_says is not None:
        assert tuple(sorted(f.rule for f in analysis.findings)) == case.engine_says, analysis.stdout + analysis.stderr
    checked = run_check(export_path, config, case.passphrase, monkeypatch)
    engine = (analysis.verdict, analysis.findings)
    mine = (checked.verdict, checked.findings)
    listed = [row for row, ids in DIFFERENCES.items() if case.id in ids]
    detail = f"engine: {analysis.stdout}{analysis.stderr}\ncheck: {checked.output}"
    if listed:
        documented = f"docs/policy-gates.md lists {case.id} under {listed[0]!r}"
        assert engine != mine, f"{documented}, yet both said {engine}\n{detail}"
    else:
        assert engine == mine, f"{case.id}: engine {engine} != check {mine}\n{detail}"
        # The words too, finding by finding; where check could not read a secret it adds why and what would let
        # it (the engine's words are the rule's, then check's " Here: ...").
        for finding, said in analysis.messages.items():
            wrote = sorted(checked.messages[finding])
            assert len(wrote) == len(said), f"{finding}: the engine said {said}, check {wrote}"
            for (message, unchecked), engine_message in zip(wrote, sorted(said), strict=True):
                assert message == engine_message or (unchecked and message.startswith(engine_message + " Here: "))
