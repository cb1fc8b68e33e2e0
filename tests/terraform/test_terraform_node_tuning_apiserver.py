"""modules/node-tuning's objects, as the real terraform binary computes them, server-side applied to a real
kube-apiserver (tests/apiserver.py) and admitted.

The kubernetes provider itself cannot be obtained here (its plugin comes from no package registry), so
``kubernetes_manifest`` cannot run. What it would send is the module's ``local.objects``, one server-side apply per
object under the field manager main.tf names: this test computes them with ``terraform apply`` on the module's
provider-free files (variables.tf, locals*.tf, *.tf.json, as tests/terratest's PureHarness does) and applies them
the same way with kubectl. PodMonitor and PrometheusRule are left out: they need the Prometheus Operator CRDs,
which this API server does not have (tests/terratest compares them with the renderer's).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from clirun import WIRESPEED
from conftest import require
from wirespeed.manifests import NodeTuningOptions, node_tuning_objects
from wirespeed.profile import load_profile
from wirespeed.profiles import builtin_profile
from wirespeed.terraform import node_tuning

MODULE = node_tuning.MODULE_PATH
FIELD_MANAGER = "wirespeed-terraform"  # main.tf's field_manager
NO_TERRAFORM = "needs the terraform binary on PATH (>= 1.9) to compute modules/node-tuning's objects"
HARNESS = """
output "objects" {
  value = local.objects
}
"""
DIGEST_IMAGE = "registry.example.com/platform/wirespeed-agent@sha256:" + "4" * 64

NUMERIC_NAME = "1e3.json"  # written by the test: the throughput profile renamed 1e3

# (module inputs, or None for objects_json from `wirespeed render node-tuning` of these profiles --output json;
#  the renderer's profiles and options for the same install)
CASES: dict[str, tuple[dict[str, Any] | None, list[str], NodeTuningOptions]] = {
    "two-profiles": (
        {"profiles": ["throughput", "balanced"], "namespace": "ws-terraform"},
        ["throughput", "balanced"],
        NodeTuningOptions(namespace="ws-terraform"),
    ),
    "digest-image": (
        {"profiles": ["balanced"], "namespace": "ws-terraform-digest", "image": DIGEST_IMAGE},
        ["balanced"],
        NodeTuningOptions(namespace="ws-terraform-digest", image=DIGEST_IMAGE),
    ),
    "custom-profile-objects-json": (
        None,
        [str(node_tuning.CUSTOM_PROFILE_PATH), "throughput"],
        NodeTuningOptions(namespace="ws-terraform-custom"),
    ),
    # A profile name YAML 1.1 readers take for a number (kubectl's: 1000): Terraform keeps it a string end to end.
    "profile-named-1e3-objects-json": (
        None,
        [NUMERIC_NAME, "throughput"],
        NodeTuningOptions(namespace="ws-terraform-numeric"),
    ),
}


def render_json(*args: str) -> str:
    assert WIRESPEED, "the wirespeed console script is not installed (pip install -e .)"
    done = subprocess.run(
        [WIRESPEED, "render", "node-tuning", *args, "--output", "json"], capture_output=True, text=True, check=True
    )
    return done.stdout


def profiles_named(specs: list[str], directory: Path) -> list[Any]:
    return [builtin_profile(s) if not s.endswith(".json") else load_profile((directory / s).read_text()) for s in specs]


def as_json_list(objects: list[dict[str, Any]]) -> str:
    """Objects for `kubectl apply -f -` typed as kubernetes_manifest sends them (JSON, not YAML a reader re-types)."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})


def test_the_vectors_objects_json_is_what_the_cli_prints() -> None:
    """tests/vectors/node_tuning.json's objects_json case (tests/terratest applies it) is the CLI's own output."""
    vectors = json.loads(node_tuning.VECTORS_PATH.read_text())["cases"]
    case = next(c for c in vectors if "objects_json" in c["inputs"])
    text = render_json(
        "--profile", str(node_tuning.CUSTOM_PROFILE_PATH), "--profile", "balanced", "--namespace", "net-tuning",
        "--image", node_tuning.DIGEST_IMAGE, "--pod-monitor",
    )  # fmt: skip
    assert case["inputs"]["objects_json"] == text


@pytest.fixture(scope="module")
def terraform() -> str:
    found = shutil.which("terraform")
    require(None if found else NO_TERRAFORM)
    assert found is not None
    return found


def pure_harness(directory: Path) -> Path:
    """The module's provider-free files and an output of the objects main.tf hands to kubernetes_manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    for pattern in ("variables.tf", "locals*.tf", "*.tf.json"):
        for source in MODULE.glob(pattern):
            shutil.copyfile(source, directory / source.name)
    (directory / "harness.tf").write_text(HARNESS)
    return directory


def terraform_objects(terraform: str, directory: Path, inputs: dict[str, Any]) -> list[dict[str, Any]]:
    (directory / "terraform.tfvars.json").write_text(json.dumps(inputs))
    config = directory / "terraformrc"
    config.write_text("")
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(config), "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    for args in (("init", "-input=false"), ("apply", "-auto-approve", "-input=false"), ("output", "-json", "objects")):
        done = subprocess.run(
            [terraform, f"-chdir={directory}", *args, "-no-color"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr + done.stdout
    objects: list[dict[str, Any]] = json.loads(done.stdout)
    return objects


def get(apiserver: Any, *args: str) -> dict[str, Any]:
    live: dict[str, Any] = json.loads(apiserver.kubectl("get", *args, "-o", "json").stdout)
    return live


@pytest.mark.parametrize("case", CASES)
def test_objects_terraform_computes_are_admitted_without_the_kubernetes_provider(
    apiserver: Any, terraform: str, tmp_path: Path, case: str
) -> None:
    given, profiles, options = CASES[case]
    numeric = builtin_profile("throughput").model_dump(mode="json", by_alias=True, exclude_none=True) | {"name": "1e3"}
    (tmp_path / NUMERIC_NAME).write_text(json.dumps(numeric))
    flags = [arg for spec in profiles for arg in ("--profile", str(tmp_path / spec) if spec == NUMERIC_NAME else spec)]
    inputs = {"objects_json": render_json(*flags, "--namespace", options.namespace)} if given is None else given
    objects = terraform_objects(terraform, pure_harness(tmp_path / "harness"), inputs)
    # One source: what Terraform computes is what the renderer gives (and so what `wirespeed render` prints).
    assert objects == node_tuning_objects(profiles_named(profiles, tmp_path), options)

    # main.tf's order: the Namespace and the admission policy (their own resources), then every other object.
    policy = [o for o in objects if o["kind"].startswith("ValidatingAdmissionPolicy")]
    assert [o["kind"] for o in policy] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    rest = [o for o in objects[1:] if o not in policy]
    for step in (objects[:1], policy):
        out = apiserver.apply(as_json_list(step), field_manager=FIELD_MANAGER)
        assert out.stderr == ""
    out = apiserver.apply(as_json_list(rest), field_manager=FIELD_MANAGER)
    assert out.stderr == "", out.stderr  # no Pod Security warning for the DaemonSets in their own namespace
    assert len(out.stdout.splitlines()) == len(rest)
    for obj in objects:
        meta = obj["metadata"]
        namespaced = ["-n", meta["namespace"]] if "namespace" in meta else []
        live = get(apiserver, obj["kind"].lower(), meta["name"], *namespaced, "--show-managed-fields")
        managers = {entry["manager"] for entry in live["metadata"]["managedFields"]}
        assert FIELD_MANAGER in managers, (obj["kind"], managers)
        for key in ("data", "rules", "roleRef", "subjects"):
            assert live.get(key) == obj.get(key), (obj["kind"], key)

    # Admission of what the DaemonSets will run: a Pod from each template, bound to a node, passes Pod Security
    # "privileged" and gets the system-node-critical priority (there is no DaemonSet controller here).
    namespace = options.namespace
    apiserver.ensure_default_service_account(namespace)
    for daemon_set in (o for o in objects if o["kind"] == "DaemonSet"):
        live = get(apiserver, "daemonset", daemon_set["metadata"]["name"], "-n", namespace)
        container = live["spec"]["template"]["spec"]["containers"][0]
        assert container["image"] == options.image
        # The profile label selects as the string it was rendered as (1e3 included), not as a number.
        selector = daemon_set["spec"]["template"]["spec"]["nodeSelector"]
        assert live["spec"]["template"]["spec"]["nodeSelector"] == selector
        assert (
            container["securityContext"] == daemon_set["spec"]["template"]["spec"]["containers"][0]["securityContext"]
        )
        template = daemon_set["spec"]["template"]
        pod: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{daemon_set['metadata']['name']}-node-a",
                "namespace": namespace,
                "labels": template["metadata"]["labels"],
            },
            "spec": dict(template["spec"], nodeName="node-a"),
        }
        created = apiserver.kubectl("create", "-f", "-", stdin=json.dumps(pod), check=False)
        assert created.returncode == 0, created.stderr
        assert created.stderr == ""
        admitted = get(apiserver, "pod", pod["metadata"]["name"], "-n", namespace)
        assert admitted["spec"]["priority"] == 2000001000  # system-node-critical, resolved by the Priority plugin

    # A second apply of the same objects changes nothing, as a second `terraform apply` must not.
    again = apiserver.apply(as_json_list(objects), field_manager=FIELD_MANAGER)
    assert all(line.endswith("serverside-applied") for line in again.stdout.splitlines()), again.stdout
    for daemon_set in (o for o in objects if o["kind"] == "DaemonSet"):
        assert (
            get(apiserver, "daemonset", daemon_set["metadata"]["name"], "-n", namespace)["metadata"]["generation"] == 1
        )
