# Server-side apply of every object (kubernetes_manifest always applies server-side), from locals.tf: the Namespace
# and the admission policy first, then the rest keyed kind/name or kind/namespace/name.
resource "kubernetes_manifest" "namespace" {
  manifest = local.namespace_object

  field_manager {
    name = "wirespeed-terraform"
  }
}

# The ValidatingAdmissionPolicy confining the agent to its own Node, and its binding (none with
# admission_policy = false): in force before any DaemonSet starts an agent.
resource "kubernetes_manifest" "admission_policy" {
  for_each = local.policy_objects

  manifest = each.value

  field_manager {
    name = "wirespeed-terraform"
  }
}

resource "kubernetes_manifest" "object" {
  for_each = local.rest_objects

  manifest = each.value

  field_manager {
    name = "wirespeed-terraform"
  }

  depends_on = [kubernetes_manifest.namespace, kubernetes_manifest.admission_policy]
}
