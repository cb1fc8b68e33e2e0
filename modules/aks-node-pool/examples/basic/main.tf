# The AKS example of both modules/aks-node-pool and modules/aks-outbound: a new cluster whose system pool and one
# network-optimised user pool are tuned by the throughput profile (aks-node-pool), with outbound SNAT sized over
# every pool, the system pool too (aks-outbound).
terraform {
  required_version = ">= 1.9"

  required_providers {
    azurerm = {
      source = "hashicorp/azurerm"
      # 4.57 added node_provisioning_profile, which 5.0 made required.
      version = ">= 4.57, < 6.0"
    }
  }
}

provider "azurerm" {
  features {}
  subscription_id = var.subscription_id
}

variable "location" {
  description = "Azure region."
  type        = string
  default     = "westeurope"
}

variable "subscription_id" {
  description = "Azure subscription to deploy into."
  type        = string
  default     = "00000000-0000-0000-0000-000000000000"
}

module "system" {
  source = "../.."

  name        = "system"
  system_pool = true
  vm_size     = "Standard_D4s_v6"
  min_count   = 2
  max_count   = 3
  max_surge   = "1"
  profile     = "throughput"
}

locals {
  system = module.system.default_node_pool
}

resource "azurerm_resource_group" "this" {
  name     = "wirespeed-aks-basic"
  location = var.location
}

module "outbound" {
  source = "../../../aks-outbound"

  # Every pool behind the load balancer counts for SNAT, with its upgrade surge. sizing_pool reads only the
  # pool's own inputs, so passing it here makes no cycle with the cluster the pool joins.
  pools                  = [module.system.sizing_pool, module.ingest.sizing_pool]
  connections_per_second = 4
  # The outbound IPs are AKS-managed. For static addresses partners can allowlist, add ip_mode = "created" with
  # resource_group_name and location (the cluster's): the module creates the public IPs, and the
  # load_balancer_profile block below passes their IDs instead of a managed count.
}

resource "azurerm_kubernetes_cluster" "this" {
  name                = "wirespeed-basic"
  location            = azurerm_resource_group.this.location
  resource_group_name = azurerm_resource_group.this.name
  dns_prefix          = "wirespeed-basic"

  # The system pool, tuned like every other pool: modules/aks-node-pool with system_pool = true checks it and
  # gives the values; the cluster builds it (azurerm has no separate resource for the system pool).
  default_node_pool {
    name                 = local.system.name
    vm_size              = local.system.vm_size
    os_sku               = local.system.os_sku
    zones                = local.system.zones
    max_pods             = local.system.max_pods
    auto_scaling_enabled = local.system.auto_scaling_enabled
    node_count           = local.system.node_count
    min_count            = local.system.min_count
    max_count            = local.system.max_count
    node_labels          = local.system.node_labels
    tags                 = local.system.tags
    # linux_os_config and vm_size are create-only: azurerm rotates the system pool through this temporary pool.
    temporary_name_for_rotation = "systemrot"

    upgrade_settings {
      max_surge = local.system.upgrade_settings.max_surge
    }

    linux_os_config {
      sysctl_config {
        net_core_netdev_max_backlog      = lookup(local.system.sysctl_config, "net_core_netdev_max_backlog", null)
        net_core_somaxconn               = lookup(local.system.sysctl_config, "net_core_somaxconn", null)
        net_core_rmem_max                = lookup(local.system.sysctl_config, "net_core_rmem_max", null)
        net_core_wmem_max                = lookup(local.system.sysctl_config, "net_core_wmem_max", null)
        net_core_optmem_max              = lookup(local.system.sysctl_config, "net_core_optmem_max", null)
        net_ipv4_tcp_max_syn_backlog     = lookup(local.system.sysctl_config, "net_ipv4_tcp_max_syn_backlog", null)
        net_ipv4_tcp_fin_timeout         = lookup(local.system.sysctl_config, "net_ipv4_tcp_fin_timeout", null)
        net_ipv4_ip_local_port_range_min = lookup(local.system.sysctl_config, "net_ipv4_ip_local_port_range_min", null)
        net_ipv4_ip_local_port_range_max = lookup(local.system.sysctl_config, "net_ipv4_ip_local_port_range_max", null)
      }
    }
  }

  identity {
    type = "SystemAssigned"
  }

  # Pools are the ones defined here (no node auto-provisioning): every pool must be counted in the SNAT sizing.
  node_provisioning_profile {
    mode = "Manual"
  }

  network_profile {
    network_plugin      = "azure"
    network_plugin_mode = "overlay"
    load_balancer_sku   = "standard"
    outbound_type       = module.outbound.outbound_type

    dynamic "load_balancer_profile" {
      for_each = module.outbound.load_balancer_profile == null ? [] : [module.outbound.load_balancer_profile]
      content {
        outbound_ports_allocated  = load_balancer_profile.value.outbound_ports_allocated
        managed_outbound_ip_count = load_balancer_profile.value.managed_outbound_ip_count
        outbound_ip_address_ids   = length(load_balancer_profile.value.outbound_ip_address_ids) > 0 ? load_balancer_profile.value.outbound_ip_address_ids : null
        outbound_ip_prefix_ids    = length(load_balancer_profile.value.outbound_ip_prefix_ids) > 0 ? load_balancer_profile.value.outbound_ip_prefix_ids : null
        idle_timeout_in_minutes   = load_balancer_profile.value.idle_timeout_in_minutes
      }
    }
  }
}

module "ingest" {
  source = "../.."

  name                  = "ingest"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.this.id
  vm_size               = "Standard_D16s_v6"
  min_count             = 2
  max_count             = 30
  max_surge             = "10%"
  zones                 = ["1", "2", "3"]
  profile               = "throughput"
  extra_sysctls         = { "net.core.somaxconn" = 32768 }
}

output "outbound_ports_allocated" {
  description = "SNAT ports per node."
  value       = module.outbound.load_balancer_profile.outbound_ports_allocated
}

output "outbound_ip_count" {
  description = "Managed outbound IPs."
  value       = module.outbound.outbound_ip_count
}

output "system_sysctls" {
  description = "The sysctls AKS sets on the system pool's nodes (azurerm attribute names)."
  value       = local.system.sysctl_config
}

output "ingest_sysctls" {
  description = "The sysctls AKS sets on the ingest pool's nodes."
  value       = module.ingest.linux_os_config_sysctls
}
