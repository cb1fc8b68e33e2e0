# A new AKS cluster whose egress uses public IPs this module creates (Standard, static, zone-redundant: addresses
# partners can allowlist), sized for 8 new connections/s per node to the busiest destination over every pool.
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

variable "subscription_id" {
  description = "Azure subscription to deploy into."
  type        = string
  default     = "00000000-0000-0000-0000-000000000000"
}

variable "location" {
  description = "Azure region."
  type        = string
  default     = "westeurope"
}

resource "azurerm_resource_group" "this" {
  name     = "wirespeed-aks-outbound"
  location = var.location
}

module "system" {
  source = "../../../aks-node-pool"

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

module "outbound" {
  source = "../.."

  # The system pool below, and a user pool of up to 200 nodes defined elsewhere (e.g. modules/aks-node-pool).
  pools = [
    module.system.sizing_pool,
    { max_count = 200, max_surge = "10%" },
  ]
  connections_per_second = 8
  ip_mode                = "created"
  resource_group_name    = azurerm_resource_group.this.name
  location               = azurerm_resource_group.this.location
  public_ip_name_prefix  = "wirespeed-egress"
}

resource "azurerm_kubernetes_cluster" "this" {
  name                = "wirespeed-outbound"
  location            = azurerm_resource_group.this.location
  resource_group_name = azurerm_resource_group.this.name
  dns_prefix          = "wirespeed-outbound"

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

    load_balancer_profile {
      outbound_ports_allocated = module.outbound.load_balancer_profile.outbound_ports_allocated
      outbound_ip_address_ids  = module.outbound.load_balancer_profile.outbound_ip_address_ids
      idle_timeout_in_minutes  = module.outbound.load_balancer_profile.idle_timeout_in_minutes
    }
  }
}

output "outbound_ports_allocated" {
  description = "SNAT ports per node."
  value       = module.outbound.load_balancer_profile.outbound_ports_allocated
}

output "public_ip_count" {
  description = "Outbound public IPs created."
  value       = module.outbound.outbound_ip_count
}

output "public_ip_addresses" {
  description = "The egress addresses to give partners for their allowlists."
  value       = module.outbound.public_ip_addresses
}
