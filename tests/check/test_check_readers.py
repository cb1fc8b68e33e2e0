"""The readers `wirespeed check` uses: shapes recognised, props as the policy engine hands them, exact errors.

Fixtures and where their shapes come from: tests/fixtures/check/README.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from wirespeed.check.jsonscan import JsonCursor
from wirespeed.check.readers import PREVIEW, STACK_EXPORT, WHAT_TO_RUN, Document, UnreadableInputError
from wirespeed.check.readonly import ReadOnlyList, ReadOnlyMapping
from wirespeed.rules import Resource
from wirespeed.values import BLINDED_SECRET, UNKNOWN

FIXTURES = ROOT / "tests" / "fixtures" / "check"
STACK = "urn:pulumi:pr-1234::checkout-infra::"
CLUSTER = f"{STACK}azure-native:containerservice:ManagedCluster::aks-checkout"
POOL = f"{STACK}azure-native:containerservice:AgentPool::net"


def read(path: Path) -> tuple[Document, dict[str, Resource]]:
    document = Document(path.read_text())
    return document, {r.urn: r for r in document.resources()}


def read_text(text: str) -> list[Resource]:
    return list(Document(text).resources())


def plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: plain(value[k]) for k in value}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [plain(v) for v in value]
    return value


# --- stack export --------------------------------------------------------------------------------------------


def test_stack_export_yields_every_resource_in_order():
    document, resources = read(FIXTURES / "aks-export.json")
    assert document.shape is STACK_EXPORT
    assert [urn.split("::")[-2:] for urn in resources] == [
        ["pulumi:pulumi:Stack", "checkout-infra-pr-1234"],
        ["pulumi:providers:azure-native", "default_3_29_0"],
        ["azure-native:resources:ResourceGroup", "rg-checkout"],
        ["azure-native:containerservice:ManagedCluster", "aks-checkout"],
        ["azure-native:containerservice:AgentPool", "net"],
        ["pulumi:providers:kubernetes", "aks-checkout"],
        ["kubernetes:core/v1:ConfigMap", "wirespeed-profile-throughput"],
        ["kubernetes:apps/v1:DaemonSet", "wirespeed-agent-throughput"],
        ["azure-native:storage:StorageAccount", "checkoutlogs"],
    ]


def test_stack_export_resource_carries_inputs_outputs_id_parent_and_dependencies():
    _, resources = read(FIXTURES / "aks-export.json")
    pool = resources[POOL]
    assert (pool.type, pool.name) == ("azure-native:containerservice:AgentPool", "net")
    assert pool.props["agentPoolName"] == "net"  # inputs: what resource rules see
    assert pool.outputs is not None
    assert pool.outputs["name"] == "net"  # outputs: the provider's view, for stack rules
    assert "agentPoolName" not in pool.outputs
    assert pool.id is not None
    assert pool.id.endswith("/managedClusters/aks-checkout/agentPools/net")
    assert pool.parent == f"{STACK}pulumi:pulumi:Stack::checkout-infra-pr-1234"
    assert list(pool.property_dependencies["resourceName"]) == [CLUSTER]


def test_props_are_read_only_mappings_at_every_depth():
    _, resources = read(FIXTURES / "aks-export.json")
    props = resources[CLUSTER].props
    profile = props["networkProfile"]["loadBalancerProfile"]
    pools = props["agentPoolProfiles"]
    assert isinstance(props, ReadOnlyMapping)
    assert not isinstance(props, dict)
    assert isinstance(profile, Mapping)
    assert isinstance(pools, ReadOnlyList)
    assert not isinstance(pools, list)
    with pytest.raises(TypeError):
        props["location"] = "eastus"  # type: ignore[index]
    with pytest.raises(TypeError):
        profile["allocatedOutboundPorts"] = 0  # type: ignore[index]
    with pytest.raises(TypeError):
        pools[0] = {}  # type: ignore[index]


def test_every_number_is_a_float_and_booleans_stay_booleans():
    _, resources = read(FIXTURES / "aks-export.json")
    cluster, pool = resources[CLUSTER].props, resources[POOL].props
    ports = cluster["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"]
    backlog = pool["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"]
    assert (ports, type(ports)) == (4000.0, float)
    assert (backlog, type(backlog)) == (32768.0, float)
    assert type(cluster["agentPoolProfiles"][0]["count"]) is float
    assert pool["enableAutoScaling"] is True


def test_secrets_read_as_their_value_or_as_blinded_when_encrypted_without_the_passphrase():
    _, resources = read(FIXTURES / "aks-export.json")
    storage = resources[f"{STACK}azure-native:storage:StorageAccount::checkoutlogs"]
    assert storage.outputs is not None
    assert plain(storage.outputs["accessKeys"]) == ["k1", "k2"]  # written with --show-secrets: plaintext JSON
    stack = resources[f"{STACK}pulumi:pulumi:Stack::checkout-infra-pr-1234"]
    assert stack.outputs is not None
    # Without the passphrase a ciphertext reads as the engine's "[secret]": a rule needing it cannot be checked.
    assert stack.outputs["kubeconfig"] == BLINDED_SECRET


def test_stack_export_skips_old_copies_waiting_for_deletion():
    doc = json.loads((FIXTURES / "aks-export.json").read_text())
    doc["deployment"]["resources"][4]["delete"] = True
    assert POOL not in {r.urn for r in read_text(json.dumps(doc))}


# --- preview -------------------------------------------------------------------------------------------------


def test_preview_yields_each_planned_resource_once_and_not_deleted_ones():
    document, resources = read(FIXTURES / "aks-preview.json")
    assert document.shape is PREVIEW
    assert len(resources) == 10
    assert f"{STACK}azure-native:containerservice:AgentPool::legacy" not in resources  # an op "delete" step
    assert resources[POOL].props["maxCount"] == 60.0  # the update's newState, not its oldState


def test_preview_unknown_values_stay_the_engine_placeholder_and_missing_outputs_fall_back_to_inputs():
    _, resources = read(FIXTURES / "aks-preview.json")
    created = resources[f"{STACK}azure-native:containerservice:AgentPool::ingest"]
    assert created.props["resourceName"] == UNKNOWN
    assert created.outputs is created.props
    assert created.id is None
    assert list(created.property_dependencies["resourceName"]) == [CLUSTER]


def test_preview_replacement_counts_once_with_the_new_state():
    old = {"type": "kubernetes:core/v1:ConfigMap", "inputs": {"data": {"k": "old"}}}
    new = {"type": "kubernetes:core/v1:ConfigMap", "inputs": {"data": {"k": "new"}}}
    steps = [
        {"op": "create-replacement", "urn": "urn:a", "oldState": old, "newState": new},
        {"op": "replace", "urn": "urn:a", "oldState": old, "newState": new},
        {"op": "delete-replaced", "urn": "urn:a", "oldState": old},
    ]
    resources = read_text(json.dumps({"steps": steps}))
    assert [(r.urn, r.props["data"]["k"]) for r in resources] == [("urn:a", "new")]


@pytest.mark.parametrize("op", ["delete", "delete-replaced", "discard", "discard-replaced", "remove-pending-replace"])
def test_preview_steps_that_remove_a_resource_are_not_checked(op):
    state = {"type": "kubernetes:core/v1:ConfigMap", "inputs": {}}
    assert read_text(json.dumps({"steps": [{"op": op, "urn": "urn:x", "newState": state}]})) == []


def test_preview_of_an_empty_stack_has_no_steps_key():
    document = Document(json.dumps({"config": {}, "changeSummary": {}, "duration": 1}))
    assert list(document.resources()) == []
    assert document.shape is PREVIEW


def test_located_gives_the_offset_where_each_resource_object_starts():
    text = (FIXTURES / "aks-export.json").read_text()
    for resource, offset in Document(text).located():
        assert text[offset] == "{"
        assert json.JSONDecoder().raw_decode(text, offset)[0]["urn"] == resource.urn


# --- errors: one message naming the JSON path, the value and what was expected ------------------------------

ERRORS = {
    "array": (
        "[1, 2]",
        "unknown shape: the document is an array, not an object; give `pulumi stack export`, "
        "`pulumi preview --json` or `terraform show -json` output, a terraform.tfstate, or Kubernetes YAML",
    ),
    "unknown-keys": (
        '{"name": "checkout", "pools": []}',
        'unknown shape: top-level keys "name", "pools"; give '
        "`pulumi stack export`, `pulumi preview --json` or `terraform show -json` output, a terraform.tfstate, or "
        'Kubernetes YAML ({"version": 3, "deployment": {"resources": [...]}}, {"steps": [...]} or '
        '{"resource_changes": [...]})',
    ),
    "empty-object": (
        "{}",
        "unknown shape: top-level keys (none); give `pulumi stack export`, `pulumi preview --json` or "
        "`terraform show -json` output, a terraform.tfstate, or Kubernetes YAML "
        '({"version": 3, "deployment": {"resources": [...]}}, {"steps": [...]} or {"resource_changes": [...]})',
    ),
    "terraform-format-2": (
        '{"format_version": "2.0", "terraform_version": "1.9.5", "planned_values": {}}',
        'format_version: "2.0" is not supported: wirespeed reads what `terraform show -json` has written ("0.1" '
        'Terraform 0.12 to 1.0.0; "0.2" Terraform 1.0.1 to 1.0.x; "1.x" Terraform 1.1 and later)',
    ),
    "terraform-next-to-pulumi": (
        '{"version": 3, "deployment": {"resources": []}, "resource_changes": []}',
        'unknown shape: "resource_changes" (terraform show -json PLANFILE) next to pulumi stack export content',
    ),
    "version-2": (
        '{"version": 2, "deployment": {"resources": []}}',
        "version: 2 is not supported: `pulumi stack export` writes deployment version 3",
    ),
    "version-missing": (
        '{"deployment": {"resources": []}}',
        "version: missing: `pulumi stack export` writes deployment version 3",
    ),
    "both-shapes": (
        '{"version": 3, "deployment": {}, "steps": []}',
        'unknown shape: "steps" (pulumi preview --json) next to pulumi stack export content',
    ),
    "deployment-not-object": ('{"version": 3, "deployment": []}', "deployment: expected an object, got an array ([])"),
    "resources-not-array": (
        '{"version": 3, "deployment": {"resources": {"a": 1}}}',
        'deployment.resources: expected an array, got an object ({"a": 1})',
    ),
    "resource-not-object": (
        '{"version": 3, "deployment": {"resources": ["urn:x"]}}',
        'deployment.resources[0]: expected an object, got a string ("urn:x")',
    ),
    "type-missing": (
        '{"version": 3, "deployment": {"resources": [{"urn": "urn:x"}]}}',
        "deployment.resources[0].type: expected a string, got null (null)",
    ),
    "type-number": (
        '{"version": 3, "deployment": {"resources": [{"urn": "urn:x", "type": 5}]}}',
        "deployment.resources[0].type: expected a string, got a number (5)",
    ),
    "inputs-array": (
        '{"version": 3, "deployment": {"resources": [{"urn": "u", "type": "t", "inputs": [1]}]}}',
        "deployment.resources[0].inputs: expected an object, got an array ([1])",
    ),
    "dependency-not-urn": (
        '{"version": 3, "deployment": {"resources": [{"urn": "u", "type": "t", '
        '"propertyDependencies": {"resourceName": [true]}}]}}',
        "deployment.resources[0].propertyDependencies.resourceName[0]: expected a string, got a boolean (true)",
    ),
    "steps-not-array": ('{"steps": {}}', "steps: expected an array, got an object ({})"),
    "step-op-missing": ('{"steps": [{"urn": "u"}]}', "steps[0].op: expected a string, got null (null)"),
    "new-state-type": (
        '{"steps": [{"op": "create", "urn": "u", "newState": {"type": ["t"]}}]}',
        'steps[0].newState.type: expected a string, got an array (["t"])',
    ),
    "long-value-cut": (
        '{"steps": [{"op": "create", "urn": "u", "newState": "' + "x" * 80 + '"}]}',
        'steps[0].newState: expected an object, got a string ("' + "x" * 56 + "...)",
    ),
    "not-json": ('{"steps": [}', f"not JSON: Expecting value: line 1 column 12 (char 11); {WHAT_TO_RUN}"),
    "missing-comma": (
        '{"version": 3 "deployment": {}}',
        f"not JSON: Expecting ',' delimiter: line 1 column 15 (char 14); {WHAT_TO_RUN}",
    ),
    "single-quotes": (
        "{'steps': []}",
        f"not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1); {WHAT_TO_RUN}",
    ),
    "trailing-data": (
        '{"steps": []} {"steps": []}',
        f"not JSON: Extra data: line 1 column 15 (char 14); {WHAT_TO_RUN}",
    ),
    "cut-short": (
        '{"version": 3, "deployment": {"resources": [{"urn": "u", "type": "t"',
        "not JSON: Expecting ',' delimiter: line 1 column 69 (char 68): the file ends before the JSON does (cut "
        f"short?); {WHAT_TO_RUN}",
    ),
    # A shape problem before the syntax error: the broken JSON is the diagnosis, not the format_version.
    "broken-after-a-bad-version": (
        '{"format_version": "9.9", "resource_changes": [}',
        f"not JSON: Expecting value: line 1 column 48 (char 47); {WHAT_TO_RUN}",
    ),
    "broken-after-a-bad-field": (
        '{"version": 3, "deployment": {"resources": [{"urn": 5}]}, "x": [1 2]}',
        f"not JSON: Expecting ',' delimiter: line 1 column 67 (char 66); {WHAT_TO_RUN}",
    ),
    "empty-file": ("", f"the file is empty: {WHAT_TO_RUN}"),
    "only-whitespace": ("\n  \n", f"the file is empty: {WHAT_TO_RUN}"),
    "plan-json-stream": (
        '{"@level":"info","@message":"Terraform 1.9.8","@module":"terraform.ui","type":"version"}\n'
        '{"@level":"info","@message":"aws_kms_key.k: Plan to create","type":"planned_change"}\n',
        "a `terraform plan -json` log stream (one JSON message per line: @level, @message, type), not a plan: save "
        "the plan with `terraform plan -out PLANFILE` and give `terraform show -json PLANFILE`",
    ),
    "plan-json-stream-one-line": (
        '{"@level":"info","@message":"Terraform 1.9.8","@module":"terraform.ui","type":"version"}\n',
        "a `terraform plan -json` log stream (one JSON message per line: @level, @message, type), not a plan: save "
        "the plan with `terraform plan -out PLANFILE` and give `terraform show -json PLANFILE`",
    ),
    "terraform-format-2-plan": (
        '{"format_version": "2.0", "resource_changes": []}',
        'format_version: "2.0" is not supported: wirespeed reads what `terraform show -json` has written ("0.1" '
        'Terraform 0.12 to 1.0.0; "0.2" Terraform 1.0.1 to 1.0.x; "1.x" Terraform 1.1 and later)',
    ),
    "raw-state-version-3": (
        '{"version": 3, "terraform_version": "0.11.14", "serial": 4, "lineage": "x", "modules": []}',
        "a terraform.tfstate of version 3, without resources[]: wirespeed reads version 4 (Terraform 0.12 and "
        "later); or give `terraform show -json` of the state",
    ),
    "raw-state-version-5": (
        '{"version": 5, "terraform_version": "9.0.0", "resources": []}',
        "version: 5 is not supported: wirespeed reads terraform.tfstate version 4 (Terraform 0.12 and later); or "
        "give `terraform show -json` of the state",
    ),
    "raw-state-flat-attributes": (
        '{"version": 4, "resources": [{"mode": "managed", "type": "t", "name": "n", '
        '"instances": [{"attributes_flat": {"id": "x"}}]}]}',
        "resources[0].instances[0]: only attributes_flat (Terraform 0.11's flat map, kept by the upgrade to state "
        "version 4): give `terraform show -json` of the state, which decodes it with the provider's schema",
    ),
    "raw-state-bad-index": (
        '{"version": 4, "resources": [{"mode": "managed", "type": "t", "name": "n", '
        '"instances": [{"index_key": true, "attributes": {}}]}]}',
        "resources[0].instances[0].index_key: expected a whole number or a string, got a boolean (true)",
    ),
    "yaml-not-kubernetes": (
        "name: checkout\nruntime: python\n",
        "YAML, but not Kubernetes objects (document 1 (line 1): not a Kubernetes object (it needs apiVersion and "
        "kind)) (a Pulumi project or stack file? give the stack's `pulumi preview --json` or `pulumi stack export`); "
        + WHAT_TO_RUN,
    ),
    "yaml-some-not-kubernetes": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- 1\n---\nkind: Thing\n",
        "document 2 (line 5): not a Kubernetes object (it needs apiVersion and kind); document 3 (line 7): not a "
        "Kubernetes object (it needs apiVersion and kind): every document must be a Kubernetes object",
    ),
    "yaml-recursive-alias": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a, self: *m}\n",
        "line 3: the alias *m is inside the node &m it names (a recursive document); write the value out instead",
    ),
    "yaml-helm-template": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }\n",
        "not YAML: expected ',' or '}', but got '<stream end>' at line 5 (a Helm chart's template? render it "
        "first: `helm template`)",
    ),
    "yaml-broken": (
        "apiVersion: v1\nkind: [ConfigMap\n",
        "not YAML: expected ',' or ']', but got '<stream end>' at line 3",
    ),
    "yaml-empty-documents": ("---\n---\n", f"the YAML holds no document: {WHAT_TO_RUN}"),
    "deep-nesting": (
        '{"steps": [' + "[" * 100_000 + "]}",
        "not readable: JSON nested deeper than Python's recursion limit",
    ),
}


@pytest.mark.parametrize(("text", "message"), list(ERRORS.values()), ids=list(ERRORS))
def test_unreadable_documents_say_exactly_what_is_wrong(text, message):
    with pytest.raises(UnreadableInputError) as caught:
        read_text(text)
    assert str(caught.value) == message


def test_json_errors_match_the_stdlib_decoder_messages():
    text = '{"version": 3, "deployment": {"resources": [{"urn": "u",, "type": "t"}]}}'
    with pytest.raises(json.JSONDecodeError) as stdlib:
        json.loads(text)
    with pytest.raises(UnreadableInputError) as ours:
        read_text(text)
    assert str(ours.value) == f"not JSON: {stdlib.value}; {WHAT_TO_RUN}"


# --- the cursor decodes exactly what json.loads decodes ----------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


def walk(cursor: JsonCursor) -> Any:
    """Rebuild the value at the cursor through members()/items(), scalars through value()."""
    if cursor.peek() == "{":
        return {key: walk(cursor) for key in cursor.members()}
    if cursor.peek() == "[":
        return [walk(cursor) for _ in cursor.items()]
    return cursor.value()


@given(value=json_values, indent=st.sampled_from([None, 0, 2, "\t"]), pad=st.sampled_from(["", " ", "\n\t\r "]))
def test_cursor_walk_equals_json_loads_with_float_numbers(value, indent, pad):
    text = pad + json.dumps(value, indent=indent) + pad
    cursor = JsonCursor(text)
    rebuilt = walk(cursor)
    cursor.end()
    assert rebuilt == json.loads(text, parse_int=float)


@given(text=st.text(alphabet='{}[]:,"0123456789.eE-+ \ntrufalsn\\', max_size=30))
def test_cursor_rejects_exactly_what_json_loads_rejects(text):
    try:
        expected: Any = json.loads(text, parse_int=float)
    except json.JSONDecodeError:
        expected = json.JSONDecodeError
    try:
        cursor = JsonCursor(text)
        got: Any = walk(cursor)
        cursor.end()
    except json.JSONDecodeError:
        got = json.JSONDecodeError
    assert got == expected


@given(resources=st.lists(st.dictionaries(st.text(max_size=5), json_values, max_size=4), max_size=5))
def test_streamed_export_props_equal_the_whole_document_decoded(resources):
    states = [{"urn": f"urn:{i}", "type": "t:m:R", "inputs": inputs} for i, inputs in enumerate(resources)]
    text = json.dumps({"version": 3, "deployment": {"resources": states}})
    read = read_text(text)
    assert [plain(r.props) for r in read] == [
        s["inputs"] for s in json.loads(text, parse_int=float)["deployment"]["resources"]
    ]
