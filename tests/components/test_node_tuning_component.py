# ruff: noqa: F811  (the `engine` fixture is imported from tests/pulumi_engine.py and taken as a parameter)
"""``wirespeed.kubernetes.NodeTuning`` under Pulumi's own mocks (no cluster, no Pulumi CLI: the engine is mocked).

What is real: the pulumi and pulumi-kubernetes SDKs serialise every resource exactly as they would for
`pulumi up`; the mock monitor records what reaches the engine (type, name, parent, dependencies, inputs in
engine camelCase, registered outputs).
"""

from __future__ import annotations

import pulumi
import pytest

from pulumi_engine import Recorder, Registration, engine, resolve  # noqa: F401 (engine is a fixture)
from wirespeed.kubernetes import NodeTuning, NodeTuningArgs
from wirespeed.manifests import DEFAULT_IMAGE, NodeTuningOptions, monitoring, node_tuning_objects
from wirespeed.profile import Profile
from wirespeed.profiles import builtin_profile

COMPONENT = "wirespeed:index:NodeTuning"


def children(recorder: Recorder) -> list[Registration]:
    return [r for r in recorder.registered if r.type != COMPONENT]


def component(recorder: Recorder) -> Registration:
    (found,) = [r for r in recorder.registered if r.type == COMPONENT]
    return found


def test_default_args_register_every_object_under_pulumi_mocks(engine):
    tuning = NodeTuning("tuning")
    assert resolve(tuning.namespace) == "wirespeed-system"
    assert resolve(tuning.daemon_set_names) == ["wirespeed-agent-throughput"]

    assert component(engine).name == "tuning"
    # Registration order follows the SDK's async resolution: compare as a set.
    assert {(r.type, r.name) for r in children(engine)} == {
        ("kubernetes:core/v1:Namespace", "tuning-namespace"),
        ("kubernetes:core/v1:ServiceAccount", "tuning-service-account"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "tuning-cluster-role"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "tuning-cluster-role-binding"),
        ("kubernetes:rbac.authorization.k8s.io/v1:Role", "tuning-role"),
        ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "tuning-role-binding"),
        ("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy", "tuning-validating-admission-policy"),
        (
            "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
            "tuning-validating-admission-policy-binding",
        ),
        ("kubernetes:core/v1:ConfigMap", "tuning-config-map-throughput"),
        ("kubernetes:apps/v1:DaemonSet", "tuning-daemon-set-throughput"),
    }


@pytest.mark.parametrize(
    ("args", "profiles", "options"),
    [
        pytest.param(None, ["throughput"], NodeTuningOptions(), id="defaults"),
        pytest.param(
            NodeTuningArgs(
                profiles=["throughput", "balanced"],
                image="registry.example/agent:1.2.3",
                namespace="tuning",
                pod_monitor=True,
            ),
            ["throughput", "balanced"],
            NodeTuningOptions(image="registry.example/agent:1.2.3", namespace="tuning", pod_monitor=True),
            id="two-profiles-image-namespace-pod-monitor",
        ),
        pytest.param(
            NodeTuningArgs(namespace="tuning", alerts=True),
            ["throughput"],
            NodeTuningOptions(namespace="tuning", alerts=True),
            id="alerts",
        ),
        pytest.param(
            NodeTuningArgs(pod_monitor=True, alerts=True),
            ["throughput"],
            NodeTuningOptions(pod_monitor=True, alerts=True),
            id="pod-monitor-and-alerts",
        ),
        pytest.param(
            NodeTuningArgs(admission_policy=False),
            ["throughput"],
            NodeTuningOptions(admission_policy=False),
            id="older-cluster-without-admission-policy",
        ),
    ],
)
def test_registered_inputs_equal_the_rendered_objects_under_pulumi_mocks(engine, args, profiles, options):
    tuning = NodeTuning("nt", args)
    resolve(tuning.daemon_set_names)
    expected = node_tuning_objects([builtin_profile(p) for p in profiles], options)
    registered = {(r.inputs["kind"], r.inputs["metadata"]["name"]): r.inputs for r in children(engine)}
    assert registered == {(o["kind"], o["metadata"]["name"]): o for o in expected}
    assert len(children(engine)) == len(expected)


def test_pod_monitor_is_a_custom_resource_under_pulumi_mocks(engine):
    resolve(NodeTuning("nt", NodeTuningArgs(pod_monitor=True)).namespace)
    (monitor,) = [r for r in children(engine) if "PodMonitor" in r.type]
    assert (monitor.type, monitor.name) == ("kubernetes:monitoring.coreos.com/v1:PodMonitor", "nt-pod-monitor")


def test_prometheus_rule_is_a_custom_resource_after_the_namespace_under_pulumi_mocks(engine):
    resolve(NodeTuning("nt", NodeTuningArgs(namespace="net-tuning", alerts=True)).namespace)
    (rule,) = [r for r in children(engine) if "PrometheusRule" in r.type]
    assert (rule.type, rule.name) == ("kubernetes:monitoring.coreos.com/v1:PrometheusRule", "nt-prometheus-rule")
    assert rule.inputs == monitoring.prometheus_rule("net-tuning")
    assert rule.parent == component(engine).urn
    (namespace,) = [r for r in children(engine) if r.name == "nt-namespace"]
    assert rule.dependencies == [namespace.urn]


def test_no_prometheus_rule_unless_alerts_are_asked_for_under_pulumi_mocks(engine):
    resolve(NodeTuning("nt", NodeTuningArgs(pod_monitor=True)).namespace)
    assert [r.type for r in children(engine) if "PrometheusRule" in r.type] == []


def test_children_are_parented_to_the_component_under_pulumi_mocks(engine):
    args = NodeTuningArgs(profiles=["throughput", "balanced"], pod_monitor=True, alerts=True)
    resolve(NodeTuning("nt", args).namespace)
    urn = component(engine).urn
    assert urn == "urn:pulumi:test::wirespeed::pulumi:pulumi:Stack$wirespeed:index:NodeTuning::nt"
    assert {r.name: r.parent for r in children(engine)} == {r.name: urn for r in children(engine)}
    assert len(children(engine)) == 14


def test_children_wait_for_what_they_use_under_pulumi_mocks(engine):
    args = NodeTuningArgs(profiles=["throughput", "balanced"], pod_monitor=True, alerts=True)
    resolve(NodeTuning("nt", args).namespace)
    urns = {r.name: r.urn for r in children(engine)}
    depends = {r.name: sorted(d.rsplit("::", 1)[1] for d in r.dependencies) for r in children(engine)}
    assert set(urns) == set(depends)
    # The DaemonSets start no agent before its RBAC exists and the admission policy confines it.
    confined = [
        "nt-cluster-role-binding",
        "nt-role-binding",
        "nt-service-account",
        "nt-validating-admission-policy-binding",
    ]
    assert depends == {
        "nt-namespace": [],
        "nt-service-account": ["nt-namespace"],
        "nt-cluster-role": [],
        "nt-cluster-role-binding": ["nt-cluster-role", "nt-service-account"],
        "nt-role": [],
        "nt-role-binding": ["nt-role", "nt-service-account"],
        "nt-validating-admission-policy": [],
        "nt-validating-admission-policy-binding": ["nt-validating-admission-policy"],
        "nt-config-map-throughput": ["nt-namespace"],
        "nt-config-map-balanced": ["nt-namespace"],
        "nt-daemon-set-throughput": sorted([*confined, "nt-config-map-throughput"]),
        "nt-daemon-set-balanced": sorted([*confined, "nt-config-map-balanced"]),
        "nt-pod-monitor": ["nt-namespace"],
        "nt-prometheus-rule": ["nt-namespace"],
    }


def test_without_the_admission_policy_the_daemon_set_waits_only_for_rbac_under_pulumi_mocks(engine):
    resolve(NodeTuning("nt", NodeTuningArgs(admission_policy=False)).namespace)
    assert not [r for r in children(engine) if "admissionregistration" in r.type]
    (ds,) = [r for r in children(engine) if r.type == "kubernetes:apps/v1:DaemonSet"]
    assert sorted(d.rsplit("::", 1)[1] for d in ds.dependencies) == [
        "nt-cluster-role-binding",
        "nt-config-map-throughput",
        "nt-role-binding",
        "nt-service-account",
    ]


def test_every_output_is_registered_under_pulumi_mocks(engine):
    tuning = NodeTuning("nt", NodeTuningArgs(profiles=["balanced", "throughput"], namespace="net-tuning"))
    resolve(tuning.daemon_set_names)
    assert engine.outputs[component(engine).urn] == {
        "namespace": "net-tuning",
        "daemon_set_names": ["wirespeed-agent-balanced", "wirespeed-agent-throughput"],
    }


def test_profile_objects_and_default_image_under_pulumi_mocks(engine):
    custom = builtin_profile("balanced").model_copy(update={"name": "ingest"})
    assert isinstance(custom, Profile)
    resolve(NodeTuning("nt", NodeTuningArgs(profiles=[custom])).namespace)
    (ds,) = [r for r in children(engine) if r.type == "kubernetes:apps/v1:DaemonSet"]
    assert ds.name == "nt-daemon-set-ingest"
    assert ds.inputs["spec"]["template"]["spec"]["nodeSelector"]["wirespeed.io/profile"] == "ingest"
    assert ds.inputs["spec"]["template"]["spec"]["containers"][0]["image"] == DEFAULT_IMAGE


def test_invalid_args_raise_one_error_before_anything_registers_under_pulumi_mocks(engine):
    args = NodeTuningArgs(profiles=["throughput", "fastest", 42], image="Agent:latest!", namespace="Wirespeed_System")
    with pytest.raises(pulumi.InputPropertiesError) as raised:
        NodeTuning("nt", args)  # type: ignore[arg-type]
    assert engine.registered == []
    assert raised.value.errors == [
        {
            "property_path": "profiles[1]",
            "reason": "'fastest' is not allowed; allowed: a built-in profile name (balanced, throughput) or a Profile",
        },
        {
            "property_path": "profiles[2]",
            "reason": "42 is not allowed; allowed: a built-in profile name (balanced, throughput) or a Profile",
        },
        {
            "property_path": "image",
            "reason": "'Agent:latest!' is not allowed; allowed: an image reference with a tag or digest, "
            "e.g. REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:HEX",
        },
        {
            "property_path": "namespace",
            "reason": "'Wirespeed_System' is not allowed; allowed: an RFC 1123 label: lowercase letters, digits "
            "and '-', 1-63 characters",
        },
    ]
    assert str(raised.value).startswith("invalid NodeTuningArgs:\n  profiles[1]: 'fastest' is not allowed")


@pytest.mark.parametrize(
    ("args", "path", "reason"),
    [
        pytest.param(
            NodeTuningArgs(profiles=[]),
            "profiles",
            "[] is not allowed; allowed: at least one profile (built-in: balanced, throughput)",
            id="no-profile",
        ),
        pytest.param(
            NodeTuningArgs(profiles=["balanced", builtin_profile("balanced")]),
            "profiles[1].name",
            "'balanced' is not allowed; allowed: each profile name at most once",
            id="duplicate-profile-name",
        ),
        pytest.param(
            NodeTuningArgs(profiles="throughput"),
            "profiles",
            "'throughput' is not allowed; allowed: a list of profiles, e.g. ['throughput']",
            id="a-name-instead-of-a-list",
        ),
        pytest.param(
            NodeTuningArgs(namespace=42),
            "namespace",
            "42 is not allowed; allowed: an RFC 1123 label: lowercase letters, digits and '-', 1-63 characters",
            id="namespace-not-a-string",
        ),
        pytest.param(
            NodeTuningArgs(image="ghcr.io/wirespeed-io/wirespeed-agent"),
            "image",
            "'ghcr.io/wirespeed-io/wirespeed-agent' is not allowed; allowed: an image reference with a tag or digest, "
            "e.g. REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:HEX",
            id="untagged-image",
        ),
    ],
)
def test_each_invalid_arg_is_refused_under_pulumi_mocks(engine, args, path, reason):
    with pytest.raises(pulumi.InputPropertiesError) as raised:
        NodeTuning("nt", args)
    assert engine.registered == []
    assert raised.value.errors == [{"property_path": path, "reason": reason}]


@pytest.mark.parametrize("option", ["provider", "providers"])
def test_a_kubernetes_provider_given_to_the_component_reaches_every_child_under_pulumi_mocks(engine, option):
    import pulumi_kubernetes as k8s

    cluster = k8s.Provider("cluster", kubeconfig="{}")
    opts = pulumi.ResourceOptions(**{option: cluster if option == "provider" else [cluster]})
    resolve(NodeTuning("nt", NodeTuningArgs(pod_monitor=True), opts).namespace)
    provider_urn = next(r.urn for r in engine.registered if r.name == "cluster")
    # A provider reference is URN::ID.
    providers = {r.name: r.provider.rsplit("::", 1)[0] for r in children(engine) if r.name != "cluster"}
    assert providers == {r.name: provider_urn for r in children(engine) if r.name != "cluster"}
    assert len(providers) == 11
