"""The admission policy every install ships, checked offline by the Kubernetes code the tests build
(builders/apiserver/bin/vap-typecheck, from the same k8s.io/kubernetes release as the test API server):

- no type-checking warning against the Node schema: what kube-controller-manager would write to the policy's
  status.typeChecking (the test API server runs without a controller-manager, so nothing else would notice);
- every expression compiles in the CEL environment an API server of the minimum supported release validates a new
  policy in (Kubernetes 1.N checks against 1.(N-1)), so the policy is accepted from the version the docs state, not
  only by the 1.37 server the tests run.

How the policy behaves is tested on the real API server: tests/agent/test_apiserver_confinement.py.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
import yaml

from apiserver import ROOT
from conftest import require
from wirespeed.manifests import ADMISSION_POLICY_MIN_KUBERNETES, node_tuning_objects
from wirespeed.profiles import builtin_profile

VAP_TYPECHECK = ROOT / "builders" / "apiserver" / "bin" / "vap-typecheck"
AGENT_POLICY = ROOT / "agent" / "internal" / "nodestatus" / "own-node-policy.yaml"


def older_compatibility_version(minimum: str) -> str:
    """The CEL compatibility version a Kubernetes `minimum` API server checks new expressions against: N-1."""
    major, minor = (int(part) for part in minimum.split("."))
    return f"{major}.{minor - 1}"


def vap_typecheck(policies: str, compat: str) -> dict[str, Any]:
    if not VAP_TYPECHECK.exists():
        require(
            f"{VAP_TYPECHECK.relative_to(ROOT)} is missing: build it with builders/apiserver/build.sh (make test does)"
        )
    out = subprocess.run(
        [str(VAP_TYPECHECK), "-compat", compat], input=policies, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    checked: dict[str, Any] = json.loads(out.stdout)
    return checked


def rendered_policy() -> str:
    objects = node_tuning_objects([builtin_profile("throughput")])
    return yaml.safe_dump_all([o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"])


def test_a_130_api_server_checks_against_129():
    assert older_compatibility_version(ADMISSION_POLICY_MIN_KUBERNETES) == "1.29"


@pytest.mark.parametrize(
    "policies",
    [
        pytest.param(AGENT_POLICY.read_text(), id="agent-source"),
        pytest.param(rendered_policy(), id="rendered"),
    ],
)
def test_the_policy_type_checks_clean_and_compiles_for_the_minimum_kubernetes(policies):
    checked = vap_typecheck(policies, older_compatibility_version(ADMISSION_POLICY_MIN_KUBERNETES))
    assert checked == {"wirespeed-agent-own-node": {"typeChecking": [], "compile": []}}


def test_the_checks_catch_a_misspelt_field_and_a_too_new_cel_feature():
    """The two checks are not vacuous: a field the Node schema lacks is a type-checking warning, and a two-variable
    comprehension (CEL environment of 1.32) does not compile for a 1.30 API server."""
    policy = next(yaml.safe_load_all(AGENT_POLICY.read_text()))
    policy["spec"]["validations"][0]["expression"] = "object.spec.unschedulabel == true"
    policy["spec"]["validations"][1]["expression"] = "variables.annotations.all(k, v, v != '')"
    checked = vap_typecheck(yaml.safe_dump(policy), "1.29")["wirespeed-agent-own-node"]
    assert [w["fieldRef"] for w in checked["typeChecking"]] == ["spec.validations[0].expression"]
    assert "undefined field 'unschedulabel'" in checked["typeChecking"][0]["warning"]
    assert [c["field"] for c in checked["compile"]] == ["spec.validations[1].expression"]
    assert "undeclared reference to 'all'" in checked["compile"][0]["error"]
    assert vap_typecheck(yaml.safe_dump(policy), "1.32")["wirespeed-agent-own-node"]["compile"] == []
