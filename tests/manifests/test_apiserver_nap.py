"""wirespeed's NAP objects against a real kube-apiserver (tests/apiserver.py) carrying the upstream AKSNodeClass and
NodePool CRDs (tests/fixtures/karpenter-provider-azure: OpenAPI schemas and CEL validation rules as published).

For the oldest provider the node class needs (v1.10.0, the first with linuxOSConfig) and a current one (v1.14.2):
every golden render of `wirespeed render aks-nap` is server-side applied, admitted without a warning and stored with
every field wirespeed set; and the CEL rules are shown to be live by objects they refuse.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from conftest import ROOT

CRDS = ROOT / "tests" / "fixtures" / "karpenter-provider-azure"
GOLDEN = ROOT / "tests" / "golden" / "aks-nap"
# Applied oldest first: the later version's CRDs replace the earlier ones in the one API server of the session.
VERSIONS = ["v1.10.0", "v1.14.2"]
CRD_NAMES = ("aksnodeclasses.karpenter.azure.com", "nodepools.karpenter.sh")


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def install_crds(apiserver, version: str) -> None:
    for path in sorted((CRDS / version).glob("*.yaml")):
        apiserver.apply(path.read_text(), field_manager="karpenter-crds")
    for name in CRD_NAMES:
        apiserver.kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s")


def stored(apiserver, kind: str, name: str) -> dict[str, Any]:
    plural = {"AKSNodeClass": "aksnodeclasses.karpenter.azure.com", "NodePool": "nodepools.karpenter.sh"}[kind]
    return json.loads(apiserver.kubectl("get", plural, name, "-o", "json").stdout)


def contains(live: Any, wanted: Any) -> bool:
    """Whether every field of ``wanted`` is in ``live`` with the same value (the server adds defaults)."""
    if isinstance(wanted, dict):
        return isinstance(live, dict) and all(k in live and contains(live[k], v) for k, v in wanted.items())
    return bool(live == wanted)


def refused(apiserver, obj: dict[str, Any]) -> str:
    out = apiserver.kubectl(
        "apply", "--server-side", "--field-manager=wirespeed-test", "-f", "-", stdin=json.dumps(obj), check=False
    )
    assert out.returncode != 0, f"admitted: {obj}"
    return out.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_rendered_objects_are_admitted_by_the_upstream_crds(apiserver, version):
    install_crds(apiserver, version)
    for golden in sorted(GOLDEN.glob("*.yaml")):
        text = golden.read_text()
        out = apiserver.apply(text)
        assert "Warning" not in out.stderr, (golden.name, out.stderr)
        for doc in documents(text):
            live = stored(apiserver, doc["kind"], doc["metadata"]["name"])
            assert live["apiVersion"] == doc["apiVersion"]
            assert contains(live["metadata"], doc["metadata"]), (golden.name, doc["kind"])
            assert contains(live["spec"], doc["spec"]), (golden.name, doc["kind"], live["spec"])


@pytest.mark.parametrize("version", VERSIONS)
def test_the_crds_cel_rules_run(apiserver, version):
    install_crds(apiserver, version)
    node_class, node_pool = documents((GOLDEN / "throughput-x86.yaml").read_text())
    # SysctlConfiguration's rule: the first port of netIPv4IPLocalPortRange must not exceed the last.
    bad_class = json.loads(json.dumps(node_class))
    bad_class["metadata"]["name"] = "cel-port-range"
    bad_class["spec"]["linuxOSConfig"]["sysctls"]["netIPv4IPLocalPortRange"] = "60000 40000"
    assert "netIPv4IPLocalPortRange first port must be <= last port" in refused(apiserver, bad_class)
    # The schema's bounds: netCoreNetdevMaxBacklog is 1,000..3,240,000 in the CRD, as AKS takes it.
    bad_class["spec"]["linuxOSConfig"]["sysctls"] = {"netCoreNetdevMaxBacklog": 999}
    assert "netCoreNetdevMaxBacklog" in refused(apiserver, bad_class)
    # NodePool's rule on requirement keys: kubernetes.io/hostname is restricted.
    bad_pool = json.loads(json.dumps(node_pool))
    bad_pool["metadata"]["name"] = "cel-hostname"
    bad_pool["spec"]["template"]["spec"]["requirements"].append(
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}
    )
    assert "restricted" in refused(apiserver, bad_pool)
