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
    [for name in local.profiles : local.tuned[name].config_map],
    [for name in local.profiles : local.tuned[name].daemon_set],
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

# The outbound section (var.outbound) in every profile: the one part of a profile this module writes. The renderer's
# profile text is indent-2 JSON whose last member is the one before "outbound" (the profile model's field order), so
# the section goes before its closing brace, written the way json.dumps(indent=2) writes it; the DaemonSet's
# checksum annotation is the sha256 of the text, as the renderer computes it (without var.outbound: the renderer's own
# text and checksum). tests/vectors/node_tuning.json proves both byte for byte.
locals {
  outbound_members = var.outbound == null ? [] : compact([
    "\"kind\": ${jsonencode(var.outbound.kind)}",
    var.outbound.allocated_ports_per_node == null ? "" : "\"allocated_ports_per_node\": ${var.outbound.allocated_ports_per_node}",
    var.outbound.public_ips == null ? "" : "\"public_ips\": ${var.outbound.public_ips}",
    "\"pressure_percent\": ${coalesce(var.outbound.pressure_percent, local.wirespeed.outbound.pressure_percent.default)}",
    length(var.outbound.exclude_cidrs) == 0 ? "\"exclude_cidrs\": []" : "\"exclude_cidrs\": [\n      ${join(",\n      ", [for cidr in var.outbound.exclude_cidrs : jsonencode(cidr)])}\n    ]",
    "\"hold_seconds\": ${coalesce(var.outbound.hold_seconds, local.wirespeed.outbound.hold_seconds.default)}",
    var.outbound.tcp_hold_seconds == null ? "" : "\"tcp_hold_seconds\": ${var.outbound.tcp_hold_seconds}",
    var.outbound.udp_hold_seconds == null ? "" : "\"udp_hold_seconds\": ${var.outbound.udp_hold_seconds}",
  ])
  outbound_text = "{\n    ${join(",\n    ", local.outbound_members)}\n  }"

  # The probe section (var.probe_port) after it: the profile model's last member, written as json.dumps(indent=2)
  # writes it; and the container port the renderer declares for it (local.wirespeed.probe.container_port, at the
  # user's port).
  probe_text = var.probe_port == null ? "" : format(
    ",\n  \"probe\": {\n    \"port\": %d,\n    \"peers\": %d,\n    \"streams\": %d\n  }",
    var.probe_port, local.wirespeed.probe.peers, local.wirespeed.probe.streams,
  )
  probe_ports = [for port in(var.probe_port == null ? [] : [var.probe_port]) : merge(
    local.wirespeed.probe.container_port, { containerPort = port, hostPort = port }
  )]

  tuned = { for name in local.profiles : name => {
    config_map = merge(local.rendered.profiles[name].config_map, {
      data = { (local.wirespeed.profile_key) = local.profile_texts[name] }
    })
    daemon_set = merge(local.rendered.profiles[name].daemon_set, {
      spec = merge(local.rendered.profiles[name].daemon_set.spec, {
        template = merge(local.rendered.profiles[name].daemon_set.spec.template, {
          metadata = merge(local.rendered.profiles[name].daemon_set.spec.template.metadata, {
            annotations = merge(local.rendered.profiles[name].daemon_set.spec.template.metadata.annotations, {
              (local.wirespeed.checksum_annotation) = sha256(local.profile_texts[name])
            })
          })
          spec = merge(local.rendered.profiles[name].daemon_set.spec.template.spec, {
            containers = [for c in local.rendered.profiles[name].daemon_set.spec.template.spec.containers : merge(c, {
              ports = concat(c.ports, local.probe_ports)
            })]
          })
        })
      })
    })
  } }

  outbound_texts = { for name in local.profiles : name => var.outbound == null ? local.rendered.profiles[name].config_map.data[local.wirespeed.profile_key] : format(
    "%s,\n  \"outbound\": %s\n}\n",
    trimsuffix(local.rendered.profiles[name].config_map.data[local.wirespeed.profile_key], "\n}\n"),
    local.outbound_text,
  ) }
  profile_texts = { for name in local.profiles : name => var.probe_port == null ? local.outbound_texts[name] : format(
    "%s%s\n}\n", trimsuffix(local.outbound_texts[name], "\n}\n"), local.probe_text,
  ) }
}
