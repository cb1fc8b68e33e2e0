################################################################################
# Node pool
################################################################################

resource "azurerm_kubernetes_cluster_node_pool" "this" {
  name                  = var.name
  kubernetes_cluster_id = var.kubernetes_cluster_id
  mode                  = "User"
  vm_size               = local.size.name
  os_type               = "Linux"
  os_sku                = var.os_sku
  orchestrator_version  = var.orchestrator_version
  vnet_subnet_id        = var.vnet_subnet_id
  zones                 = length(var.zones) > 0 ? var.zones : null
  max_pods              = var.max_pods

  auto_scaling_enabled = local.autoscaling
  node_count           = local.node_count
  min_count            = local.autoscaling ? var.min_count : null
  max_count            = local.autoscaling ? var.max_count : null

  node_labels = local.labels
  node_taints = var.taints
  tags        = var.tags

  upgrade_settings {
    max_surge = local.surge_text
  }

  # Create-only: a change replaces the pool (new VMs), as the Pulumi component's replace_on_change says.
  linux_os_config {
    sysctl_config {
      net_core_netdev_max_backlog      = lookup(local.sysctl_config, "net_core_netdev_max_backlog", null)
      net_core_somaxconn               = lookup(local.sysctl_config, "net_core_somaxconn", null)
      net_core_rmem_max                = lookup(local.sysctl_config, "net_core_rmem_max", null)
      net_core_wmem_max                = lookup(local.sysctl_config, "net_core_wmem_max", null)
      net_core_optmem_max              = lookup(local.sysctl_config, "net_core_optmem_max", null)
      net_ipv4_tcp_max_syn_backlog     = lookup(local.sysctl_config, "net_ipv4_tcp_max_syn_backlog", null)
      net_ipv4_tcp_fin_timeout         = lookup(local.sysctl_config, "net_ipv4_tcp_fin_timeout", null)
      net_ipv4_ip_local_port_range_min = lookup(local.sysctl_config, "net_ipv4_ip_local_port_range_min", null)
      net_ipv4_ip_local_port_range_max = lookup(local.sysctl_config, "net_ipv4_ip_local_port_range_max", null)
    }
  }

  lifecycle {
    # The cluster autoscaler moves the node count between min_count and max_count; Terraform must not undo it.
    ignore_changes = [node_count]
  }
}
