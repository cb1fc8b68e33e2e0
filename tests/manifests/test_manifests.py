"""The node-tuning manifests (``wirespeed.manifests``): schema-valid, least privilege, one DaemonSet per profile."""

from __future__ import annotations

import json
from typing import Any

import kubernetes_validate
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from wirespeed.manifests import (
    ADMISSION_POLICY_MIN_KUBERNETES,
    DEFAULT_IMAGE,
    NodeTuningError,
    NodeTuningOptions,
    agent_rbac_rules,
    check,
    events_namespace,
    monitoring,
    node_tuning_objects,
    profile_checksum,
    profile_json,
    to_yaml,
)
from wirespeed.problems import Problem
from wirespeed.profile import Profile, validate_profile
from wirespeed.profiles import builtin_profile

# The oldest Kubernetes minor the manifests support (the admission policy needs 1.30: ValidatingAdmissionPolicy
# v1 and the node-name claim in pod-bound tokens; ADMISSION_POLICY_MIN_KUBERNETES), and the newest schema
# kubernetes-validate 1.37.0 bundles. Validation is offline: the schemas ship inside the package.
K8S_SCHEMA_VERSIONS = ("1.30.0", "1.37.0")

NODESTATUS = ROOT / "agent" / "internal" / "nodestatus"
DATA = ROOT / "components" / "wirespeed" / "data"
# The agent's own files and the library's byte copies of them (`make regen`).
AGENT_COPIES = {"rbac.yaml": "agent-rbac.yaml", "own-node-policy.yaml": "agent-own-node-policy.yaml"}
AGENT_RBAC = NODESTATUS / "rbac.yaml"
AGENT_POLICY = NODESTATUS / "own-node-policy.yaml"

THROUGHPUT = builtin_profile("throughput")
BALANCED = builtin_profile("balanced")


def objects(*profiles: Profile, **options: Any) -> list[dict[str, Any]]:
    return node_tuning_objects(list(profiles) or [THROUGHPUT], NodeTuningOptions(**options))


def one(objs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] == kind]
    return found


def pod_spec(objs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = one(objs or objects(), "DaemonSet")["spec"]["template"]["spec"]
    return spec


def container(objs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    (agent,) = pod_spec(objs)["containers"]
    return dict(agent)


def renamed(profile: Profile, name: str, **sysctls: int) -> Profile:
    data = profile.to_json_dict() | {"name": name}
    data["sysctls"] = data["sysctls"] | {k.replace("_", ".", 2): v for k, v in sysctls.items()}
    return validate_profile(data)


# --- schema ----------------------------------------------------------------------------------------------------


def test_the_oldest_schema_is_the_admission_policys_minimum():
    assert K8S_SCHEMA_VERSIONS[0] == f"{ADMISSION_POLICY_MIN_KUBERNETES}.0"


@pytest.mark.parametrize("version", K8S_SCHEMA_VERSIONS)
def test_every_object_is_valid_against_the_kubernetes_schema(version):
    for obj in objects(THROUGHPUT, BALANCED, pod_monitor=True, namespace="tuning", image="r.example/a:1"):
        if obj["apiVersion"] == "monitoring.coreos.com/v1":
            continue  # a CRD: not in the Kubernetes schema; its shape is asserted in test_pod_monitor_*
        # strict: unknown fields (a typo'd key the API server would silently drop) fail too.
        kubernetes_validate.validate(obj, version, strict=True)


def test_the_validator_rejects_a_misspelt_field():
    ds = one(objects(), "DaemonSet")
    ds["spec"]["template"]["spec"]["hostNetwrok"] = True
    with pytest.raises(kubernetes_validate.ValidationError, match="'hostNetwrok' was unexpected"):
        kubernetes_validate.validate(ds, K8S_SCHEMA_VERSIONS[0], strict=True)


def test_objects_come_in_apply_order():
    kinds = [o["kind"] for o in objects(THROUGHPUT, BALANCED, pod_monitor=True, alerts=True)]
    assert kinds == [
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ConfigMap",
        "ConfigMap",
        "DaemonSet",
        "DaemonSet",
        "PodMonitor",
        "PrometheusRule",
    ]


# --- privileges: each property on its own, so a failure names the one that regressed ------------------------------


def test_namespace_is_pod_security_privileged_and_nothing_else_is_changed():
    labels = one(objects(namespace="net-tuning"), "Namespace")["metadata"]["labels"]
    assert one(objects(namespace="net-tuning"), "Namespace")["metadata"]["name"] == "net-tuning"
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"
    assert labels["pod-security.kubernetes.io/warn"] == "privileged"
    assert labels["pod-security.kubernetes.io/audit"] == "privileged"


def test_container_is_never_privileged():
    assert container()["securityContext"]["privileged"] is False
    assert container()["securityContext"]["allowPrivilegeEscalation"] is False


def test_capabilities_drop_all_and_add_only_net_admin():
    assert container()["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["NET_ADMIN"]}


def test_runs_as_root_with_a_read_only_root_filesystem():
    sc = container()["securityContext"]
    assert (sc["runAsUser"], sc["runAsGroup"], sc["runAsNonRoot"]) == (0, 0, False)
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}


def test_host_paths_are_only_proc_sys_net_writable_and_sys_read_only():
    volumes = {v["name"]: v for v in pod_spec()["volumes"]}
    host_paths = {name: v["hostPath"]["path"] for name, v in volumes.items() if "hostPath" in v}
    assert host_paths == {"host-proc-sys-net": "/proc/sys/net", "host-sys": "/sys"}
    mounts = {m["name"]: m for m in container()["volumeMounts"]}
    assert mounts["host-sys"]["readOnly"] is True
    assert "readOnly" not in mounts["host-proc-sys-net"]  # the agent writes sysctls there
    assert mounts["profile"]["readOnly"] is True


def test_proc_sys_net_is_mounted_where_the_agents_proc_sys_root_points():
    args = dict(a.removeprefix("--").split("=", 1) for a in container()["args"])
    mounts = {m["name"]: m["mountPath"] for m in container()["volumeMounts"]}
    # The agent writes net.core.x to <--proc-sys-root>/net/core/x (agent/internal/sysctl.Path).
    assert mounts["host-proc-sys-net"] == args["proc-sys-root"] + "/net"
    assert mounts["host-sys"] == args["sys-root"]
    assert args["profile"] == mounts["profile"] + "/profile.json"


def test_host_network_and_node_critical_priority():
    spec = pod_spec()
    assert spec["hostNetwork"] is True
    assert spec["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert spec["priorityClassName"] == "system-node-critical"
    assert "hostPID" not in spec
    assert "hostIPC" not in spec


def test_tolerates_every_taint():
    assert pod_spec()["tolerations"] == [{"operator": "Exists"}]


def test_node_name_comes_from_the_downward_api_and_go_collects_before_the_memory_limit():
    assert container()["env"] == [
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "GOMEMLIMIT", "value": "48MiB"},
    ]
    # The soft limit sits below the pod's limit by at least the binary's file pages (bench/agent/RESULTS.md).
    assert container()["resources"]["limits"]["memory"] == "64Mi"


def test_probes_hit_healthz_and_readyz_on_the_metrics_port():
    agent = container()
    assert agent["ports"] == [{"name": "metrics", "containerPort": 9808, "protocol": "TCP"}]
    assert "--listen=:9808" in agent["args"]
    assert agent["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert agent["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}


def with_probe(profile: Profile, name: str, **probe: int) -> Profile:
    return validate_profile(profile.to_json_dict() | {"name": name, "probe": probe})


def test_a_profile_with_a_probe_section_declares_the_probe_host_port():
    """The probe serves on the host (hostNetwork): the pod says which host port, so NetworkPolicy and security
    groups can be written for it; only the DaemonSet of the profile that runs the probe carries it."""
    probed, custom = with_probe(THROUGHPUT, "probed"), with_probe(BALANCED, "custom-port", port=19_809)
    objs = objects(probed, custom, THROUGHPUT)
    ports = {d["metadata"]["name"]: container([d])["ports"] for d in objs if d["kind"] == "DaemonSet"}
    metrics = {"name": "metrics", "containerPort": 9808, "protocol": "TCP"}
    assert ports == {
        "wirespeed-agent-probed": [
            metrics,
            {"name": "probe", "containerPort": 9809, "hostPort": 9809, "protocol": "TCP"},
        ],
        "wirespeed-agent-custom-port": [
            metrics,
            {"name": "probe", "containerPort": 19_809, "hostPort": 19_809, "protocol": "TCP"},
        ],
        "wirespeed-agent-throughput": [metrics],
    }
    for obj in objs:
        kubernetes_validate.validate(obj, K8S_SCHEMA_VERSIONS[0], strict=True)


def test_a_probe_on_the_metrics_port_is_refused():
    with pytest.raises(NodeTuningError) as caught:
        objects(THROUGHPUT, with_probe(BALANCED, "clash", port=9808))
    assert caught.value.problems == [
        Problem("profiles[1].probe.port", 9808, "a TCP port other than the metrics port 9808")
    ]
    _, problems = check([with_probe(BALANCED, "clash", port=9808)], NodeTuningOptions())
    assert [p.field for p in problems] == ["profiles[0].probe.port"]


def test_memory_request_and_limit_cover_the_measured_rss():
    # bench/agent/RESULTS.md: VmHWM up to 21,396 KiB. Request and limit must be above it.
    peak_mib = 21_396 / 1024
    resources = container()["resources"]
    assert int(resources["requests"]["memory"].removesuffix("Mi")) > peak_mib
    assert int(resources["limits"]["memory"].removesuffix("Mi")) >= 2 * peak_mib
    assert "cpu" not in resources["limits"]


def test_rolling_update_with_max_unavailable():
    strategy = one(objects(), "DaemonSet")["spec"]["updateStrategy"]
    assert strategy == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}}


def test_default_image_is_the_release_of_this_library():
    from wirespeed import __version__

    assert f"ghcr.io/wirespeed-io/wirespeed-agent:v{__version__}" == DEFAULT_IMAGE
    assert container()["image"] == DEFAULT_IMAGE
    assert (
        container(objects(image="r.example/agent@sha256:" + "a" * 64))["image"] == "r.example/agent@sha256:" + "a" * 64
    )


# --- RBAC and admission policy: one source, the agent's agent/internal/nodestatus ----------------------------------


@pytest.mark.parametrize(("agent_file", "packaged"), AGENT_COPIES.items())
def test_packaged_copies_are_byte_copies_of_the_agents(agent_file, packaged):
    # Regenerate with `make regen` after changing a file in agent/internal/nodestatus.
    assert (DATA / packaged).read_bytes() == (NODESTATUS / agent_file).read_bytes()


def agent_documents(path):
    return {doc["kind"]: doc for doc in yaml.safe_load_all(path.read_text())}


def test_cluster_role_and_events_role_are_the_agents_rbac_yaml():
    agent = agent_documents(AGENT_RBAC)
    objs = objects()
    for kind in ("ClusterRole", "Role"):
        assert one(objs, kind)["rules"] == agent[kind]["rules"]
        assert one(objs, kind)["metadata"]["name"] == agent[kind]["metadata"]["name"]
    assert agent_rbac_rules() == agent["ClusterRole"]["rules"]
    assert one(objs, "Role")["metadata"]["namespace"] == agent["Role"]["metadata"]["namespace"] == events_namespace()


def test_cluster_role_is_exactly_the_node_verbs_and_the_pod_watchs_reads():
    rules = {
        (tuple(r["apiGroups"]), tuple(r["resources"])): set(r["verbs"]) for r in one(objects(), "ClusterRole")["rules"]
    }
    # The SNAT attribution's reads (agent/internal/podowner): its own node's pods (field selector spec.nodeName;
    # RBAC cannot narrow a list to one node) and the ReplicaSet or Job a pod names, to reach its Deployment or CronJob.
    # Reads only: no write beyond the Node's report is granted. `list` on nodes: the continuous probe's choice of
    # peers (agent/README.md, "Continuous probe": GET /api/v1/nodes?resourceVersion=0, at most every 10m).
    assert rules == {
        (("",), ("nodes",)): {"get", "list", "patch"},
        (("",), ("nodes/status",)): {"patch"},
        (("",), ("pods",)): {"list", "watch"},
        (("apps",), ("replicasets",)): {"get"},
        (("batch",), ("jobs",)): {"get"},
    }


def test_events_are_granted_only_in_default_where_the_agent_writes_them():
    role = one(objects(namespace="net-tuning"), "Role")
    assert role["metadata"]["namespace"] == "default"  # agent/internal/nodestatus EventsNamespace
    assert role["rules"] == [{"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]}]


@pytest.mark.parametrize(
    ("binding_kind", "role_kind"), [("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")]
)
def test_bindings_grant_their_role_to_the_agents_service_account_in_its_namespace(binding_kind, role_kind):
    objs = objects(namespace="net-tuning")
    binding = one(objs, binding_kind)
    account = one(objs, "ServiceAccount")
    role = one(objs, role_kind)
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": role_kind,
        "name": role["metadata"]["name"],
    }
    assert binding["metadata"].get("namespace") == role["metadata"].get("namespace")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": "net-tuning"}
    ]
    assert pod_spec(objs)["serviceAccountName"] == account["metadata"]["name"]


def test_rbac_rules_are_copies_callers_cannot_corrupt():
    agent_rbac_rules()[0]["verbs"].append("delete")
    assert "delete" not in one(objects(), "ClusterRole")["rules"][0]["verbs"]
    one(objects(), "ValidatingAdmissionPolicy")["spec"]["validations"].clear()
    assert one(objects(), "ValidatingAdmissionPolicy")["spec"]["validations"]


def test_admission_policy_is_the_agents_own_node_policy_with_the_install_labels():
    agent = agent_documents(AGENT_POLICY)
    objs = objects(namespace="net-tuning")
    for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        rendered = one(objs, kind)
        assert rendered["spec"] == agent[kind]["spec"]
        assert rendered["apiVersion"] == "admissionregistration.k8s.io/v1"
        assert rendered["metadata"]["name"] == agent[kind]["metadata"]["name"]
        assert rendered["metadata"]["labels"] == one(objs, "ClusterRole")["metadata"]["labels"]
    assert one(objs, "ValidatingAdmissionPolicyBinding")["spec"] == {
        "policyName": one(objs, "ValidatingAdmissionPolicy")["metadata"]["name"],
        "validationActions": ["Deny"],
    }


def test_admission_policy_matches_the_service_account_the_install_creates():
    (condition,) = one(objects(), "ValidatingAdmissionPolicy")["spec"]["matchConditions"]
    account = one(objects(), "ServiceAccount")["metadata"]["name"]
    assert condition["expression"] == (
        'request.userInfo.username.startsWith("system:serviceaccount:") &&\n'
        f'request.userInfo.username.endsWith(":{account}")'
    )


def test_admission_policy_allows_what_drift_reads_from_the_agent():
    """The annotation and condition `wirespeed drift` reads are among what the policy lets the agent write."""
    from wirespeed.drift.judge import ANNOTATION_KEY, CONDITION_TYPE

    variables = {v["name"]: v["expression"] for v in one(objects(), "ValidatingAdmissionPolicy")["spec"]["variables"]}
    assert variables["annotation"] == f'"{ANNOTATION_KEY}"'
    assert f'"{CONDITION_TYPE}"' in variables["conditionTypes"]


@pytest.mark.parametrize("admission_policy", [True, False])
def test_admission_policy_option_adds_exactly_the_policy_and_its_binding(admission_policy):
    kinds = [o["kind"] for o in objects(THROUGHPUT, admission_policy=admission_policy)]
    policy_kinds = ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    assert [k for k in kinds if k in policy_kinds] == (policy_kinds if admission_policy else [])
    assert [k for k in kinds if k not in policy_kinds] == [
        o["kind"] for o in objects(THROUGHPUT, admission_policy=False)
    ]


# --- profiles ----------------------------------------------------------------------------------------------------


def test_config_map_holds_the_profile_json_the_agent_reads():
    cm = one(objects(), "ConfigMap")
    assert json.loads(cm["data"]["profile.json"]) == THROUGHPUT.to_json_dict()
    assert validate_profile(json.loads(cm["data"]["profile.json"])) == THROUGHPUT


def test_checksum_annotation_is_the_sha256_of_the_config_map_text():
    import hashlib

    objs = objects()
    text = one(objs, "ConfigMap")["data"]["profile.json"]
    annotations = one(objs, "DaemonSet")["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"wirespeed.io/profile-sha256": hashlib.sha256(text.encode()).hexdigest()}


def test_checksum_changes_when_the_profile_changes():
    changed = renamed(THROUGHPUT, "throughput", net_core_netdev_budget=600)
    assert changed != THROUGHPUT
    assert profile_checksum(changed) != profile_checksum(THROUGHPUT)
    before = one(objects(THROUGHPUT), "DaemonSet")["spec"]["template"]["metadata"]["annotations"]
    after = one(objects(changed), "DaemonSet")["spec"]["template"]["metadata"]["annotations"]
    assert before != after


def test_checksum_is_stable_for_the_same_profile():
    assert profile_checksum(THROUGHPUT) == profile_checksum(builtin_profile("throughput"))
    # The ConfigMap ships the committed profile without its "generated by" marker: the agent gets the profile only.
    committed = json.loads((ROOT / "components/wirespeed/data/profiles/throughput.json").read_text())
    assert committed.pop("$comment").startswith("Generated by `python -m wirespeed.profiles`")
    assert profile_json(THROUGHPUT) == json.dumps(committed, indent=2) + "\n"


def test_two_profiles_give_two_daemon_sets_with_distinct_selectors():
    objs = objects(THROUGHPUT, BALANCED)
    daemon_sets = [o for o in objs if o["kind"] == "DaemonSet"]
    assert [d["metadata"]["name"] for d in daemon_sets] == ["wirespeed-agent-throughput", "wirespeed-agent-balanced"]
    selectors = [d["spec"]["selector"]["matchLabels"] for d in daemon_sets]
    assert selectors == [
        {"app.kubernetes.io/name": "wirespeed-agent", "wirespeed.io/profile": "throughput"},
        {"app.kubernetes.io/name": "wirespeed-agent", "wirespeed.io/profile": "balanced"},
    ]
    for ds in daemon_sets:
        profile = ds["spec"]["selector"]["matchLabels"]["wirespeed.io/profile"]
        template = ds["spec"]["template"]
        # The selector must match the pod template's labels or the API server refuses the DaemonSet.
        assert ds["spec"]["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
        assert template["spec"]["nodeSelector"] == {"kubernetes.io/os": "linux", "wirespeed.io/profile": profile}
        (volume,) = [v for v in template["spec"]["volumes"] if "configMap" in v]
        assert volume["configMap"]["name"] == f"wirespeed-profile-{profile}"
    config_maps = [o["metadata"]["name"] for o in objs if o["kind"] == "ConfigMap"]
    assert config_maps == ["wirespeed-profile-throughput", "wirespeed-profile-balanced"]


profile_names = st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True)


@given(st.lists(profile_names, min_size=1, max_size=6, unique=True))
def test_any_set_of_profiles_gives_one_config_map_and_daemon_set_each(names):
    objs = node_tuning_objects([renamed(BALANCED, n) for n in names])
    ds_nodes = [
        o["spec"]["template"]["spec"]["nodeSelector"]["wirespeed.io/profile"] for o in objs if o["kind"] == "DaemonSet"
    ]
    assert ds_nodes == names
    assert len({(o["kind"], o["metadata"]["name"]) for o in objs}) == len(objs) == 8 + 2 * len(names)


def test_pod_monitor_scrapes_every_agent_pod():
    objs = objects(THROUGHPUT, BALANCED, pod_monitor=True, namespace="net-tuning")
    monitor = one(objs, "PodMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["namespace"] == "net-tuning"
    assert monitor["spec"]["selector"] == {"matchLabels": {"app.kubernetes.io/name": "wirespeed-agent"}}
    assert monitor["spec"]["podMetricsEndpoints"] == [
        {
            "port": "metrics",
            "path": "/metrics",
            "interval": "30s",
            "relabelings": [
                {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"},
                {
                    "sourceLabels": ["__meta_kubernetes_pod_label_wirespeed_io_profile"],
                    "targetLabel": "profile",
                    "action": "replace",
                },
            ],
        }
    ]
    for ds in (o for o in objs if o["kind"] == "DaemonSet"):
        assert ds["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] == "wirespeed-agent"
    assert "PodMonitor" not in [o["kind"] for o in objects()]


@pytest.mark.parametrize(
    ("options", "kinds"),
    [
        pytest.param({}, [], id="default-off"),
        pytest.param({"alerts": False}, [], id="off"),
        pytest.param({"alerts": True}, ["PrometheusRule"], id="on"),
        pytest.param({"alerts": True, "pod_monitor": True}, ["PodMonitor", "PrometheusRule"], id="on-with-pod-monitor"),
    ],
)
def test_alerts_option_adds_exactly_the_prometheus_rule(options, kinds):
    base = [o["kind"] for o in objects(THROUGHPUT)]
    assert [o["kind"] for o in objects(THROUGHPUT, **options)] == base + kinds


def test_prometheus_rule_is_the_monitoring_rule_set_in_the_agents_namespace_labelled_like_the_pod_monitor():
    objs = objects(THROUGHPUT, BALANCED, pod_monitor=True, alerts=True, namespace="net-tuning")
    rule = one(objs, "PrometheusRule")
    assert rule == monitoring.prometheus_rule("net-tuning")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["name"] == "wirespeed-agent"
    assert rule["metadata"]["namespace"] == "net-tuning"
    assert rule["metadata"]["labels"] == one(objs, "PodMonitor")["metadata"]["labels"]
    assert rule["spec"] == monitoring.rule_groups()


def test_every_namespaced_object_lands_in_the_chosen_namespace():
    objs = objects(THROUGHPUT, BALANCED, pod_monitor=True, alerts=True, namespace="net-tuning")
    cluster_scoped = {
        "Namespace",
        "ClusterRole",
        "ClusterRoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
    in_events_namespace = {"Role", "RoleBinding"}  # the Event verbs, where the agent writes Events
    namespaced = [o for o in objs if o["kind"] not in cluster_scoped | in_events_namespace]
    assert {o["metadata"].get("namespace") for o in namespaced} == {"net-tuning"}
    assert {o["metadata"]["namespace"] for o in objs if o["kind"] in in_events_namespace} == {"default"}
    assert all("namespace" not in o["metadata"] for o in objs if o["kind"] in cluster_scoped)


# --- bad input: every problem at once, each naming field, value and what is allowed -----------------------------


def test_node_tuning_objects_lists_every_problem():
    with pytest.raises(NodeTuningError) as raised:
        node_tuning_objects([THROUGHPUT, THROUGHPUT], NodeTuningOptions(image="agent", namespace="-bad"))
    assert str(raised.value) == (
        "invalid node tuning:\n"
        "  profiles[1].name: 'throughput' is not allowed; allowed: each profile name at most once\n"
        "  image: 'agent' is not allowed; allowed: an image reference with a tag or digest, "
        "e.g. REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:HEX\n"
        "  namespace: '-bad' is not allowed; allowed: an RFC 1123 label: lowercase letters, digits and '-', "
        "1-63 characters"
    )


def test_no_profile_is_a_problem():
    with pytest.raises(NodeTuningError) as raised:
        node_tuning_objects([])
    assert raised.value.problems == [Problem("profiles", [], "at least one profile (built-in: balanced, throughput)")]


def test_a_shared_namespace_is_refused_because_it_would_become_privileged():
    _, problems = check(["throughput"], NodeTuningOptions(namespace="kube-system"))
    assert [str(p) for p in problems] == [
        "namespace: 'kube-system' is not allowed; allowed: a namespace of the agent's own, not one shared with "
        "other workloads (default, kube-node-lease, kube-public, kube-system)"
    ]


def test_check_resolves_built_in_names_and_passes_profiles_through():
    custom = renamed(BALANCED, "ingest")
    profiles, problems = check(["throughput", custom], NodeTuningOptions())
    assert (profiles, problems) == ([THROUGHPUT, custom], [])


@pytest.mark.parametrize(
    ("image", "accepted"),
    [
        pytest.param("ghcr.io/wirespeed-io/wirespeed-agent:v0.1.0", True, id="registry-path-tag"),
        pytest.param("localhost:5000/agent:dev", True, id="registry-port"),
        pytest.param("agent:1", True, id="docker-hub-short-tag"),
        pytest.param("r.example/a/b/c@sha256:" + "0" * 64, True, id="digest"),
        pytest.param("r.example/agent:1.2@sha256:" + "f" * 64, True, id="tag-and-digest"),
        pytest.param("ghcr.io/wirespeed-io/wirespeed-agent", False, id="no-tag-means-latest"),
        pytest.param("localhost:5000/agent", False, id="port-is-not-a-tag"),
        pytest.param("Agent:1", False, id="uppercase-path"),
        pytest.param("r.example/agent:", False, id="empty-tag"),
        pytest.param("r.example/agent:-1", False, id="tag-starts-with-dash"),
        pytest.param("r.example/agent@sha256:xyz", False, id="bad-digest"),
        pytest.param("agent:1 ", False, id="trailing-space"),
        pytest.param("agent:1\n", False, id="trailing-newline"),
        pytest.param("agent:v\u00e9", False, id="non-ascii-tag"),
        pytest.param("", False, id="empty"),
    ],
)
def test_image_references(image, accepted):
    _, problems = check(["throughput"], NodeTuningOptions(image=image))
    assert (problems == []) is accepted, problems


@pytest.mark.parametrize(
    ("namespace", "accepted"),
    [
        pytest.param("wirespeed-system", True, id="default"),
        pytest.param("a", True, id="one-char"),
        pytest.param("a" * 63, True, id="63-chars"),
        pytest.param("a" * 64, False, id="64-chars"),
        pytest.param("Tuning", False, id="uppercase"),
        pytest.param("tuning-", False, id="trailing-dash"),
        pytest.param("net.tuning", False, id="dot"),
        pytest.param("net-tuning\n", False, id="trailing-newline"),
        pytest.param("default", False, id="default-is-shared"),
        pytest.param("kube-system", False, id="kube-system-is-shared"),
    ],
)
def test_namespace_names(namespace, accepted):
    _, problems = check(["throughput"], NodeTuningOptions(namespace=namespace))
    assert (problems == []) is accepted, problems


# --- YAML ---------------------------------------------------------------------------------------------------------


def test_yaml_round_trips_to_the_same_objects():
    objs = objects(THROUGHPUT, BALANCED, pod_monitor=True)
    assert list(yaml.safe_load_all(to_yaml(objs, "a header"))) == objs


def test_yaml_keeps_the_profile_json_readable_as_a_literal_block():
    text = to_yaml(objects())
    assert '  profile.json: |\n    {\n      "schema_version": 1,' in text


def test_yaml_header_lines_are_comments():
    assert to_yaml([{"kind": "X"}], "one\ntwo").startswith("# one\n# two\n---\nkind: X\n")


@pytest.mark.parametrize(
    ("version", "supported"),
    [("1.29", False), ("1.29.15", False), ("v1.29", False), ("1.30", True), ("1.30.0", True), ("1.37", True),
     ("2.0", True), ("latest", None), ("1", None), ("", None)],
)  # fmt: skip
def test_admission_policy_support_by_kubernetes_version(version, supported):
    from wirespeed.manifests.access import admission_policy_supported

    assert admission_policy_supported(version) is supported
