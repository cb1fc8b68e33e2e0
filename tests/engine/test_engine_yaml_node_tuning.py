"""examples/yaml-node-tuning end to end under the real Pulumi engine (issue 26, item 4): the CLI, the YAML language
host and the kubernetes provider `make engine` builds (builders/pulumi/versions), the wirespeed provider's executable
plugin (provider/bin), a `file://` backend, and a real kube-apiserver of this module's own (tests/apiserver.py).

One stack for the module, in the order a team meets it: `pulumi up` creates exactly what `wirespeed render
node-tuning` prints for the same profiles; a preview and a second `up` change nothing; a change made behind Pulumi's
back (the profile ConfigMap's data, the DaemonSet's image) fails `pulumi preview --refresh --expect-no-changes`
naming the resource; a changed profile in config rolls its DaemonSet in place; the admission policy this install
created confines the agent (the tests of tests/agent/test_apiserver_confinement.py, run again here against these
objects); `pulumi destroy` leaves the API server as it found it.

The API server is this module's own, not the session's: the install's cluster-scoped objects (ClusterRole,
admission policy) have fixed names the session's other installs also use, and destroy deletes them. There is no
controller-manager, and the kubernetes provider waits for what it would do (a DaemonSet's rollout, a foreground
delete, a namespace's finalization): tests/apiserver.py's StandInControllers does those parts, and says how.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

import pulumi_cli
import test_apiserver_confinement as confinement
from apiserver import ApiServer, PrerequisiteMissingError, StandInControllers, running, stand_in_controllers
from clirun import WIRESPEED
from conftest import ROOT, require
from wirespeed.manifests import CHECKSUM_ANNOTATION, NodeTuningOptions, node_tuning_objects, profile_checksum
from wirespeed.profile import load_profile
from wirespeed.profiles import builtin_profile

EXAMPLE = ROOT / "examples" / "yaml-node-tuning"
PROJECT = "yaml-node-tuning"
STACK = "e2e"
PLUGIN_DIR = ROOT / "provider" / "bin"
NAMESPACE = confinement.NAMESPACE  # the namespace the confinement tests look in
# A profile document as a team would write one (only the name is required), and the same profile changed.
EDGE = {"name": "edge", "description": "Edge nodes.", "sysctls": {"net.core.netdev_max_backlog": 8192}}
EDGE_CHANGED = copy.deepcopy(EDGE) | {"sysctls": {"net.core.netdev_max_backlog": 16384}}
PROFILES: list[Any] = ["throughput", EDGE]
COMPONENT_URN = f"urn:pulumi:{STACK}::{PROJECT}::wirespeed:index:NodeTuning::tuning"
# `--expect-no-changes` found some: ExitNoChanges in pulumi/pulumi pkg/cmd/pulumi/cmd/exit_codes.go (commit 1b5949891b)
UNEXPECTED_CHANGES = 7
# What the API server (and its admission plugins) write on every object; what the program sends is everything else.
SERVER_SET_METADATA = {"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"}
# The DaemonSet registry's own (kubernetes pkg/registry/apps/daemonset/strategy.go, PrepareForCreate).
SERVER_SET_ANNOTATIONS = {"deprecated.daemonset.template.generation"}


def render(profiles: list[Any], folder: Path) -> list[dict[str, Any]]:
    """`wirespeed render node-tuning --output json` of ``profiles`` (documents written to files, as the CLI takes
    them) in NAMESPACE, and check the renderer agrees."""
    assert WIRESPEED, "the wirespeed console script is not installed (pip install -e .)"
    flags = []
    for index, profile in enumerate(profiles):
        if isinstance(profile, dict):
            path = folder / f"profile-{index}.json"
            path.write_text(json.dumps(profile))
            profile = str(path)
        flags += ["--profile", profile]
    done = subprocess.run(
        [WIRESPEED, "render", "node-tuning", *flags, "--namespace", NAMESPACE, "--output", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    objects: list[dict[str, Any]] = json.loads(done.stdout)
    return objects


def identity(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj["metadata"]
    return obj["kind"], meta.get("namespace", ""), meta["name"]


def differences(want: Any, live: Any, path: str = "") -> list[str]:
    """Where ``live`` differs from ``want``, field by field: every field ``want`` has must be in ``live`` with the
    same value (a list element by element, same length); fields only ``live`` has are the server's (defaults,
    status, metadata it sets)."""
    if isinstance(want, dict) and isinstance(live, dict):
        found = []
        for key, value in want.items():
            if key not in live:
                found.append(f"{path}.{key}: missing")
            else:
                found += differences(value, live[key], f"{path}.{key}")
        return found
    if isinstance(want, list) and isinstance(live, list) and len(want) == len(live):
        return [d for i, (w, v) in enumerate(zip(want, live, strict=True)) for d in differences(w, v, f"{path}[{i}]")]
    return [] if want == live else [f"{path}: want {want!r}, live {live!r}"]


@dataclass
class Stack:
    """The example's stack on this module's API server."""

    server: ApiServer
    controllers: StandInControllers
    project: Path
    home: Path
    baseline: set[tuple[str, str, str]]

    def pulumi(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`pulumi ARGS`, the wirespeed provider run by this test's Python (the virtualenv that has the library)."""
        return pulumi_cli.run(
            list(args), self.project, self.home, extra_env={"WIRESPEED_PROVIDER_PYTHON": sys.executable}
        )

    def ok(self, *args: str) -> str:
        done = self.pulumi(*args)
        assert done.returncode == 0, f"pulumi {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        assert self.controllers.errors == [], self.controllers.errors
        return done.stdout

    def set_profiles(self, profiles: list[Any]) -> None:
        """The profiles in the stack's config file, as a team edits Pulumi.<stack>.yaml (a list mixing names and
        documents, which `pulumi config set` cannot write in one go)."""
        path = self.project / f"Pulumi.{STACK}.yaml"
        settings = yaml.safe_load(path.read_text()) or {}
        settings.setdefault("config", {})[f"{PROJECT}:profiles"] = profiles
        path.write_text(yaml.safe_dump(settings, sort_keys=False))

    def get(self, obj: dict[str, Any]) -> dict[str, Any]:
        kind, namespace, name = identity(obj)
        where = ["-n", namespace] if namespace else []
        live: dict[str, Any] = json.loads(
            self.server.kubectl("get", kind.lower(), name, *where, "-o", "json", "--show-managed-fields").stdout
        )
        return live


def listing(server: ApiServer) -> set[tuple[str, str, str]]:
    """Every object the API server lists, of every resource that can be listed (one `kubectl get` of them all), but
    Events (the API server writes its own) and Leases (renewed by the API server itself)."""
    kinds = server.kubectl("api-resources", "--verbs=list", "-o", "name").stdout.split()
    kinds = [k for k in kinds if not k.startswith(("events", "leases"))]
    items = json.loads(server.kubectl("get", ",".join(kinds), "-A", "-o", "json").stdout)["items"]
    return {identity(item) for item in items}


def project_copy(folder: Path) -> Path:
    """The example copied out, its two plugin paths made absolute, as its README tells a team that copies it."""
    shutil.copytree(EXAMPLE, folder)
    program = yaml.safe_load((folder / "Pulumi.yaml").read_text())
    for plugin in program["plugins"]["providers"]:
        plugin["path"] = str((EXAMPLE / plugin["path"]).resolve())
    assert sorted(p["path"] for p in program["plugins"]["providers"]) == [
        str(pulumi_cli.BIN),
        str(PLUGIN_DIR),
    ]
    (folder / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))
    return folder


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    require(pulumi_cli.missing())
    tmp = tmp_path_factory.mktemp("yaml-node-tuning")
    try:
        with running(tmp / "apiserver") as server, stand_in_controllers(server) as controllers:
            made = Stack(server, controllers, project_copy(tmp / "project"), tmp / "home", listing(server))
            made.ok("stack", "init", STACK)
            made.ok("config", "set", "kubeconfig", str(server.admin_kubeconfig))
            made.ok("config", "set", "namespace", NAMESPACE)
            made.set_profiles(PROFILES)
            out = made.ok("up", "--yes", "--skip-preview")
            assert "Warning" not in out, out  # the program as the YAML host reads it, every field known
            yield made
    except PrerequisiteMissingError as exc:
        require(str(exc))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return render(PROFILES, tmp_path_factory.mktemp("render"))


def test_the_renderer_and_the_python_api_make_the_same_objects(rendered):
    """What the test compares the cluster with: the CLI's objects are the Python component's (one source)."""
    profiles = [builtin_profile("throughput"), load_profile(json.dumps(EDGE))]
    assert rendered == node_tuning_objects(profiles, NodeTuningOptions(namespace=NAMESPACE))


def test_up_creates_exactly_the_objects_the_renderer_prints(stack, rendered):
    created = listing(stack.server) - stack.baseline
    assert created == {identity(obj) for obj in rendered}
    for obj in rendered:
        live = stack.get(obj)
        assert differences(obj, live) == [], identity(obj)
        extra = set(live["metadata"]) - set(obj["metadata"]) - {"annotations"}
        assert extra <= SERVER_SET_METADATA, (identity(obj), extra)
        annotations = set(live["metadata"].get("annotations", {})) - set(obj["metadata"].get("annotations", {}))
        assert annotations <= SERVER_SET_ANNOTATIONS, (identity(obj), annotations)
        appliers = {m["manager"] for m in live["metadata"]["managedFields"] if m["operation"] == "Apply"}
        assert len(appliers) == 1, (identity(obj), appliers)  # the kubernetes provider's server-side apply alone


def test_the_stack_holds_the_component_and_one_child_per_object(stack, rendered):
    exported = json.loads(stack.ok("stack", "export"))["deployment"]["resources"]
    assert [r["urn"] for r in exported if r["type"] == "wirespeed:index:NodeTuning"] == [COMPONENT_URN]
    children = [r for r in exported if r.get("parent") == COMPONENT_URN]
    assert sorted(r["outputs"]["kind"] for r in children) == sorted(o["kind"] for o in rendered)
    # Every child through the program's provider (the kubeconfig from config), none through a default one.
    cluster = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:providers:kubernetes::cluster"
    assert {r["provider"].rsplit("::", 1)[0] for r in children} == {cluster}
    daemon_sets = [o["metadata"]["name"] for o in rendered if o["kind"] == "DaemonSet"]
    outputs = json.loads(stack.ok("stack", "output", "--json"))
    assert outputs == {"namespace": NAMESPACE, "daemonSetNames": daemon_sets}


def test_a_preview_then_a_second_up_change_nothing(stack, rendered):
    before = {identity(o): stack.get(o)["metadata"]["resourceVersion"] for o in rendered}
    stack.ok("preview", "--expect-no-changes")
    out = stack.ok("up", "--yes", "--expect-no-changes")
    assert "unchanged" in out, out
    assert {identity(o): stack.get(o)["metadata"]["resourceVersion"] for o in rendered} == before


def _drift(stack: Stack, obj: dict[str, Any], patch: dict[str, Any]) -> str:
    """Change ``obj`` behind Pulumi's back (a merge patch, as `kubectl edit` writes it), run the drift check and
    return what it printed; then put the live object back as it was, and the check passes again."""
    kind, namespace, object_name = identity(obj)
    before = stack.get(obj)
    collection = {"ConfigMap": "/api/v1", "DaemonSet": "/apis/apps/v1"}[kind]
    path = f"{collection}/namespaces/{namespace}/{kind.lower()}s/{object_name}"
    status, answer = stack.server.request("PATCH", path, patch, content_type="application/merge-patch+json")
    assert status == 200, answer
    done = stack.pulumi("preview", "--refresh", "--expect-no-changes")
    restore = {"data": before["data"]} if kind == "ConfigMap" else {"spec": before["spec"]}
    status, answer = stack.server.request("PATCH", path, restore, content_type="application/merge-patch+json")
    assert status == 200, answer
    assert differences(obj, stack.get(obj)) == []
    stack.ok("preview", "--refresh", "--expect-no-changes")
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


def test_a_changed_profile_config_map_fails_the_drift_check_naming_it(stack, rendered):
    """The refreshed ConfigMap differs from the program's: the preview plans to replace it (the provider replaces a
    ConfigMap whose data changed) and `--expect-no-changes` fails the run."""
    config_map = next(o for o in rendered if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("edge"))
    key = next(iter(config_map["data"]))
    out = _drift(stack, config_map, {"data": {key: "{}"}})
    assert out.startswith(f"exit {UNEXPECTED_CHANGES}\n"), out
    assert re.search(r"\+-\s+.*kubernetes:core/v1:ConfigMap\s+tuning-config-map-edge\s+replace", out), out


def test_a_changed_daemon_set_image_fails_the_drift_check_naming_it(stack, rendered):
    """An image set by another field manager (`kubectl set image`, `kubectl edit`, here a plain PATCH) is a
    server-side apply conflict for the provider: the preview errors on that DaemonSet, naming the field and the
    manager that took it, rather than planning an update (the provider forces only its own old client-side
    managers' fields: pkg/await/await.go, patchForce). Either way the drift check fails, on this resource."""
    daemon_set = next(o for o in rendered if o["kind"] == "DaemonSet" and o["metadata"]["name"].endswith("edge"))
    container = daemon_set["spec"]["template"]["spec"]["containers"][0]
    patch = {"spec": {"template": {"spec": {"containers": [{**container, "image": "registry.example/other:1"}]}}}}
    out = _drift(stack, daemon_set, patch)
    assert out.startswith("exit 1\n"), out
    assert "kubernetes:apps/v1:DaemonSet (tuning-daemon-set-edge):" in out, out
    assert "Server-Side Apply field conflict detected" in out, out
    assert '.spec.template.spec.containers[name="agent"].image' in out, out


def test_a_changed_profile_in_config_rolls_its_daemon_set_in_place(stack, rendered, tmp_path):
    """As the Python API does (components/wirespeed/kubernetes/node_tuning.py): the DaemonSet is updated, not
    replaced, with the new profile's checksum on its pod template (which rolls the pods); the other profile's
    DaemonSet is not touched."""
    changed = render(["throughput", EDGE_CHANGED], tmp_path)
    edge = next(o for o in rendered if o["kind"] == "DaemonSet" and o["metadata"]["name"].endswith("edge"))
    other = next(o for o in rendered if o["kind"] == "DaemonSet" and o is not edge)
    before, untouched = stack.get(edge), stack.get(other)
    stack.set_profiles(["throughput", EDGE_CHANGED])
    steps = {step["urn"].rsplit("::", 1)[1]: step["op"] for step in json.loads(stack.ok("preview", "--json"))["steps"]}
    assert steps["tuning-daemon-set-edge"] == "update", steps
    assert {name: op for name, op in steps.items() if "throughput" in name and op != "same"} == {}, steps
    stack.ok("up", "--yes", "--skip-preview")
    after = stack.get(edge)
    assert after["metadata"]["uid"] == before["metadata"]["uid"]  # updated in place
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1
    checksum = after["spec"]["template"]["metadata"]["annotations"][CHECKSUM_ANNOTATION]
    assert checksum == profile_checksum(load_profile(json.dumps(EDGE_CHANGED)))
    assert checksum != before["spec"]["template"]["metadata"]["annotations"][CHECKSUM_ANNOTATION]
    for obj in changed:
        assert differences(obj, stack.get(obj)) == [], identity(obj)
    assert stack.get(other)["metadata"]["resourceVersion"] == untouched["metadata"]["resourceVersion"]
    stack.ok("preview", "--refresh", "--expect-no-changes")


# The confinement tests, against the admission policy, RBAC and ServiceAccount this stack created: their `cluster`
# fixture is this module's (below), the rest is theirs. They run after the updates: their Nodes match the
# DaemonSets' selectors, and StandInControllers reports a DaemonSet as on no node (its docstring).
@pytest.fixture(scope="module")
def cluster(stack: Stack) -> confinement.Cluster:
    return confinement.nodes_and_agent_pods(stack.server)


confined = confinement.confined
test_the_token_names_the_pods_node_and_the_install_ships_the_policy = (
    confinement.test_the_token_names_the_pods_node_and_the_install_ships_the_policy
)
test_the_agent_writes_its_annotation_and_conditions_on_its_own_node = (
    confinement.test_the_agent_writes_its_annotation_and_conditions_on_its_own_node
)
test_everything_else_is_refused_with_the_policys_reason = (
    confinement.test_everything_else_is_refused_with_the_policys_reason
)
test_the_agent_on_the_other_node_reports_there_and_only_there = (
    confinement.test_the_agent_on_the_other_node_reports_there_and_only_there
)


def test_destroy_leaves_nothing_behind(stack):
    # What the confinement tests made (Nodes, Pods bound to them, the namespace's default ServiceAccount) is theirs
    # to remove; Pods on a node need --force with no kubelet to confirm.
    stack.server.kubectl("delete", "pods", "--all", "-n", NAMESPACE, "--force", "--grace-period=0", check=False)
    stack.server.kubectl("delete", "serviceaccount", "default", "-n", NAMESPACE, check=False)
    stack.server.kubectl("delete", "nodes", confinement.OWN, confinement.OTHER, check=False)
    stack.ok("destroy", "--yes", "--skip-preview")
    assert listing(stack.server) == stack.baseline
    exported = json.loads(stack.ok("stack", "export"))["deployment"].get("resources") or []
    assert exported == []
