# A plan of the example with a mock azurerm provider (no Azure credentials needed).
mock_provider "azurerm" {}

run "plan" {
  command = plan

  assert {
    # 4 conn/s x 240 s x 1.25 = 1,200 ports, above Azure's 1,024 default; (3 + 1) + (30 + 3) = 37 nodes.
    condition     = output.outbound_ports_allocated == 1200 && output.outbound_ip_count == 1
    error_message = "outbound sizing"
  }

  assert {
    # modules/aks-outbound's values reach the cluster's load balancer.
    condition = (
      azurerm_kubernetes_cluster.this.network_profile[0].load_balancer_profile[0].outbound_ports_allocated == 1200 &&
      azurerm_kubernetes_cluster.this.network_profile[0].load_balancer_profile[0].managed_outbound_ip_count == 1
    )
    error_message = "cluster load balancer profile"
  }

  assert {
    condition     = output.ingest_sysctls == { netCoreNetdevMaxBacklog = 32768, netCoreSomaxconn = 32768 }
    error_message = "pool sysctls"
  }

  assert {
    # The system pool is tuned like a user pool (modules/aks-node-pool with system_pool = true).
    condition     = azurerm_kubernetes_cluster.this.default_node_pool[0].linux_os_config[0].sysctl_config[0].net_core_netdev_max_backlog == 32768
    error_message = "system pool sysctls"
  }
}
