terraform {
  # 1.9: validation rules read the generated facts (local.nat_facts) and other variables.
  required_version = ">= 1.9"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # aws_nat_gateway availability_mode, vpc_id and availability_zone_address (regional NAT gateways): provider
      # v6.24.0 (CHANGELOG 6.24.0, December 2, 2025; hashicorp/terraform-provider-aws#45240, #45420).
      version = ">= 6.24.0"
    }
  }
}
