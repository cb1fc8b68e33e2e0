"""Property tests of the parsers and models behind the commands, on near-valid hostile input (tests/hostile.py).

What each property means:

- **Pool strings** (``--pool MAX[:SURGE]``, a workload's pools): :meth:`Pool.parse` returns a pool or raises
  :class:`SizingError` naming the spec, for any text; a pool it returns is within AKS's limits (1..1,000 nodes,
  surge 0..1,000 nodes or 0..100%) and its own ``MAX:SURGE`` text parses back to the same pool.
- **Stack config** (``wirespeed:*`` keys, the pool string ``NAME:VM_SIZE:MIN:MAX[:SURGE[:PROFILE]]``, for Azure and
  for AWS): the parser returns a spec or raises its config error, every problem under a ``wirespeed:`` key; no
  other exception, whatever the types of the values.
- **The profile model agrees with the shared contract**: for mutations of the shared vectors' valid profiles, the
  Python model accepts a document exactly when the committed JSON schema (what the Go agent validates with,
  tests/profiles/test_profile.py) does. A family of mutations the vectors name (bounds, types, unknown keys) is
  generated
  rather than listed, so a disagreement between the two languages cannot hide between the hand-written vectors.
- The drift judge's properties are in tests/drift/test_props_drift.py.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conftest import ROOT
from hostile import bounded, edge_strings, mutated
from wirespeed.aws.stack_config import EksStackError, eks_stack
from wirespeed.azure.stack_config import StackConfigError, cluster_spec
from wirespeed.profile import CIDR_FORMAT, ProfileError, _cidr, committed_schema, validate_profile
from wirespeed.sizing import Pool, SizingError

# --- pool strings ------------------------------------------------------------------------------------------------

surge_text = st.one_of(
    st.integers(-2, 1_002).map(str),
    st.decimals(-1, 102, places=2, allow_nan=False).map(lambda d: f"{d}%"),
    st.sampled_from(["10%", "100%", "0%", "1e1%", "nan%", "inf%", "%", "10%%", " 2", "2 ", "1_0", "\u0661", "0x1"]),
)
pool_specs = st.one_of(
    st.builds(lambda m, s: f"{m}:{s}", st.integers(-2, 1_002).map(str) | edge_strings, surge_text),
    st.integers(-2, 1_002).map(str),
    st.text(alphabet="0123456789:%. e-", max_size=12),
    st.text(max_size=12),
)


@bounded(300)
@given(spec=pool_specs, name=st.sampled_from(["", "apps"]))
def test_pool_parse_returns_a_pool_within_aks_limits_or_names_the_spec(spec, name):
    try:
        pool = Pool.parse(spec, name)
    except SizingError as exc:
        refused = exc
    else:
        refused = None
    if refused is not None:
        assert refused.field == (f"pool {name!r}" if name else "--pool")
        assert refused.value == spec
        return
    assert 1 <= pool.max_count <= 1_000
    assert 0 <= pool.surge_nodes <= 1_000
    assert Pool.parse(f"{pool.max_count}:{pool.surge_text()}", name) == pool


# --- stack config ------------------------------------------------------------------------------------------------

VALID_AZURE = {
    "location": "westeurope",
    "systemPool": "system:Standard_D4s_v6:3:5:1",
    "pools": ["apps:Standard_D16s_v6:3:20:10%:throughput"],
    "allocatedOutboundPorts": 4000,
    "outboundIpCount": 2,
}
azure_pool_strings = st.builds(
    lambda parts: ":".join(parts),
    st.lists(
        st.one_of(
            st.sampled_from(["apps", "net", "Apps", "a" * 13, "Standard_D16s_v6", "D16s_v6", "Standard_Nope"]),
            st.integers(-1, 1_002).map(str),
            surge_text,
            st.sampled_from(["throughput", "balanced", "nosuch", ""]),
            edge_strings,
        ),
        min_size=0,
        max_size=7,
    ),
)


@bounded(150)
@given(
    config=st.one_of(
        mutated(VALID_AZURE),
        st.builds(lambda pools: {**VALID_AZURE, "pools": pools}, st.lists(azure_pool_strings, max_size=3)),
    )
)
def test_azure_stack_config_returns_a_spec_or_names_every_key(config):
    assume(isinstance(config, dict))  # Pulumi hands the program a mapping of keys; values may be anything
    try:
        spec = cluster_spec(config)
    except StackConfigError as exc:
        problems = exc.problems
    else:
        problems = None
    if problems is not None:
        assert problems
        assert all(problem.field.startswith("wirespeed:") for problem in problems), problems
        return
    for pool in spec.pools:
        assert 0 <= pool.min_count <= pool.max_count <= 1_000


VALID_AWS = {
    "clusterName": "ingest",
    "nodeRoleArn": "arn:aws:iam::123456789012:role/node",
    "subnetIds": ["subnet-a", "subnet-b"],
    "nodeGroups": ["ingest:c6in.8xlarge:2:40:1:throughput"],
}


@bounded(150)
@given(config=mutated(VALID_AWS))
def test_aws_stack_config_returns_a_spec_or_names_every_key(config):
    assume(isinstance(config, dict))
    try:
        eks_stack(config)
    except EksStackError as exc:
        problems = exc.problems
    else:
        return
    assert problems
    assert all(problem.field.startswith("wirespeed:") for problem in problems), problems


# --- the profile model against the shared contract -------------------------------------------------------------

VECTORS = json.loads((ROOT / "tests" / "vectors" / "profiles.json").read_text())
VALID_PROFILES = [case["profile"] for case in VECTORS["valid"]]
_FORMATS = jsonschema.FormatChecker()
_FORMATS.checks(CIDR_FORMAT, raises=ValueError)(lambda value: not isinstance(value, str) or bool(_cidr(value)))
SCHEMA = jsonschema.Draft202012Validator(committed_schema(), format_checker=_FORMATS)

# Edits the vectors name, as a family: each sets one field of a valid profile to a generated value.
FIELDS = [
    ("rings", "mlx5_core", "rx"),
    ("rings", "ena", "tx"),
    ("sysctls", "net.core.netdev_max_backlog"),
    ("sysctls", "net.core.netdev_budget"),
    ("sysctls", "net.ipv4.tcp_fin_timeout"),
    ("mtu", "value"),
    ("name",),
    ("schema_version",),
    ("outbound", "allocated_ports_per_node"),
]
field_values = st.one_of(
    st.integers(-10, 4_000_000),
    st.sampled_from([63, 64, 65_536, 65_537, 999, 1_000, 3_240_000, 3_240_001, 1_279, 1_280, 9_216, 9_217]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e7, max_value=1e7),
    st.sampled_from([8192.0, 8192.5, True, False, None, "1000", "x", [], {}]),
)


def _set(document: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(document))
    node = doc
    for key in path[:-1]:
        child = node.get(key)
        node[key] = child = child if isinstance(child, dict) else {}
        node = child
    node[path[-1]] = value
    return doc


profile_documents = st.one_of(
    st.builds(_set, st.sampled_from(VALID_PROFILES), st.sampled_from(FIELDS), field_values),
    st.sampled_from(VALID_PROFILES).flatmap(lambda doc: mutated(doc, max_mutations=2)),
)


def _model_accepts(document: Any) -> bool:
    try:
        validate_profile(document)
    except ProfileError:
        return False
    return True


@bounded(300)
@given(document=profile_documents)
def test_the_model_accepts_exactly_what_the_shared_schema_accepts(document):
    assume(isinstance(document, dict))  # validate_profile takes an object; load_profile (the CLI test) takes text
    # Kind "outbound" profiles need every field of their kind: an edit that sets only one is a family of its own.
    assume(not isinstance(document, dict) or "outbound" not in document or isinstance(document["outbound"], dict))
    schema_errors = [e.message for e in SCHEMA.iter_errors(document)]
    assert _model_accepts(document) is (not schema_errors), (document, schema_errors)


def test_azure_list_keys_of_another_type_are_problems_not_crashes():
    with pytest.raises(StackConfigError) as info:
        cluster_spec({**VALID_AZURE, "pools": -1, "zones": "1"})
    assert {"wirespeed:pools", "wirespeed:zones"} <= {p.field for p in info.value.problems}
