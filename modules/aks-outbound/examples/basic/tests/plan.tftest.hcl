# A plan of the example with a mock azurerm provider (no Azure credentials needed).
mock_provider "azurerm" {}

run "plan" {
  command = plan

  assert {
    # 8 conn/s x 240 s x 1.25 = 2,400 ports; (3 + 1) + (200 + 20) = 224 nodes x 2,400 = 537,600: 9 IPs.
    condition     = output.outbound_ports_allocated == 2400 && output.public_ip_count == 9
    error_message = "outbound sizing"
  }

  assert {
    # The system pool is tuned like a user pool (modules/aks-node-pool with system_pool = true).
    condition     = azurerm_kubernetes_cluster.this.default_node_pool[0].linux_os_config[0].sysctl_config[0].net_core_netdev_max_backlog == 32768
    error_message = "system pool sysctls"
  }
}
