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

module "outbound" {
  source = "../.."

  # The system pool below, and a user pool of up to 200 nodes defined elsewhere (e.g. modules/aks-node-pool).
  pools = [
    { max_count = 3, max_surge = "1" },
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

  default_node_pool {
    name                 = "system"
    vm_size              = "Standard_D4s_v6"
    auto_scaling_enabled = true
    min_count            = 2
    max_count            = 3
    node_count           = 2

    upgrade_settings {
      max_surge = "1"
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
