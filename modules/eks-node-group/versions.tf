terraform {
  # 1.9: validation rules read the generated catalog (local.aws_instance_types) and other variables.
  required_version = ">= 1.9"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # network_interfaces.ena_srd_specification (ENA Express) arrived in launch templates in 2025
      # (hashicorp/terraform-provider-aws#41367); 5.100.0 is the release the tests run with.
      version = ">= 5.100"
    }
  }
}
