output "id" {
  description = "ID of the azurerm_kubernetes_cluster_node_pool."
  value       = azurerm_kubernetes_cluster_node_pool.this.id
}

output "name" {
  description = "The AKS pool name."
  value       = azurerm_kubernetes_cluster_node_pool.this.name
}

output "vm_size" {
  description = "The canonical VM size (Standard_D16s_v6)."
  value       = local.size.name
}

output "network_optimised" {
  description = "Whether the size is network-optimised (false only with not_network_optimised_reason)."
  value       = local.size.network_optimised
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
