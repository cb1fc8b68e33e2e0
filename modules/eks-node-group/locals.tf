# What the node group is built from, decided as wirespeed.aws.capacity.plan_node_group decides it. Pure: reads
# only the variables and the generated catalog.tf.json and user_data.tf.json, never a provider.
locals {
  # The catalog is keyed by canonical (lower-case) names; Python's lookup is case-insensitive too.
  requested_types = [for n in var.instance_types : lower(trimspace(n))]
  found_types = [
    for n in local.requested_types : merge(local.aws_instance_types[n], { name = n })
    if contains(keys(local.aws_instance_types), n)
  ]
  found_names   = [for t in local.found_types : t.name]
  architectures = sort(distinct([for t in local.found_types : t.architecture]))
  ring_classes  = sort(distinct([for t in local.found_types : t.ring_class]))

  # One source for the user data: the string Python renders for this profile, OS and ENA Express setting, with the
  # agent image (Bottlerocket's bootstrap container source) where Python wrote the placeholder.
  user_data_key      = "${var.profile}/${var.operating_system}/${var.ena_express}"
  agent_image        = coalesce(var.agent_image, local.node_group_facts.default_agent_image)
  user_data_template = lookup(local.user_data_by_key, local.user_data_key, null)
  user_data = local.user_data_template == null ? null : replace(
    local.user_data_template, local.node_group_facts.agent_image_placeholder, local.agent_image
  )
  # <profile>-ena-express with ENA Express (RX ring 8,192, MTU 8,900 on ENA links): the node agent's profile.
  profile_name = lookup(local.profile_name_by_key, local.user_data_key, null)

  ami_type   = try(local.node_group_facts.ami_types["${var.operating_system}/${local.architectures[0]}"], null)
  ring_class = try(local.ring_classes[0], null)
  labels     = merge(var.labels, { (local.node_group_facts.profile_label) = local.profile_name })
  # The written reason for types that are not network-optimised, recorded where the policy rule
  # network-optimised-sku reads it (as the Pulumi component's NodeGroupPlan.tags); none when every type is.
  reason_tags = length(local.found_types) > 0 && !alltrue([for t in local.found_types : t.network_optimised]) && try(trimspace(var.not_network_optimised_reason) != "", false) ? {
    (local.node_group_facts.reason_tag) = trimspace(var.not_network_optimised_reason)
  } : {}
  node_group_tags = merge(var.tags, local.reason_tags)
  tags            = merge(var.tags, { (local.node_group_facts.profile_label) = local.profile_name }, local.reason_tags)

  # The fastest type's line rate (its burst bandwidth, as the policy gates read a size): the launch template names
  # no instance type, so it carries this in the tag netdev-backlog-minimum reads (as NetworkOptimizedNodeGroup's
  # template does), and the line-rate check below holds the profile's backlog to what this rate needs.
  line_rate_gbps       = length(local.found_types) > 0 ? max([for t in local.found_types : t.burst_gbps]...) : null
  minimum_backlog      = length(local.found_types) > 0 ? max([for t in local.found_types : t.minimum_netdev_max_backlog]...) : null
  profile_backlog      = lookup(local.node_group_facts.profile_netdev_max_backlog, var.profile, null)
  launch_template_tags = merge(local.tags, local.line_rate_gbps == null ? {} : { (local.node_group_facts.line_rate_tag) = tostring(local.line_rate_gbps) })
  scaling = {
    min_size     = var.min_size
    max_size     = var.max_size
    desired_size = var.desired_size == null ? var.min_size : var.desired_size
  }

  # Python's rule: an invalid min_size or max_size counts as its lowest allowed value when the others are checked.
  whole_min = try(var.min_size == floor(var.min_size) && var.min_size >= 0 && var.min_size <= local.node_group_facts.max_nodes, false)
  whole_max = try(var.max_size == floor(var.max_size) && var.max_size >= 1 && var.max_size <= local.node_group_facts.max_nodes, false)
  low       = local.whole_min ? var.min_size : 0
  high      = local.whole_max ? var.max_size : 1

}
