terraform {
  # 1.9: validation rules read the generated facts (local.outbound_facts) and other variables.
  required_version = ">= 1.9"

  required_providers {
    azurerm = {
      source = "hashicorp/azurerm"
      # 4.0 renamed enable_auto_scaling to auto_scaling_enabled; every attribute used here is unchanged in 5.x
      # (validated and tested with 5.2.0; its upgrade guide changes nothing this module sets).
      version = ">= 4.0, < 6.0"
    }
  }
}
