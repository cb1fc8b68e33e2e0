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
    condition     = azurerm_kubernetes_cluster_node_pool.this[0].vm_size == "Standard_D16s_v6"
    error_message = "vm_size is not the catalog's canonical name"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this[0].linux_os_config[0].sysctl_config[0].net_core_netdev_max_backlog == 32768
    error_message = "netdev_max_backlog is not the throughput profile's"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this[0].linux_os_config[0].sysctl_config[0].net_core_somaxconn == 32768
    error_message = "extra sysctl somaxconn missing"
  }
  assert {
    condition = (
      azurerm_kubernetes_cluster_node_pool.this[0].linux_os_config[0].sysctl_config[0].net_ipv4_ip_local_port_range_min == 1024 &&
      azurerm_kubernetes_cluster_node_pool.this[0].linux_os_config[0].sysctl_config[0].net_ipv4_ip_local_port_range_max == 65000
    )
    error_message = "the port range is not split into azurerm's min and max"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this[0].node_labels["wirespeed.io/profile"] == "throughput"
    error_message = "the profile label selects the tuning DaemonSet"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this[0].upgrade_settings[0].max_surge == "10%" && output.surge_nodes == 3
    error_message = "surge"
  }
  assert {
    condition     = azurerm_kubernetes_cluster_node_pool.this[0].auto_scaling_enabled && azurerm_kubernetes_cluster_node_pool.this[0].min_count == 1 && azurerm_kubernetes_cluster_node_pool.this[0].max_count == 30
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
    condition     = azurerm_kubernetes_cluster_node_pool.this[0].linux_os_config[0].sysctl_config[0].net_core_netdev_max_backlog == 8192
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
    condition     = !azurerm_kubernetes_cluster_node_pool.this[0].auto_scaling_enabled && azurerm_kubernetes_cluster_node_pool.this[0].node_count == 3
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

run "system_pool_creates_nothing_and_outputs_the_default_node_pool" {
  command = plan

  variables {
    name                  = "system"
    system_pool           = true
    kubernetes_cluster_id = null
    vm_size               = "Standard_D4s_v6"
    min_count             = 2
    max_count             = 3
    max_surge             = "1"
    zones                 = []
    extra_sysctls         = {}
  }

  assert {
    condition     = length(azurerm_kubernetes_cluster_node_pool.this) == 0 && output.id == null
    error_message = "the system pool is the cluster's default_node_pool: the module creates no pool"
  }
  assert {
    condition = output.default_node_pool.vm_size == "Standard_D4s_v6" && output.default_node_pool.auto_scaling_enabled && (
      output.default_node_pool.node_count == 2 && output.default_node_pool.min_count == 2 && output.default_node_pool.max_count == 3
    )
    error_message = "system pool sizing"
  }
  assert {
    condition     = output.default_node_pool.sysctl_config == { net_core_netdev_max_backlog = 32768 } && output.default_node_pool.node_labels["wirespeed.io/profile"] == "throughput"
    error_message = "the system pool is tuned like a user pool"
  }
  assert {
    condition     = output.sizing_pool == { max_count = 3, max_surge = "1" }
    error_message = "the system pool counts in outbound sizing"
  }
}

run "system_pool_needs_a_node" {
  command = plan

  variables {
    system_pool           = true
    kubernetes_cluster_id = null
    min_count             = 0
  }

  expect_failures = [var.min_count]
}

run "user_pool_needs_the_cluster_id" {
  command = plan

  variables {
    kubernetes_cluster_id = null
  }

  expect_failures = [var.kubernetes_cluster_id]
}

# The line-rate minimum (policy rule netdev-backlog-minimum): balanced (netdev_max_backlog 8,192, sized for 25 Gb/s)
# meets a 12.5 Gb/s Standard_D16s_v6 and fails the check on an 82 Gb/s Standard_D192ds_v6 (minimum 32,768).
run "balanced_on_a_12_5_gbps_size_meets_the_line_rate_minimum" {
  command = plan
  variables {
    profile = "balanced"
  }
}

run "balanced_on_an_82_gbps_size_is_below_the_line_rate_minimum" {
  command = plan
  variables {
    vm_size = "Standard_D192ds_v6"
    profile = "balanced"
  }
  expect_failures = [check.netdev_backlog_line_rate]
}
