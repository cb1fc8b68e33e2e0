output "id" {
  description = "ID of the azurerm_kubernetes_cluster_node_pool; null for the system pool (system_pool = true), which the cluster holds."
  value       = one(azurerm_kubernetes_cluster_node_pool.this[*].id)
}

output "name" {
  description = "The AKS pool name."
  value       = var.system_pool ? var.name : azurerm_kubernetes_cluster_node_pool.this[0].name
}

output "default_node_pool" {
  description = <<-EOT
    With system_pool = true: the cluster's default_node_pool values by azurerm attribute (name, vm_size, os_sku, zones,
    max_pods, auto_scaling_enabled, node_count, min_count, max_count, node_labels, node_taints,
    upgrade_settings.max_surge, sysctl_config for its linux_os_config block, and tags). null for a user pool.
  EOT
  value       = var.system_pool ? local.pool : null
}

output "vm_size" {
  description = "The canonical VM size (Standard_D16s_v6)."
  value       = local.size.name
}

output "network_optimised" {
  description = "Whether the size is network-optimised (false only with not_network_optimised_reason)."
  value       = local.size.network_optimised
}

output "tags" {
  description = "The Azure tags set on the pool: var.tags plus, for a size that is not network-optimised, not_network_optimised_reason as the tag the policy rule network-optimised-sku reads."
  value       = local.tags
}

output "profile" {
  description = "The tuning profile's name, also the node label wirespeed.io/profile."
  value       = var.profile
}

output "labels" {
  description = "The node labels set, wirespeed.io/profile included."
  value       = local.labels
}

output "surge_nodes" {
  description = "Upgrade surge in nodes at max_count, as counted in outbound sizing."
  value       = local.surge_nodes
}

output "sizing_pool" {
  description = "max_count and max_surge, to pass in modules/aks-outbound's pools (every pool behind the load balancer counts, with its surge)."
  value       = { max_count = var.max_count, max_surge = local.surge_text }
}

output "linux_os_config_sysctls" {
  description = "The sysctls AKS sets at node creation, by API name (netCoreNetdevMaxBacklog), as the Pulumi component's output."
  value       = local.linux_os_config_sysctls
}

output "left_to_agent" {
  description = "What the node agent applies instead (sysctls AKS cannot set, rings.<driver>, mtu)."
  value       = local.profile.left_to_agent
}

output "replace_on_change" {
  description = "Create-only inputs (AKS API names): changing one replaces the pool."
  value       = local.pool_facts.replace_on_change
}
