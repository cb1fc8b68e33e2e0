"""`wirespeed render node-tuning` through the installed console script, against committed golden YAML.

The golden files are what a reviewer reads when a manifest changes. Regenerate them after an intended change:

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/manifests/test_render_node_tuning.py     (or: make regen)

and review the diff like any other code change.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from conftest import ROOT

GOLDEN = ROOT / "tests" / "golden" / "node-tuning"
CUSTOM_PROFILE = GOLDEN / "ingest-profile.json"
WIRESPEED = shutil.which("wirespeed", path=str(Path(sys.executable).parent)) or shutil.which("wirespeed")
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
K8S_SCHEMA_VERSION = "1.30.0"  # the oldest minor the manifests are validated against (see test_manifests.py)

CASES = {
    "default": [],
    "balanced": ["--profile", "balanced"],
    "two-profiles-pod-monitor": ["--profile", "throughput", "--profile", "balanced", "--pod-monitor"],
    "pod-monitor-alerts-namespace": ["--pod-monitor", "--alerts", "--namespace", "net-tuning"],
    "no-admission-policy": ["--no-admission-policy"],
    "custom-profile-image-namespace": [
        "--profile",
        str(CUSTOM_PROFILE.relative_to(ROOT)),
        "--image",
        "registry.example.com/platform/wirespeed-agent@sha256:" + "4" * 64,
        "--namespace",
        "net-tuning",
    ],
    # Nodes behind an AKS load balancer sized at 4,096 ports: the agent's SNATPortPressure watches them (issue 19).
    "outbound-load-balancer": [
        "--profile",
        "throughput",
        "--outbound",
        "azure-load-balancer",
        "--allocated-ports",
        "4096",
    ],
    # The continuous probe on its default port (issue 30): the probe section in the profile, the port on the pod.
    "probe-port": ["--profile", "throughput", "--probe-port", "9809"],
}


def render(*args: str) -> subprocess.CompletedProcess[str]:
    assert WIRESPEED, "the wirespeed console script is not installed (pip install -e .)"
    return subprocess.run(
        [WIRESPEED, "render", "node-tuning", *args], capture_output=True, text=True, timeout=60, check=False, cwd=ROOT
    )


@pytest.mark.parametrize("case", CASES)
def test_render_matches_the_golden_file(case):
    out = render(*CASES[case])
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    golden = GOLDEN / f"{case}.yaml"
    if UPDATE:
        golden.write_text(out.stdout)
    assert out.stdout == golden.read_text(), f"{golden.name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"


@pytest.mark.parametrize("case", CASES)
def test_golden_files_are_valid_kubernetes(case):
    for doc in yaml.safe_load_all((GOLDEN / f"{case}.yaml").read_text()):
        if doc["apiVersion"] != "monitoring.coreos.com/v1":
            kubernetes_validate.validate(doc, K8S_SCHEMA_VERSION, strict=True)


def test_every_golden_file_has_a_case():
    assert sorted(p.stem for p in GOLDEN.glob("*.yaml")) == sorted(CASES)


def test_output_starts_with_the_reason_for_each_privilege():
    head = render().stdout.split("---\n", 1)[0]
    from wirespeed import __version__

    assert head.startswith(f"# wirespeed {__version__}: the node tuning agent. Apply with `kubectl apply -f -`.\n")
    for reason in ("hostNetwork", "/proc/sys/net", "/sys read-only", "NET_ADMIN", "never privileged"):
        assert reason in head
    assert "ValidatingAdmissionPolicy (Kubernetes 1.30+)" in head
    assert "--no-admission-policy" in head


def test_without_the_admission_policy_the_header_says_what_is_lost():
    out = render("--no-admission-policy")
    head = out.stdout.split("---\n", 1)[0]
    assert "Rendered WITHOUT the admission policy\n# (--no-admission-policy): nothing stops the agent's" in head
    assert "any Node's labels, taints or status" in head
    kinds = [d["kind"] for d in yaml.safe_load_all(out.stdout)]
    assert "ValidatingAdmissionPolicy" not in kinds
    assert "ValidatingAdmissionPolicyBinding" not in kinds
    assert kinds.count("ClusterRole") == kinds.count("Role") == 1


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        pytest.param(
            ["--profile", "fastest"],
            "error: --profile[0]: 'fastest' is neither a built-in profile (balanced, throughput) nor a readable "
            "profile file (cannot be read: No such file or directory; give a readable profile JSON file)\n",
            id="unknown-profile",
        ),
        pytest.param(
            ["--profile", "throughput", "--profile", "throughput"],
            "error: --profile[1].name: 'throughput' is not allowed; allowed: each profile name at most once\n",
            id="duplicate-profile",
        ),
        pytest.param(
            ["--image", "ghcr.io/wirespeed-io/wirespeed-agent"],
            "error: --image: 'ghcr.io/wirespeed-io/wirespeed-agent' is not allowed; allowed: an image reference "
            "with a tag or digest, e.g. REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:HEX\n",
            id="untagged-image",
        ),
        pytest.param(
            ["--image", ""],
            "error: --image: '' is not allowed; allowed: an image reference with a tag or digest, "
            "e.g. REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:HEX\n",
            id="empty-image-is-not-the-default",
        ),
        pytest.param(
            ["--profile", "nope", "--image", "x:", "--namespace", "Net"],
            "error: --profile[0]: 'nope' is neither a built-in profile (balanced, throughput) nor a readable "
            "profile file (cannot be read: No such file or directory; give a readable profile JSON file)\n"
            "error: --image: 'x:' is not allowed; allowed: an image reference with a tag or digest, "
            "e.g. REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:HEX\n"
            "error: --namespace: 'Net' is not allowed; allowed: an RFC 1123 label: lowercase letters, digits and "
            "'-', 1-63 characters\n",
            id="every-problem-at-once",
        ),
        pytest.param(
            ["--outbound", "aws-nat-gateway", "--allocated-ports", "4096", "--pressure-percent", "0"],
            'error: --allocated-ports: 4096 is not allowed: only with kind "azure-load-balancer"\n'
            "error: --pressure-percent: 0 is not allowed: must be between 1 and 100\n"
            "error: --public-ips: required with --outbound aws-nat-gateway\n",
            id="outbound-every-problem",
        ),
        pytest.param(
            ["--public-ips", "2"], "error: --public-ips: only with --outbound\n", id="outbound-sizing-without-kind"
        ),
        pytest.param(
            ["--probe-port", "9808"],
            "error: --probe-port: 9808 is not allowed; allowed: a TCP port other than the metrics port 9808\n",
            id="probe-on-the-metrics-port",
        ),
        pytest.param(
            ["--probe-port", "65536"],
            "error: --probe-port: 65536 is not allowed; allowed: a TCP port, must be between 1 and 65,535\n",
            id="probe-port-out-of-range",
        ),
    ],
)
def test_bad_input_exits_2_naming_each_problem(args, stderr):
    out = render(*args)
    assert (out.returncode, out.stdout, out.stderr) == (2, "", listed(stderr))


def listed(problems: str) -> str:
    """The problems (written one `error: ` line each, for reading) as the CLI prints them: one `error:` heading,
    then an indented line per problem."""
    lines = [line.removeprefix("error: ") for line in problems.splitlines()]
    return f"error: node tuning not rendered: {len(lines)} problem(s):\n" + "".join(f"  {line}\n" for line in lines)


def test_invalid_profile_file_lists_every_problem(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "name": "Bad Name", "sysctls": {"net.core.netdev_max_backlog": 10}}')
    out = render("--profile", str(bad))
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == listed(
        f'error: --profile[0]: {bad}/name: "Bad Name" is not allowed: must match '
        "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$\n"
        f"error: --profile[0]: {bad}/sysctls/net.core.netdev_max_backlog: 10 is not allowed: must be between "
        "1,000 and 3,240,000\n"
    )


def test_rendered_yaml_applies_as_the_library_objects():
    from wirespeed.manifests import NodeTuningOptions, node_tuning_objects
    from wirespeed.profiles import builtin_profile

    docs = list(yaml.safe_load_all(render("--profile", "balanced", "--pod-monitor", "--alerts").stdout))
    profile = builtin_profile("balanced")
    assert docs == node_tuning_objects([profile], NodeTuningOptions(pod_monitor=True, alerts=True))
    assert docs[-1]["kind"] == "PrometheusRule"


@pytest.mark.parametrize("case", CASES)
def test_json_output_is_the_yaml_documents_as_one_array(case):
    """--output json (for Terraform's jsondecode(), modules/node-tuning's objects_json) carries the same objects."""
    out = render(*CASES[case], "--output", "json")
    assert (out.returncode, out.stderr) == (0, "")
    assert json.loads(out.stdout) == list(yaml.safe_load_all((GOLDEN / f"{case}.yaml").read_text()))


def test_outbound_keeps_a_profile_s_own_threshold_and_exclusions(tmp_path):
    """--outbound sets the sizing in every profile; the team's own pressure_percent and exclude_cidrs stay."""
    own = json.loads(CUSTOM_PROFILE.read_text())
    own["outbound"] = {"kind": "azure-load-balancer", "allocated_ports_per_node": 1024, "pressure_percent": 60,
                       "exclude_cidrs": ["100.64.0.0/10"]}  # fmt: skip
    path = tmp_path / "own.json"
    path.write_text(json.dumps(own))
    out = render("--profile", str(path), "--profile", "balanced", "--outbound", "aws-nat-gateway", "--public-ips", "3",
                 "--output", "json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    sections = {
        json.loads(o["data"]["profile.json"])["name"]: json.loads(o["data"]["profile.json"])["outbound"]
        for o in json.loads(out.stdout)
        if o["kind"] == "ConfigMap"
    }
    assert sections == {
        own["name"]: {"kind": "aws-nat-gateway", "public_ips": 3, "pressure_percent": 60,
                      "exclude_cidrs": ["100.64.0.0/10"], "hold_seconds": 240},
        "balanced": {"kind": "aws-nat-gateway", "public_ips": 3, "pressure_percent": 80, "exclude_cidrs": [],
                     "hold_seconds": 240},
    }  # fmt: skip


def test_probe_port_keeps_a_profile_s_own_peers_and_streams(tmp_path):
    """--probe-port sets the port of every profile's probe section; a profile's own peers and streams stay."""
    own = json.loads(CUSTOM_PROFILE.read_text()) | {"probe": {"peers": 3, "streams": 2}}
    path = tmp_path / "own.json"
    path.write_text(json.dumps(own))
    out = render("--profile", str(path), "--profile", "balanced", "--probe-port", "7000", "--output", "json")
    assert out.returncode == 0, out.stderr
    objects = json.loads(out.stdout)
    sections = {
        json.loads(o["data"]["profile.json"])["name"]: json.loads(o["data"]["profile.json"])["probe"]
        for o in objects
        if o["kind"] == "ConfigMap"
    }
    assert sections == {own["name"]: {"port": 7000, "peers": 3, "streams": 2},
                        "balanced": {"port": 7000, "peers": 8, "streams": 4}}  # fmt: skip
    ports = [o["spec"]["template"]["spec"]["containers"][0]["ports"][-1] for o in objects if o["kind"] == "DaemonSet"]
    assert ports == [{"name": "probe", "containerPort": 7000, "hostPort": 7000, "protocol": "TCP"}] * 2
