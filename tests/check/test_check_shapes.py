"""`wirespeed check` on every input shape teams have, and what each report says it judged (issue 25, items 2 and 3).

Every case runs real files from public repositories (tests/fixtures/real/, each with its provenance sidecar:
repository, path, commit, license), or one named edit of one (a probe), through the real CLI: Terraform 0.12-1.0
plans (format 0.1 and 0.2), raw terraform.tfstate files, Pulumi exports of CLI 3.94-3.102 with Go's nil-slice
nulls, a `terraform plan -json` log stream, Karpenter's own example YAML, and plans of providers wirespeed does not
read (GKE, EC2 instances).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from clirun import invoke
from conftest import ROOT
from wirespeed.check import check_text, manifests
from wirespeed.check.readers import WHAT_TO_RUN, Document, UnreadableInputError
from wirespeed.rules import resolve_config
from wirespeed.rules.netdev_backlog_minimum import EC2_NODE_CLASS_TYPES
from wirespeed.values import plain

REAL = ROOT / "tests" / "fixtures" / "real"


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def real(name: str) -> Path:
    path = REAL / name
    assert path.is_file(), name
    assert (REAL / f"{name}.provenance.json").is_file(), f"{name} has no provenance sidecar"
    return path


def run(path: Path | str, *extra: str) -> tuple[int, dict[str, Any], str]:
    out = invoke("check", str(path), "--format", "json", *extra)
    if out.returncode == 2:
        assert out.stdout == ""
        assert out.stderr.count("\n") == 1, out.stderr
        return 2, {}, out.stderr
    return out.returncode, json.loads(out.stdout), out.stderr


def probe(tmp_path: Path, name: str, edit: Any, suffix: str = "") -> Path:
    """A real file with one named edit: ``edit`` takes and returns its text."""
    path = tmp_path / (suffix or name)
    path.write_text(edit(real(name).read_text()))
    return path


# --- Terraform 0.12-1.0 plans: format 0.1 and 0.2 are read, and the report names the Terraform version ---------

OLD_FORMATS = [
    ("tf-asg-launch-configuration.tf0.12.3.plan.json", "Terraform 0.12.3, JSON format 0.1"),
    ("tf-vpc-nat-gateways.tf0.12.8.plan.json", "Terraform 0.12.8, JSON format 0.1"),
    ("tf-eks-modules.tf0.13.4.plan.json", "Terraform 0.13.4, JSON format 0.1"),
    ("tf-gke-conftest.tf0.12.0-beta2.plan.json", "Terraform 0.12.0-beta2, JSON format 0.1"),
    ("tf-eks-node-group.tf0.14.6.plan.json", "Terraform 0.14.6, JSON format 0.1"),
    ("tf-asg-tags.tf1.0.7.plan.json", "Terraform 1.0.7, JSON format 0.2"),
    ("tf-gke-cluster-full.tf1.0.10.plan.json", "Terraform 1.0.10, JSON format 0.2"),
]


@pytest.mark.parametrize(("name", "producer"), OLD_FORMATS, ids=[n for n, _ in OLD_FORMATS])
def test_terraform_0_12_to_1_0_plans_are_read_and_the_report_names_the_version(name, producer):
    code, report, error = run(real(name))
    assert code in (0, 1), error  # read and judged (1: a finding, e.g. self-managed nodes without the agent)
    assert error == ""
    assert report["producer"] == producer
    assert report["input"] == "terraform show -json PLANFILE"
    table = invoke("check", str(real(name))).stdout
    assert f"(`{producer}`)" not in table
    assert f"({producer})" in table


def test_a_format_0_1_plan_is_judged_as_the_same_plan_in_format_1_2_is():
    """The real 0.14.6 EKS node group plan, renumbered to format 1.2 (its content is already 1.x's): one verdict."""
    name = "tf-eks-node-group.tf0.14.6.plan.json"
    text = real(name).read_text()
    renumbered = re.sub(r'"format_version":\s*"0.1"', '"format_version": "1.2"', text, count=1)
    assert renumbered != text
    old = check_text(text, name, resolve_config(None))
    new = check_text(renumbered, name, resolve_config(None))
    assert old.judged == new.judged == 1
    assert old.violations == new.violations


def test_a_format_no_terraform_wrote_is_refused_naming_those_it_did(tmp_path):
    path = probe(tmp_path, "tf-asg-tags.tf1.0.7.plan.json", lambda t: t.replace('"0.2"', '"2.0"', 1))
    code, _, error = run(path)
    assert code == 2
    assert 'format_version: "2.0" is not supported' in error
    assert '"0.1" Terraform 0.12 to 1.0.0; "0.2" Terraform 1.0.1 to 1.0.x; "1.x" Terraform 1.1 and later' in error


# --- raw terraform.tfstate: read as a state, never "0 resources" and exit 0 -----------------------------------------

RAW_STATES = [
    ("tfstate-v4-launch-template.tf1.0.0.tfstate", 1, 1, "Terraform 1.0.0, state version 4"),
    ("tfstate-v4-nat-gateway.tf0.14.2.tfstate", 1, 1, "Terraform 0.14.2, state version 4"),
    ("tfstate-v4-count-and-module.tf1.1.0.tfstate", 7, 0, "Terraform 1.1.0, state version 4"),
]


@pytest.mark.parametrize(("name", "resources", "judged", "producer"), RAW_STATES, ids=[r[0] for r in RAW_STATES])
def test_a_raw_tfstate_is_read_as_a_state(name, resources, judged, producer):
    code, report, error = run(real(name))
    assert code in (0, 1), error
    assert report["input"] == "terraform.tfstate"
    assert (report["resources"], report["judged"], report["producer"]) == (resources, judged, producer)
    assert report["nothing_judged"] is (judged == 0)


def _shown_state(raw: dict[str, Any]) -> dict[str, Any]:
    """What `terraform show -json` prints for a raw state (State Representation): each managed instance as a
    resource with its address and ``values`` (the instance's attributes), in its module's child_modules."""
    modules: dict[str, list[dict[str, Any]]] = {}
    for resource in raw["resources"]:
        if resource["mode"] != "managed":
            continue
        module = resource.get("module", "")
        for instance in resource["instances"]:
            key = instance.get("index_key")
            index = "" if key is None else f"[{json.dumps(key)}]"
            address = f"{module + '.' if module else ''}{resource['type']}.{resource['name']}{index}"
            modules.setdefault(module, []).append(
                {
                    "address": address,
                    "mode": "managed",
                    "type": resource["type"],
                    "name": resource["name"],
                    "values": instance["attributes"],
                }
            )
    root = {"resources": modules.pop("", [])}
    root["child_modules"] = [{"address": m, "resources": r} for m, r in modules.items()]
    return {"format_version": "1.0", "terraform_version": raw["terraform_version"], "values": {"root_module": root}}


@pytest.mark.parametrize("name", [r[0] for r in RAW_STATES])
def test_a_raw_tfstate_is_translated_exactly_as_terraform_show_json_of_it(name):
    raw_text = real(name).read_text()
    shown = json.dumps(_shown_state(json.loads(raw_text)))
    from_raw = [dataclasses.replace(r, props=plain(r.props), outputs=None) for r in Document(raw_text).resources()]
    from_shown = [dataclasses.replace(r, props=plain(r.props), outputs=None) for r in Document(shown).resources()]
    assert from_raw == from_shown
    assert from_raw, "the state has resources"
    assert check_text(raw_text, name, resolve_config(None)).violations == (
        check_text(shown, name, resolve_config(None)).violations
    )


def test_raw_state_addresses_carry_module_and_index_key_and_skip_data_and_deposed():
    raw = {
        "version": 4,
        "terraform_version": "1.5.7",
        "serial": 1,
        "lineage": "l",
        "resources": [
            {"mode": "data", "type": "aws_ami", "name": "al2023", "instances": [{"attributes": {"id": "ami-1"}}]},
            {
                "module": 'module.eks["blue"]',
                "mode": "managed",
                "type": "aws_launch_template",
                "name": "node",
                "provider": 'provider["registry.terraform.io/hashicorp/aws"].eu',
                "instances": [
                    {"index_key": 0, "attributes": {"name": "a"}},
                    {"index_key": 0, "deposed": "00000001", "attributes": {"name": "old"}},
                    {"index_key": "x", "attributes": {"name": "b"}},
                ],
            },
        ],
    }
    resources = list(Document(json.dumps(raw)).resources())
    assert [r.urn for r in resources] == [
        'module.eks["blue"].aws_launch_template.node[0]',
        'module.eks["blue"].aws_launch_template.node["x"]',
    ]


def test_terraform_0_11_state_is_refused_never_0_resources(tmp_path):
    path = probe(
        tmp_path,
        "tfstate-v4-nat-gateway.tf0.14.2.tfstate",
        lambda t: json.dumps(
            {**{k: v for k, v in json.loads(t).items() if k != "resources"}, "version": 3, "modules": []}
        ),
        "v3.tfstate",
    )
    code, _, error = run(path)
    assert code == 2
    assert "a terraform.tfstate of version 3" in error
    assert "terraform show -json" in error


# --- the nulls older Pulumi CLIs wrote ---------------------------------------------------------------------------

NULLS = [
    "pulumi-eks-extra-sg.cli3.102.stack.json",
    "pulumi-eks-nodegroup.cli3.102.stack.json",
    "pulumi-eks-managed-nodegroups.cli3.102.stack.json",
    "pulumi-eks-fargate.cli3.94.stack.json",
    "pulumi-preview-aws-ebs.preview.json",
]
_NULL_DEPENDENCY = re.compile(r'"propertyDependencies":\s*\{[^{}]*":\s*null')


@pytest.mark.parametrize("name", NULLS)
def test_go_nil_slices_in_real_exports_read_as_empty(name):
    text = real(name).read_text()
    assert _NULL_DEPENDENCY.search(text), "the real file holds a null dependency list"
    code, report, error = run(real(name))
    assert code in (0, 1), error
    assert report["resources"] > 0


def test_null_dependencies_link_nothing_and_judge_as_empty_lists_do():
    name = "pulumi-eks-managed-nodegroups.cli3.102.stack.json"
    text = real(name).read_text()
    emptied = _NULL_DEPENDENCY.sub(lambda m: m.group(0)[: -len("null")] + "[]", text)
    while _NULL_DEPENDENCY.search(emptied):
        emptied = _NULL_DEPENDENCY.sub(lambda m: m.group(0)[: -len("null")] + "[]", emptied)
    assert emptied != text
    nulls = check_text(text, name, resolve_config(None))
    empties = check_text(emptied, name, resolve_config(None))
    assert nulls.violations == empties.violations
    assert nulls.producer == "Pulumi CLI v3.102.0"


@pytest.mark.parametrize(
    "field", ["inputs", "outputs", "dependencies", "aliases", "propertyDependencies", "parent", "id"]
)
def test_every_go_nil_a_resource_may_hold_reads_as_absent(field):
    """A nil map or slice in ResourceV3 (sdk/go/common/apitype/core.go) marshals as null; the engine reads it empty."""
    state = {"urn": "urn:pulumi:s::p::t:m:R::r", "type": "t:m:R", "custom": True, "inputs": {"a": 1}, field: None}
    document = {"version": 3, "deployment": {"manifest": {"version": "v3.102.0"}, "resources": [state]}}
    (resource,) = Document(json.dumps(document)).resources()
    assert resource.urn == "urn:pulumi:s::p::t:m:R::r"


def test_null_resources_and_steps_are_empty_stacks():
    assert list(Document('{"version": 3, "deployment": {"resources": null}}').resources()) == []
    assert list(Document('{"steps": null}').resources()) == []


# --- what is not a plan is named, with what to run instead -------------------------------------------------------


def test_a_terraform_plan_json_stream_says_to_run_terraform_show_json():
    code, _, error = run(real("tf-plan-json-stream.tf1.3.7.jsonl"))
    assert code == 2
    assert "a `terraform plan -json` log stream" in error
    assert "`terraform show -json PLANFILE`" in error


def test_broken_json_is_diagnosed_before_the_format_version_it_holds(tmp_path):
    """The real 0.12.3 plan cut short, with a format_version no Terraform wrote: the syntax error is the problem."""
    name = "tf-asg-launch-configuration.tf0.12.3.plan.json"
    path = probe(tmp_path, name, lambda t: t.replace('"format_version":"0.1"', '"format_version":"9.9"', 1)[:-200])
    assert '"format_version":"9.9"' in path.read_text()
    code, _, error = run(path)
    assert code == 2
    assert ": not JSON: " in error, error
    assert "format_version" not in error


def test_setup_terraform_wrapper_output_is_named():
    code, _, error = run(real("tf-wrapper-prefixed.tf1.0.11.plan.json"))
    assert code == 2
    assert "hashicorp/setup-terraform's wrapper" in error
    assert "terraform_wrapper: false" in error


def test_a_utf16_plan_is_named_as_what_powershell_writes():
    code, _, error = run(real("tf-utf16.tf1.x.plan.json"))
    assert code == 2
    assert "is UTF-16" in error
    assert "Out-File -Encoding utf8" in error


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("", "the file is empty"),
        ("\n\n", "the file is empty"),
        ((ROOT / "Pulumi.yaml").read_text(), "YAML, but not Kubernetes objects"),
    ],
    ids=["empty", "blank", "pulumi-project-yaml"],
)
def test_empty_files_and_other_yaml_say_what_to_give(tmp_path, content, words):
    path = tmp_path / "input"
    path.write_text(content)
    code, _, error = run(path)
    assert code == 2
    assert words in error
    assert WHAT_TO_RUN in error


# --- Kubernetes YAML ---------------------------------------------------------------------------------------------

KARPENTER = sorted(p.name for p in REAL.glob("karpenter-*.yaml"))


@pytest.mark.parametrize("name", KARPENTER)
def test_karpenter_example_yaml_is_read_object_by_object(name):
    objects = [d for d in yaml.safe_load_all(real(name).read_text()) if d]
    code, report, error = run(real(name))
    assert code in (0, 1), error
    assert report["input"] == "Kubernetes YAML"
    assert report["resources"] == len(objects)
    assert report["judged"] == len(objects)  # NodePools and node classes: every one is of a type some rule reads


def _backlog(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in report["violations"] if v["rule"] == "netdev-backlog-minimum"]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("karpenter-aws-al2023-custom-userdata.yaml", "spec.userData does not set net.core.netdev_max_backlog"),
        ("karpenter-aws-al2-custom-userdata.yaml", "spec.userData does not set net.core.netdev_max_backlog"),
        ("karpenter-aws-br-custom-userdata.yaml", "spec.userData does not set net.core.netdev_max_backlog"),
        ("karpenter-aws-general-purpose.yaml", "spec.userData is unset, so its nodes keep the kernel default"),
    ],
)
def test_an_ec2_node_class_user_data_is_read_for_the_backlog(name, words):
    _, report, _ = run(real(name))
    (found,) = _backlog(report)
    assert found["type"] in EC2_NODE_CLASS_TYPES
    assert found["urn"].startswith("EC2NodeClass/")
    assert words in found["message"]
    # 25 Gb/s assumed: the stall holds 8,128 packets (sizing.queues.Need: the minimum is what must fit)
    assert "below the minimum 8,128" in found["message"]


@pytest.mark.parametrize("name", ["karpenter-aws-windows-2022.yaml"])
def test_a_windows_ec2_node_class_has_no_linux_backlog_to_judge(name):
    _, report, _ = run(real(name))
    assert _backlog(report) == []


@pytest.mark.parametrize(
    ("name", "edit"),
    [
        (
            "karpenter-aws-al2023-custom-userdata.yaml",
            lambda t: t.replace('echo "Hello, AL2023!"', "sysctl -w net.core.netdev_max_backlog=16384"),
        ),
        (
            "karpenter-aws-br-custom-userdata.yaml",
            lambda t: t + '    [settings.kernel.sysctl]\n    "net.core.netdev_max_backlog" = "16384"\n',
        ),
    ],
    ids=["al2023-shell-part", "bottlerocket-toml"],
)
def test_an_ec2_node_class_that_sets_the_backlog_passes(tmp_path, name, edit):
    path = probe(tmp_path, name, edit)
    assert "16384" in path.read_text()
    code, report, error = run(path)
    assert code in (0, 1), error
    assert _backlog(report) == []


def _ec2_node_class() -> dict[str, Any]:
    documents = yaml.safe_load_all(real("karpenter-aws-al2023-custom-userdata.yaml").read_text())
    return next(d for d in documents if d and d["kind"] == "EC2NodeClass")


def test_an_ec2_node_class_gets_one_verdict_from_yaml_kubernetes_manifest_and_pulumi(tmp_path):
    obj = _ec2_node_class()
    plan = {
        "format_version": "1.2",
        "terraform_version": "1.9.5",
        "resource_changes": [
            {
                "address": "kubernetes_manifest.al2023",
                "mode": "managed",
                "type": "kubernetes_manifest",
                "name": "al2023",
                "change": {"actions": ["create"], "after": {"manifest": obj}, "after_unknown": {}},
            }
        ],
    }
    urn = "urn:pulumi:dev::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::al2023"
    export = {
        "version": 3,
        "deployment": {
            "resources": [{"urn": urn, "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "inputs": obj}]
        },
    }
    messages = []
    for name, text in [
        ("yaml", real("karpenter-aws-al2023-custom-userdata.yaml").read_text()),
        ("plan", json.dumps(plan)),
        ("export", json.dumps(export)),
    ]:
        report = check_text(text, name, resolve_config(None))
        (found,) = [v for v in report.violations if v.rule_id == "netdev-backlog-minimum"]
        messages.append(found.message)
    assert messages[0] == messages[1] == messages[2]


def test_wirespeeds_own_tuning_objects_are_read_from_yaml_and_judged(tmp_path):
    rendered = invoke("render", "node-tuning")
    assert rendered.returncode == 0, rendered.stderr
    path = tmp_path / "tuning.yaml"
    path.write_text(rendered.stdout)
    code, report, error = run(path)
    assert (code, report["violations"]) == (0, []), error
    kinds = [d["kind"] for d in yaml.safe_load_all(rendered.stdout) if d]
    assert report["resources"] == len(kinds)
    assert report["judged"] == kinds.count("ConfigMap") + kinds.count("DaemonSet")
    # The same objects with the profile's backlog lowered: the ConfigMap read from YAML is judged.
    lowered = path.read_text().replace('"net.core.netdev_max_backlog": 32768', '"net.core.netdev_max_backlog": 1000')
    assert lowered != path.read_text()
    path.write_text(lowered)
    code, report, _ = run(path)
    assert code == 1
    assert [v["urn"] for v in _backlog(report)] == ["ConfigMap/wirespeed-system/wirespeed-profile-throughput"]


def test_kind_list_documents_and_repeated_objects_are_each_read():
    class NoAliases(yaml.SafeDumper):  # the same object twice, written out twice (wirespeed refuses aliases)
        def ignore_aliases(self, data: Any) -> bool:
            return True

    obj = _ec2_node_class()
    listed = {"apiVersion": "v1", "kind": "List", "items": [obj, obj]}
    text = yaml.dump(listed, Dumper=NoAliases) + "---\n" + yaml.dump(obj, Dumper=NoAliases)
    report = check_text(text, "list.yaml", resolve_config(None))
    assert report.resources == 3
    assert sorted(v.resource_urn for v in report.violations) == [
        "EC2NodeClass/al2023",
        "EC2NodeClass/al2023#2",
        "EC2NodeClass/al2023#3",
    ]


def test_yaml_is_bounded_in_size_documents_and_aliases(monkeypatch):
    with pytest.raises(UnreadableInputError, match="YAML larger than 8 MiB"):
        list(Document("a: b\n" + "#" * manifests.YAML_LIMIT).resources())
    monkeypatch.setattr(manifests, "MAX_DOCUMENTS", 3)
    with pytest.raises(UnreadableInputError, match="more than 3 YAML documents"):
        list(Document("apiVersion: v1\nkind: ConfigMap\n---\n" * 4).resources())
    # One bounded reader for all user YAML (wirespeed.yaml_input): aliases within its bounds read, a "billion
    # laughs" document is refused as it is composed.
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(7)
    )
    with pytest.raises(UnreadableInputError, match=r"line \d+: its aliases expand it past the 1,048,576 nodes"):
        list(Document(laughs).resources())


def test_yaml_numbers_are_floats_as_json_and_the_engine_give_them():
    (resource,) = Document("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {n: 5}\n").resources()
    assert resource.props["data"]["n"] == 5.0
    assert isinstance(resource.props["data"]["n"], float)


# --- say what was checked -----------------------------------------------------------------------------------------

NOTHING_JUDGED = [
    ("tf-no-resource-changes.tf1.x.plan.json", []),
    ("tf-gke-cluster-node-pool.tf0.14.2.plan.json", ["google_container_cluster", "google_container_node_pool"]),
    ("tf-gcp-compute.tf1.4.6.plan.json", ["google_compute_instance"]),
    ("tf-aws-instance.tf1.5.7.plan.json", ["aws_instance"]),
    ("tf-show-state-test-provider.tf0.14.0.json", ["test_instance"]),
    ("pulumi-preview-aws-ebs.preview.json", []),
]


@pytest.mark.parametrize(("name", "unread"), NOTHING_JUDGED, ids=[n for n, _ in NOTHING_JUDGED])
def test_an_input_nothing_was_judged_in_says_so_and_fails_when_that_is_required(tmp_path, name, unread):
    code, report, _ = run(real(name))
    assert (code, report["judged"], report["nothing_judged"], report["passed"]) == (0, 0, True, True)
    assert sorted(u["type"] for u in report["unread"]) == unread
    assert all(u["looks_like"] == "compute" for u in report["unread"])
    code, report, _ = run(real(name), "--require-judged")
    assert (code, report["passed"], report["require_judged"]) == (1, False, True)
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"check": {"requireJudged": True}}))
    code, _, _ = run(real(name), "--config", str(config))
    assert code == 1


def test_an_input_with_something_judged_passes_with_require_judged():
    code, report, _ = run(real("tfstate-v4-nat-gateway.tf0.14.2.tfstate"), "--require-judged")
    assert (code, report["judged"], report["nothing_judged"]) == (0, 1, False)


@pytest.mark.parametrize("fmt", ["table", "github", "sarif", "json"])
def test_every_format_states_what_was_read_judged_and_left_unread(fmt):
    path = real("tf-gke-cluster-node-pool.tf0.14.2.plan.json")
    out = invoke("check", str(path), "--format", fmt, "--require-judged")
    assert out.returncode == 1
    text = out.stdout
    assert ('"nothing_judged": true' if fmt == "json" else "nothing judged") in text
    assert "google_container_node_pool" in text
    assert "google_container_cluster" in text
    if fmt == "github":
        assert text.startswith("::error file=")
        assert "::notice " in text
    if fmt == "sarif":
        run_ = json.loads(text)["runs"][0]
        assert run_["properties"]["judged"] == 0
        assert run_["properties"]["nothingJudged"] is True
        (notification,) = run_["invocations"][0]["toolExecutionNotifications"]
        assert notification["level"] == "error"
        assert run_["invocations"][0]["exitCode"] == 1


def test_a_report_counts_resources_read_and_judged_and_lists_unread_compute():
    """The real 0.13.7 plan: an auto-scaling group (self-managed nodes, read) and a GCE instance (not read) beside
    the launch template a rule reads."""
    code, report, _ = run(real("tf-asg-launch-template.tf0.13.7.plan.json"))
    assert code == 0
    assert (report["resources"], report["judged"]) == (5, 2)
    assert {u["type"] for u in report["unread"]} == {"google_compute_instance"}
    summary = invoke("check", str(real("tf-asg-launch-template.tf0.13.7.plan.json"))).stdout
    read = "5 resources from `terraform show -json PLANFILE` (Terraform 0.13.7, JSON format 0.1), 2 of a type"
    assert read in summary
    assert "not read, though they look like compute or egress: " in summary


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"check": {"requireJudged": "yes"}}, 'check.requireJudged: "yes" is not allowed: must be true or false'),
        ({"check": {"require": True}}, "check.require: is not allowed: 'check' takes only requireJudged"),
        ({"check": True}, 'check: true is not allowed: an object such as {"requireJudged": true}'),
    ],
)
def test_a_bad_check_setting_is_refused_naming_it(tmp_path, config, problem):
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(config))
    out = invoke("check", str(real("tf-aws-instance.tf1.5.7.plan.json")), "--config", str(path))
    assert out.returncode == 2
    assert problem in out.stderr


def test_the_docs_table_names_every_type_the_rules_read_and_every_terraform_type_translated():
    """docs/policy-gates.md's `check` tables are written by hand: this keeps them in step with RULES and the
    translations."""
    from wirespeed.check.terraform import LINKS, TRANSLATIONS
    from wirespeed.rules import RULES

    page = (ROOT / "docs" / "policy-gates.md").read_text()
    section = page[page.index("**What `wirespeed check` reads**") :]
    section = section[: section.index("\n## ")] if "\n## " in section else section
    for tf_type in [*TRANSLATIONS, *LINKS, "kubernetes_manifest"]:
        assert f"`{tf_type}`" in section, tf_type
    for token in {t for rule in RULES for t in rule.types}:
        package, module, kind = token.split(":")
        if package == "kubernetes":
            group_version = module.removeprefix("core/")
            group, _, version = group_version.rpartition("/")
            named = f"`{group}/{version}`" if group else f"`{version}`"
            assert f"`{kind}`" in section, token
            assert named in section or f"`{group}/" in section, token
            assert version in section, token
        else:
            assert f"`{module}:{kind}`" in section or f"`{token}`" in section, token


def test_a_utf8_byte_order_mark_is_read_past_and_lines_still_point_at_the_resource():
    name = "pulumi-eks-managed-nodegroups.cli3.102.stack.json"
    text = real(name).read_text()
    plain_report = check_text(text, name, resolve_config(None))
    marked = check_text("\ufeff" + text, name, resolve_config(None))
    assert (marked.shape, marked.resources, marked.judged) == (plain_report.shape, 35, 5)
    assert marked.lines == plain_report.lines
    assert marked.lines, "the export has violations, each at a line"


def test_a_kubernetes_list_in_json_is_read_as_its_yaml_is():
    """`kubectl get ec2nodeclasses -o json` prints a List: JSON is YAML, and the same objects are judged."""
    obj = _ec2_node_class()
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [obj]})
    report = check_text(text, "classes.json", resolve_config(None))
    assert (report.shape.name, report.resources, report.judged) == ("Kubernetes YAML", 1, 1)
    assert [v.resource_urn for v in report.violations] == ["EC2NodeClass/al2023"]


@pytest.mark.parametrize(
    ("case", "operating_system"),
    [("throughput", "al2023"), ("throughput", "bottlerocket"), ("balanced", "al2023")],
)
def test_wirespeeds_own_ec2_node_class_passes_the_backlog_rule_it_is_now_held_to(case, operating_system):
    """What KarpenterNodePool writes (its user data sets the profile's backlog) passes the rule that now reads
    EC2NodeClass userData: the new reading does not fail wirespeed's own output."""
    from wirespeed.aws.karpenter import node_class, node_pool, plan_karpenter
    from wirespeed.manifests import to_yaml

    plan, problems = plan_karpenter(name="network", profile=case, operating_system=operating_system)
    assert problems == []
    text = to_yaml([node_class(plan, role="KarpenterNodeRole-prod", cluster_name="prod"), node_pool(plan)])
    report = check_text(text, "karpenter.yaml", resolve_config(None))
    assert report.judged == 2
    assert [v.message for v in report.violations if v.rule_id == "netdev-backlog-minimum"] == []
