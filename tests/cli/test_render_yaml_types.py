"""Every string wirespeed writes as YAML is a string to every YAML reader (issue 31, item 5).

A profile named ``1e3`` was rendered as the label ``wirespeed.io/profile: 1e3``: PyYAML (YAML 1.1) reads that as a
string, but kubectl reads manifests through sigs.k8s.io/yaml (go-yaml v2 and Go's number syntax), which reads the
number 1000, and the API server refused the label and the DaemonSet's nodeSelector. The readers here are the real
ones: PyYAML, and a Go program built from agent/ (agent/cmd/yamlreaders) that decodes as kubectl's resource builder
does and as go.yaml.in/yaml/v3 (YAML 1.2) does; and the real kubectl and kube-apiserver (tests/apiserver.py) for a
server-side apply. What each reader reads must equal what was rendered, type for type, not only the labels.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from clirun import WIRESPEED
from conftest import ROOT
from hostile import bounded
from wirespeed.manifests import NodeTuningOptions, node_tuning_objects, to_yaml
from wirespeed.names import PROFILE_LABEL
from wirespeed.profile import PROFILE_NAME_PATTERN, Profile
from wirespeed.profiles import builtin_profile

# Strings some YAML reader reads as another type when written plain (YAML 1.1 bool/int/float/null/timestamp/merge/
# value, YAML 1.2 core, go-yaml v2's strconv forms), and strings whose plain form is YAML syntax.
HOSTILE = [
    "1e3", "1E3", "1e-3", "1e+3", "1.5", "1.", ".5", "0x10", "0X10", "0o7", "0b101", "010", "0", "123", "1_000",
    "+1", "-1", "+.inf", ".inf", "-.inf", ".Inf", ".nan", ".NaN", "inf", "nan", "Infinity",
    "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "yes", "Yes", "YES", "no", "No", "on", "On", "ON",
    "off", "Off", "OFF", "y", "Y", "n", "N", "yEs",
    "2026-12-01", "2026-12-01T10:00:00Z", "2026-12-01 10:00:00", "12:30", "1:20:30", "190:20:30", "-12:30",
    "<<", "=", "", " ", "-", "--", "--1", "--.inf", "--x=1", "---", "...", "#", "# x", "@x", "`x", "%x", "!x",
    "!!str", "&x", "*x", "|", ">", "?",
    ":", "[1]", "{a: 1}", "a: b", "a #b", "'", '"', "x\ty", "é", "0e24cd94", "0e1234",
]  # fmt: skip
ALLOWED_NAME = re.compile(PROFILE_NAME_PATTERN)


def schema_names(count: int) -> list[str]:
    """Profile names the schema allows (PROFILE_NAME_PATTERN), reproducibly: every shape a YAML reader knows as a
    number, boolean or date that fits the pattern, then random names biased towards digits and the letters of
    number syntax (e, x, o, b) and YAML's words."""
    rng = random.Random(31)
    shapes = [
        lambda: f"{rng.randint(0, 999)}e{rng.randint(0, 99)}",
        lambda: f"{rng.randint(0, 99)}e-{rng.randint(0, 99)}",
        lambda: f"0x{rng.randint(0, 1 << 16):x}",
        lambda: f"0o{rng.randint(0, 1 << 12):o}",
        lambda: f"0b{rng.randint(0, 255):b}",
        lambda: f"0{rng.randint(0, 777)}",
        lambda: str(rng.randint(0, 10**12)),
        lambda: f"{rng.randint(1000, 2999)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}",
        lambda: rng.choice(["y", "n", "yes", "no", "on", "off", "true", "false", "null", "inf", "nan"]),
        lambda: "".join(rng.choice("0123456789exob-") for _ in range(rng.randint(1, 8))).strip("-") or "0",
        lambda: "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-") for _ in range(rng.randint(1, 12))),
    ]
    names = [s for s in HOSTILE if ALLOWED_NAME.match(s)]
    while len(names) < count:
        name = rng.choice(shapes)()
        if ALLOWED_NAME.match(name) and name not in names:
            names.append(name)
    return names


@pytest.fixture(scope="session")
def go_readers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    binary = tmp_path_factory.mktemp("yamlreaders") / "yamlreaders"
    subprocess.run(
        ["go", "build", "-trimpath", "-o", str(binary), "./cmd/yamlreaders"],
        cwd=ROOT / "agent",
        env=os.environ | {"CGO_ENABLED": "0"},
        check=True,
        timeout=600,
    )
    return binary


def read_everywhere(go_readers: Path, text: str) -> dict[str, list[Any]]:
    """The documents in ``text`` as PyYAML, kubectl's decoder and a YAML 1.2 reader read them."""
    out = subprocess.run([str(go_readers)], input=text, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    readers: dict[str, list[Any]] = json.loads(out.stdout)
    readers["pyyaml"] = [d for d in yaml.safe_load_all(text) if d is not None]
    return readers


def test_every_hostile_string_reads_back_as_itself_in_every_reader(go_readers):
    documents = [{"value": s, "list": [s], "key": {f"k-{i}": s}} for i, s in enumerate(HOSTILE)]
    keys = [{s: "value"} for s in HOSTILE]  # keys go through the same emitter
    text = to_yaml(documents + keys)
    for reader, read in read_everywhere(go_readers, text).items():
        assert read == documents + keys, reader


def test_profile_names_the_schema_allows_read_back_as_strings_in_every_reader(go_readers):
    """2,000 schema-valid names as label, selector and annotation values, through the manifests' own emitter."""
    names = schema_names(2_000)
    objects = [
        {
            "metadata": {"labels": {PROFILE_LABEL: name}, "annotations": {"a": name}},
            "spec": {"selector": {"matchLabels": {PROFILE_LABEL: name}}, "nodeSelector": {PROFILE_LABEL: name}},
        }
        for name in names
    ]
    for reader, read in read_everywhere(go_readers, to_yaml(objects)).items():
        wrong = [(name, got) for name, want, got in zip(names, objects, read, strict=True) if got != want]
        assert wrong == [], (reader, wrong[:5])


@given(st.text(max_size=12))
@bounded(300)
def test_any_string_reads_back_as_itself_in_pyyaml(value):
    assert yaml.safe_load(to_yaml([{"v": value}])) == {"v": value}


def _profile_file(directory: Path, name: str) -> Path:
    profile = builtin_profile("throughput").model_dump(mode="json", by_alias=True, exclude_none=True) | {"name": name}
    Profile.model_validate(profile)  # the schema allows the name
    path = directory / f"{name}.json"
    path.write_text(json.dumps(profile))
    return path


# The names of the issue that the schema allows, rendered together as one DaemonSet each.
RENDERED_NAMES = ["1e3", "1e-3", "0x10", "0o7", "0b101", "010", "123", "yes", "off", "on", "y", "n", "true", "null",
                  "2026-12-01", "inf", "nan"]  # fmt: skip


def test_rendered_node_tuning_reads_as_its_json_in_every_reader(go_readers, tmp_path):
    """`render node-tuning` as users run it: the YAML, read by each reader, is the same objects as `--output json`."""
    flags = [arg for name in RENDERED_NAMES for arg in ("--profile", str(_profile_file(tmp_path, name)))]
    rendered = {
        output: subprocess.run(
            [WIRESPEED, "render", "node-tuning", *flags, "--output", output],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout
        for output in ("yaml", "json")
    }  # fmt: skip
    objects = json.loads(rendered["json"])
    selected = {
        o["spec"]["template"]["spec"]["nodeSelector"][PROFILE_LABEL] for o in objects if o["kind"] == "DaemonSet"
    }
    assert selected == set(RENDERED_NAMES)
    for reader, read in read_everywhere(go_readers, rendered["yaml"]).items():
        assert read == objects, reader


@pytest.mark.parametrize("name", ["1e3", "0o7", "y", "2026-12-01"])
def test_a_profile_named_like_a_number_is_applied_by_kubectl_and_selects_its_label(apiserver, tmp_path, name):
    """The real kubectl (its own YAML reading) server-side applies the rendered objects; the API server keeps the
    label and the DaemonSet's nodeSelector as the string the profile is named."""
    namespace = f"ws-yaml-{re.sub('[^a-z0-9]', '', name)}"
    profile = _profile_file(tmp_path, name)
    objects = node_tuning_objects(
        [Profile.model_validate_json(profile.read_text())], NodeTuningOptions(namespace=namespace)
    )
    text = subprocess.run(
        [WIRESPEED, "render", "node-tuning", "--profile", str(profile), "--namespace", namespace],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    out = apiserver.apply(text)
    assert len(out.stdout.splitlines()) == len(objects), out.stderr
    live = json.loads(
        apiserver.kubectl("get", "daemonset", f"wirespeed-agent-{name}", "-n", namespace, "-o", "json").stdout
    )
    assert live["metadata"]["labels"][PROFILE_LABEL] == name
    assert live["spec"]["template"]["spec"]["nodeSelector"][PROFILE_LABEL] == name
    assert live["spec"]["selector"]["matchLabels"][PROFILE_LABEL] == name
    config = json.loads(
        apiserver.kubectl("get", "configmap", "-n", namespace, "-l", f"{PROFILE_LABEL}={name}", "-o", "json").stdout
    )
    assert [c["metadata"]["labels"][PROFILE_LABEL] for c in config["items"]] == [name]


def test_the_nodeadm_node_config_reads_as_written_in_every_reader(go_readers):
    """The AL2023 user data's NodeConfig goes through the same emitter: a cluster named 1e3 (EKS allows it) and a
    profile named 0o7 are strings to nodeadm's Go YAML reading too (it decodes NodeConfig as kubectl does)."""
    import email

    from wirespeed.userdata import ClusterDetails, node_config, render_al2023_user_data

    profile = builtin_profile("throughput").model_copy(update={"name": "0o7"})
    cluster = ClusterDetails("1e3", "https://1e3.gr7.eu-west-1.eks.amazonaws.com", "LS0tLS1CRUdJTg==", "10.100.0.0/16")
    message = email.message_from_string(render_al2023_user_data(profile, cluster))
    (part,) = [p for p in message.walk() if p.get_content_type() == "application/node.eks.aws"]
    for reader, read in read_everywhere(go_readers, part.get_payload()).items():
        assert read == [node_config(profile, cluster)], reader
