terraform {
  # 1.9: validation rules read the generated facts (local.nat_facts) and other variables.
  required_version = ">= 1.9"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 5.50: aws_nat_gateway secondary_allocation_ids.
      version = ">= 5.50"
    }
  }
}
