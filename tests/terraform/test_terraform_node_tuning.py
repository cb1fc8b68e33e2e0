"""wirespeed.terraform.node_tuning, the generator of modules/node-tuning/manifests.tf.json: manifest text reaches
Terraform unchanged (checked with the real terraform binary), and only the image and namespace are references.

The objects themselves are compared with the renderer's by tests/terratest/node_tuning_test.go over
tests/vectors/node_tuning.json, and applied to a real API server by
tests/terraform/test_terraform_node_tuning_apiserver.py.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import require
from wirespeed.sizing import snat_limits
from wirespeed.terraform import node_tuning

NO_TERRAFORM = "needs the terraform binary on PATH (>= 1.9) to evaluate the generated templates"
# Sequences Terraform's template syntax treats specially, next to ones it must leave alone.
TRICKY = ["$", "$$", "${x}", "$${x}", "$$${x}", "%{ if x }", "%%{x}", "%%%{x}", "a$", "$}", "%", "${", "%{", "$${",
          "{{ $labels.instance }}", "x${y}%{z}$", "\\${x}", "$\n{", "$__rate_interval", "~}", "${~", "%{~"]  # fmt: skip


def _random_texts(count: int = 200, seed: int = 10) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice("$%{}~ab\\\n") for _ in range(rng.randint(1, 12))) for _ in range(count)]


@pytest.fixture(scope="module")
def terraform() -> str:
    found = shutil.which("terraform")
    require(None if found else NO_TERRAFORM)
    assert found is not None
    return found


def test_escaped_text_and_keys_evaluate_to_themselves_in_terraform(terraform: str, tmp_path: Path) -> None:
    texts = TRICKY + _random_texts()
    value = {"texts": texts, "keys": {text: index for index, text in enumerate(texts)}}
    document = {
        "locals": {"value": node_tuning.terraform_template(value)},
        "output": {"value": {"value": "${local.value}"}},
    }
    (tmp_path / "main.tf.json").write_text(json.dumps(document))
    (tmp_path / "terraformrc").write_text("")
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(tmp_path / "terraformrc"), "CHECKPOINT_DISABLE": "1"}
    for args in (("apply", "-auto-approve", "-input=false"), ("output", "-json", "value")):
        done = subprocess.run(
            [terraform, f"-chdir={tmp_path}", *args, "-no-color"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == value


def test_only_the_image_and_namespace_are_references() -> None:
    text = node_tuning.MANIFESTS_PATH.read_text()
    # A ${ or %{ not preceded by its escape ($${, %%{) is a live template sequence.
    live = set(re.findall(r"(?<![$%])[$%]\{[^}]*\}", text.replace("$${", "").replace("%%{", "")))
    assert live == {node_tuning.IMAGE_REFERENCE, node_tuning.NAMESPACE_REFERENCE}


def test_a_placeholder_in_an_object_key_is_refused() -> None:
    with pytest.raises(ValueError, match="a placeholder is in the object key"):
        node_tuning.terraform_template({"labels": {node_tuning.NAMESPACE_PLACEHOLDER: "x"}})


def test_every_builtin_profile_and_monitoring_option_has_a_vector() -> None:
    cases = json.loads(node_tuning.VECTORS_PATH.read_text())["cases"]
    valid = [c["inputs"] for c in cases if "expected" in c]
    combos = {(tuple(i.get("profiles", ())), i["pod_monitor"], i["alerts"]) for i in valid if "objects_json" not in i}
    for profiles in (("throughput",), ("balanced",), ("balanced", "throughput"), ("throughput", "balanced")):
        for pod_monitor in (False, True):
            for alerts in (False, True):
                assert (profiles, pod_monitor, alerts) in combos
    refused = {c["errors"][0]["variable"] for c in cases if "errors" in c}
    assert refused == {"profiles", "image", "namespace", "outbound", "probe_port"}
    # The probe port: composed with and without an outbound section, and at both ends of its range.
    probed = [c["inputs"] for c in cases if "expected" in c and "probe_port" in c["inputs"]]
    assert any("outbound" in i for i in probed)
    assert any("outbound" not in i for i in probed)
    assert {1, 65_535} <= {i["probe_port"] for i in probed}
    # Every kind of outbound section, each composed by the module as the renderer writes it.
    assert {c["inputs"]["outbound"]["kind"] for c in cases if "expected" in c and "outbound" in c["inputs"]} == set(
        snat_limits.KINDS
    )
