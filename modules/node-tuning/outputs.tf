output "objects" {
  description = "Every object applied, in the renderer's order: what `wirespeed render node-tuning` prints for the same inputs."
  value       = local.objects
}

output "object_keys" {
  description = <<-EOT
    The objects as kind/name (cluster-scoped) or kind/namespace/name, in the same order: the keys of
    kubernetes_manifest.admission_policy (the ValidatingAdmissionPolicy and its binding) and
    kubernetes_manifest.object (the rest; the Namespace is kubernetes_manifest.namespace).
  EOT
  value       = local.object_keys
}

output "namespace" {
  description = "The agent's namespace."
  value       = local.objects[0].metadata.name
}

output "daemon_sets" {
  description = "DaemonSet name by profile name."
  value       = { for name, ds in local.daemon_sets : name => ds.metadata.name }
}

output "profile_checksums" {
  description = "sha256 of each profile's ConfigMap text by profile name: the DaemonSet pod template's wirespeed.io/profile-sha256 annotation (a change rolls the pods)."
  value       = { for name, ds in local.daemon_sets : name => ds.spec.template.metadata.annotations[local.wirespeed.checksum_annotation] }
}

output "node_label" {
  description = "The node label key each DaemonSet selects on (value: the profile name); set it on the node pools to tune."
  value       = local.wirespeed.profile_label
}
