# terraform test under a mock kubernetes provider (no cluster): the resources get the renderer's objects, keyed as
# documented, and bad inputs stop at the variables. The objects themselves are compared with the renderer's by
# tests/terratest (node_tuning_test.go) and applied to a real kube-apiserver by
# tests/terraform/test_terraform_node_tuning_apiserver.py.

mock_provider "kubernetes" {}

run "defaults_install_one_daemon_set" {
  command = plan

  assert {
    condition     = kubernetes_manifest.namespace.manifest.metadata.name == "wirespeed-system"
    error_message = "the Namespace is not the first object"
  }

  assert {
    condition = keys(kubernetes_manifest.object) == sort([
      "ClusterRole/wirespeed-agent",
      "ClusterRoleBinding/wirespeed-agent",
      "ConfigMap/wirespeed-system/wirespeed-profile-throughput",
      "DaemonSet/wirespeed-system/wirespeed-agent-throughput",
      "Role/default/wirespeed-agent",
      "RoleBinding/default/wirespeed-agent",
      "ServiceAccount/wirespeed-system/wirespeed-agent",
    ])
    error_message = "unexpected objects: ${jsonencode(keys(kubernetes_manifest.object))}"
  }

  assert {
    condition = keys(kubernetes_manifest.admission_policy) == [
      "ValidatingAdmissionPolicy/wirespeed-agent-own-node",
      "ValidatingAdmissionPolicyBinding/wirespeed-agent-own-node",
    ]
    error_message = "unexpected admission policy objects: ${jsonencode(keys(kubernetes_manifest.admission_policy))}"
  }

  assert {
    condition     = output.profile_checksums.throughput == kubernetes_manifest.object["DaemonSet/wirespeed-system/wirespeed-agent-throughput"].manifest.spec.template.metadata.annotations["wirespeed.io/profile-sha256"]
    error_message = "the checksum output is not the DaemonSet's annotation"
  }
}

run "two_profiles_with_monitoring_in_own_namespace" {
  command = plan

  variables {
    profiles    = ["balanced", "throughput"]
    namespace   = "net-tuning"
    image       = "registry.example.com/wirespeed-agent:v9"
    pod_monitor = true
    alerts      = true
  }

  assert {
    condition     = length(kubernetes_manifest.object) == 11
    error_message = "want 11 objects besides the Namespace and the admission policy, got ${length(kubernetes_manifest.object)}"
  }

  assert {
    condition     = kubernetes_manifest.object["RoleBinding/default/wirespeed-agent"].manifest.subjects[0].namespace == "net-tuning"
    error_message = "the Events RoleBinding does not name the agent's ServiceAccount in its namespace"
  }

  assert {
    condition     = kubernetes_manifest.object["DaemonSet/net-tuning/wirespeed-agent-balanced"].manifest.spec.template.spec.containers[0].image == "registry.example.com/wirespeed-agent:v9"
    error_message = "the image input is not the container's image"
  }

  assert {
    condition     = output.daemon_sets == { balanced = "wirespeed-agent-balanced", throughput = "wirespeed-agent-throughput" }
    error_message = "daemon_sets: ${jsonencode(output.daemon_sets)}"
  }
}

run "older_cluster_without_admission_policy" {
  command = plan

  variables {
    admission_policy = false
  }

  assert {
    condition     = length(kubernetes_manifest.admission_policy) == 0
    error_message = "admission_policy = false still creates the policy: ${jsonencode(keys(kubernetes_manifest.admission_policy))}"
  }

  assert {
    condition     = length(kubernetes_manifest.object) == 7
    error_message = "want the RBAC, ConfigMap and DaemonSet without the policy, got ${jsonencode(keys(kubernetes_manifest.object))}"
  }
}

run "probe_port_declares_the_port_and_writes_the_section" {
  command = plan

  variables {
    profiles   = ["balanced", "throughput"]
    probe_port = 19809
  }

  assert {
    condition = alltrue([for name in ["balanced", "throughput"] : (
      kubernetes_manifest.object["DaemonSet/wirespeed-system/wirespeed-agent-${name}"].manifest.spec.template.spec.containers[0].ports[1] == { name = "probe", containerPort = 19809, hostPort = 19809, protocol = "TCP" } &&
      jsondecode(kubernetes_manifest.object["ConfigMap/wirespeed-system/wirespeed-profile-${name}"].manifest.data["profile.json"]).probe == { port = 19809, peers = 8, streams = 4 }
    )])
    error_message = "the probe port is not on every DaemonSet, or the probe section not in every profile"
  }
}

run "refuses_a_probe_on_the_metrics_port" {
  command = plan

  variables {
    probe_port = 9808
  }

  expect_failures = [var.probe_port]
}

run "refuses_an_unknown_profile" {
  command = plan

  variables {
    profiles = ["turbo"]
  }

  expect_failures = [var.profiles]
}

run "refuses_a_shared_namespace" {
  command = plan

  variables {
    namespace = "kube-system"
  }

  expect_failures = [var.namespace]
}

run "refuses_an_untagged_image" {
  command = plan

  variables {
    image = "ghcr.io/wirespeed-io/wirespeed-agent"
  }

  expect_failures = [var.image]
}

run "refuses_objects_json_not_rendered_by_wirespeed" {
  command = plan

  variables {
    objects_json = "[{\"kind\": \"ConfigMap\"}]"
  }

  expect_failures = [var.objects_json]
}
