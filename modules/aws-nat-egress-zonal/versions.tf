terraform {
  # 1.9: validation rules read the generated facts (local.nat_facts) and other variables.
  required_version = ">= 1.9"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # aws_nat_gateway secondary_allocation_ids: provider v5.10.0 (hashicorp/terraform-provider-aws#31778).
      version = ">= 5.10"
    }
  }
}
