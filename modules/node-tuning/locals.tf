# The objects `wirespeed render node-tuning` prints for these inputs, in its order (Namespace, ServiceAccount, RBAC,
# admission policy, ConfigMaps, DaemonSets, PodMonitor, PrometheusRule), composed from manifests.tf.json, which python -m wirespeed.terraform
# generates from the same renderer, or, for custom profiles, the renderer's own JSON output. Nothing here builds a
# manifest field; it only picks and orders the parts.
locals {
  profiles  = coalesce(var.profiles, local.wirespeed.default_profiles)
  image     = coalesce(var.image, local.wirespeed.default_image)
  namespace = coalesce(var.namespace, local.wirespeed.default_namespace)

  selected = concat(
    local.rendered.install,
    [for o in local.rendered.admission_policy : o if var.admission_policy],
    [for name in local.profiles : local.rendered.profiles[name].config_map],
    [for name in local.profiles : local.rendered.profiles[name].daemon_set],
    [for o in local.rendered.pod_monitor : o if var.pod_monitor],
    [for o in local.rendered.alerts : o if var.alerts],
  )

  # Both sources as JSON text: a conditional needs one result type, and the two lists differ in shape. The round
  # trip changes no value (every number in the objects is an integer).
  objects = jsondecode(var.objects_json != null ? var.objects_json : jsonencode(local.selected))

  # Stable for_each keys: kind/name for cluster-scoped objects, kind/namespace/name for the rest.
  object_keys = [for o in local.objects : join("/", compact([o.kind, try(o.metadata.namespace, ""), o.metadata.name]))]

  # What main.tf applies: the Namespace on its own, everything after it by key (for_each instances are created in
  # parallel, and every namespaced object needs the Namespace first). The admission policy and its binding go in a
  # step of their own before the rest, so no agent pod starts before the policy confines it.
  namespace_object = local.objects[0]
  other_objects    = { for i, key in local.object_keys : key => local.objects[i] if i > 0 }
  policy_kinds     = [for o in local.rendered.admission_policy : o.kind]
  policy_objects   = { for key, o in local.other_objects : key => o if contains(local.policy_kinds, o.kind) }
  rest_objects     = { for key, o in local.other_objects : key => o if !contains(local.policy_kinds, o.kind) }

  daemon_sets = { for o in local.objects : o.metadata.labels[local.wirespeed.profile_label] => o if o.kind == "DaemonSet" }
}
