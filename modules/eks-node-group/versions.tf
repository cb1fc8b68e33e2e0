terraform {
  # 1.9: validation rules read the generated catalog (local.aws_instance_types) and other variables.
  required_version = ">= 1.9"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 5.31: aws_launch_template network_interfaces.ena_srd_specification (ENA Express).
      version = ">= 5.31"
    }
  }
}
