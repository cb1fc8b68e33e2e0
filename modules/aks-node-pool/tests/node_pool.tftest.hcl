# terraform test with a mock azurerm provider: the planned pool carries the profile's sysctls, labels and surge.
# Run by tests/terratest (TestAksNodePoolWithProvider) when the azurerm plugin is in the mirror.
mock_provider "azurerm" {}

variables {
  name                  = "ingest"
  kubernetes_cluster_id = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/aks"
  vm_size               = "standard_d16s_v6"
  max_count             = 30
  zones                 = ["1", "2", "3"]
  extra_sysctls = {
    "net.core.somaxconn"           = 32768
    "net.ipv4.ip_local_port_range" = "1024 65000"
  }
}

run "throughput_profile" {
  command = plan

  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this.vm_size == "Standard_D16s_v6"
    error_message = "vm_size is not the catalog's canonical name"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this.linux_os_config[0].sysctl_config[0].net_core_netdev_max_backlog == 32768
    error_message = "netdev_max_backlog is not the throughput profile's"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this.linux_os_config[0].sysctl_config[0].net_core_somaxconn == 32768
    error_message = "extra sysctl somaxconn missing"
  }
  assert {
    condition = (
      azurerm_kubernetes_cluster_node_pool.this.linux_os_config[0].sysctl_config[0].net_ipv4_ip_local_port_range_min == 1024 &&
      azurerm_kubernetes_cluster_node_pool.this.linux_os_config[0].sysctl_config[0].net_ipv4_ip_local_port_range_max == 65000
    )
    error_message = "the port range is not split into azurerm's min and max"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this.node_labels["wirespeed.io/profile"] == "throughput"
    error_message = "the profile label selects the tuning DaemonSet"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this.upgrade_settings[0].max_surge == "10%" && output.surge_nodes == 3
    error_message = "surge"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this.auto_scaling_enabled && azurerm_kubernetes_cluster_node_pool.this.min_count == 1 && azurerm_kubernetes_cluster_node_pool.this.max_count == 30
    error_message = "autoscaling 1..30"
  }
}

run "balanced_profile" {
  command = plan

  variables {
    profile       = "balanced"
    extra_sysctls = {}
  }

  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this.linux_os_config[0].sysctl_config[0].net_core_netdev_max_backlog == 8192
    error_message = "netdev_max_backlog is not the balanced profile's"
  }
}

run "fixed_size_pool" {
  command = plan

  variables {
    min_count = 3
    max_count = 3
  }

  assert {
    condition     = !azurerm_kubernetes_cluster_node_pool.this.auto_scaling_enabled && azurerm_kubernetes_cluster_node_pool.this.node_count == 3
    error_message = "min_count == max_count is a fixed-size pool"
  }
}

run "refuses_a_size_that_is_not_network_optimised" {
  command = plan

  variables {
    vm_size = "Standard_D16s_v5"
  }

  expect_failures = [var.vm_size]
}

run "refuses_a_sysctl_out_of_range" {
  command = plan

  variables {
    extra_sysctls = { "net.ipv4.tcp_fin_timeout" = 1 }
  }

  expect_failures = [var.extra_sysctls]
}
