terraform {
  # 1.9: validation rules read the generated facts (local.outbound_facts) and other variables.
  required_version = ">= 1.9"

  required_providers {
    azurerm = {
      source  = "hashicorp/azurerm"
      version = "~> 4.0"
    }
  }
}
