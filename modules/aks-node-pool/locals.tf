# Pure: what the pool is built from, derived as wirespeed.azure.pools.check_pool derives it. The facts
# (catalog.tf.json, profiles.tf.json) are generated from the Python library; nothing here names a provider.
locals {
  # wirespeed.catalog.normalise_name: case, the Standard_ prefix, and "-", "_" or spaces between parts are free.
  # Written once, as a template of `name` ($${ keeps the interpolation for templatestring, ~ drops the newline):
  # vm_size's own validation rules apply it too, and they cannot read size_key (a local computed from var.vm_size
  # waits for those rules, so Terraform would report a cycle).
  size_key_template = <<-EOT
    $${trimprefix(trim(replace(lower(name), "/[-_\\s]+/", "_"), "_"), "standard_") ~}
  EOT
  size_key          = templatestring(local.size_key_template, { name = var.vm_size })
  size              = lookup(local.catalog.sizes, local.size_key, null)

  profile_valid = contains(keys(local.wirespeed_profiles), var.profile)
  profile       = local.profile_valid ? local.wirespeed_profiles[var.profile] : { aks_sysctls = {}, left_to_agent = [] }

  max_count_valid = var.max_count == floor(var.max_count) && var.max_count >= 1 && var.max_count <= local.pool_facts.max_pool_nodes
  autoscaling     = var.min_count < var.max_count
  node_count      = local.autoscaling ? var.min_count : var.max_count

  taint_pattern = "^.+:(${join("|", local.pool_facts.taint_effects)})$"
}

# Upgrade surge in nodes at max_count, on exact decimals as modules/sizing does: "33.3%" of 30 is
# ceil(30 x 333 / 1000) = 10 (float arithmetic can land a hair above and round up to 11).
locals {
  surge_text       = trimspace(var.max_surge)
  surge_is_percent = endswith(local.surge_text, "%")
  surge_parts      = try(regex(local.surge_is_percent ? "^([0-9]+)(?:\\.([0-9]+))?%$" : "^([0-9]+)()$", local.surge_text), null)
  # An unmatched optional group is null in Terraform: "10%" has no decimals.
  surge_decimals = local.surge_parts == null ? "" : (local.surge_parts[1] == null ? "" : local.surge_parts[1])
  surge_digits   = length(local.surge_decimals)
  surge_scaled   = local.surge_parts == null ? 0 : tonumber("${local.surge_parts[0]}${local.surge_decimals}")
  surge_valid = local.surge_parts != null && local.surge_scaled > 0 && (
    local.surge_is_percent ? local.surge_scaled <= 100 * pow(10, local.surge_digits) : (!local.max_count_valid || local.surge_scaled <= var.max_count)
  )
  surge_numerator   = local.surge_is_percent ? var.max_count * local.surge_scaled : local.surge_scaled
  surge_denominator = local.surge_is_percent ? 100 * pow(10, local.surge_digits) : 1
  surge_nodes = !local.surge_valid ? null : (
    (local.surge_numerator - local.surge_numerator % local.surge_denominator) / local.surge_denominator +
    (local.surge_numerator % local.surge_denominator > 0 ? 1 : 0)
  )
}

# linux_os_config: the profile's sysctls AKS can set, plus extra_sysctls, checked against AKS's ranges.
locals {
  port_range = "net.ipv4.ip_local_port_range"

  # By kernel name, as wirespeed's plan holds them (numbers, the port range as its "FIRST LAST" text).
  sysctls = merge(
    local.profile.aks_sysctls,
    # Two expressions, not one conditional: a conditional would make every value a string.
    { for k, v in var.extra_sysctls : k => tonumber(v) if contains(keys(local.aks_sysctls), k) && k != local.port_range && can(tonumber(v)) },
    { for k, v in var.extra_sysctls : k => v if k == local.port_range },
  )
  # By the AKS API name (netCoreNetdevMaxBacklog), as the Pulumi component's linux_os_config_sysctls output.
  linux_os_config_sysctls = { for k, v in local.sysctls : local.aks_sysctls[k].engine_name => v }
  # By azurerm sysctl_config attribute; the port range is two attributes there.
  sysctl_config = merge(
    { for k, v in local.sysctls : local.aks_sysctls[k].attribute => v if k != local.port_range },
    contains(keys(local.sysctls), local.port_range) ? zipmap(local.aks_sysctls[local.port_range].attributes, [for p in split(" ", local.sysctls[local.port_range]) : tonumber(p)]) : {},
  )

  labels = merge(var.labels, { (local.pool_facts.profile_label) = var.profile })

  # The written reason for a size that is not network-optimised, recorded on the pool where the policy rule
  # network-optimised-sku reads it (as the Pulumi component's PoolPlan.tags); none for a network-optimised size.
  reason_tags = try(!local.size.network_optimised, false) && var.not_network_optimised_reason != null ? {
    (local.pool_facts.reason_tag) = trimspace(var.not_network_optimised_reason)
  } : {}
  tags = merge(var.tags, local.reason_tags)
}

# The pool by azurerm attribute: main.tf's azurerm_kubernetes_cluster_node_pool reads it, and for the system pool
# the cluster's default_node_pool is built from it (output default_node_pool), one source for both as the Pulumi
# component's _pool_settings is for AgentPool and the cluster's inline system pool.
locals {
  pool = {
    name                 = var.name
    vm_size              = local.size.name
    os_sku               = var.os_sku
    zones                = length(var.zones) > 0 ? var.zones : null
    max_pods             = var.max_pods
    auto_scaling_enabled = local.autoscaling
    node_count           = local.node_count
    min_count            = local.autoscaling ? var.min_count : null
    max_count            = local.autoscaling ? var.max_count : null
    node_labels          = local.labels
    node_taints          = var.taints # always [] for the system pool (variables.tf: default_node_pool cannot set them)
    upgrade_settings     = { max_surge = local.surge_text }
    sysctl_config        = local.sysctl_config
    tags                 = local.tags
  }
}
