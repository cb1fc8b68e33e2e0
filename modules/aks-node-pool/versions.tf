terraform {
  # 1.9: validation rules read the generated facts (local.catalog, local.aks_sysctls) and other variables.
  required_version = ">= 1.9"

  required_providers {
    azurerm = {
      source = "hashicorp/azurerm"
      # 4.x names: auto_scaling_enabled (enable_auto_scaling before 4.0), linux_os_config.sysctl_config.
      version = "~> 4.0"
    }
  }
}
