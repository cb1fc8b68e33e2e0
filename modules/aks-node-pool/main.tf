################################################################################
# Node pool
################################################################################

resource "azurerm_kubernetes_cluster_node_pool" "this" {
  # The system pool is the cluster's default_node_pool, built by the caller from output default_node_pool.
  count = var.system_pool ? 0 : 1

  name                  = local.pool.name
  kubernetes_cluster_id = var.kubernetes_cluster_id
  mode                  = "User"
  vm_size               = local.pool.vm_size
  os_type               = "Linux"
  os_sku                = local.pool.os_sku
  orchestrator_version  = var.orchestrator_version
  vnet_subnet_id        = var.vnet_subnet_id
  zones                 = local.pool.zones
  max_pods              = local.pool.max_pods

  auto_scaling_enabled = local.pool.auto_scaling_enabled
  node_count           = local.pool.node_count
  min_count            = local.pool.min_count
  max_count            = local.pool.max_count

  node_labels = local.pool.node_labels
  node_taints = local.pool.node_taints
  tags        = local.pool.tags

  upgrade_settings {
    max_surge = local.pool.upgrade_settings.max_surge
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
