# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
# A runnable root: the same module in each mode. Zonal for two AZs at 120,000 connections from each AZ to its busiest
# destination (3 Elastic IPs per gateway: above the per-gateway default quota of 2, so Terraform warns); regional
# in automatic mode for a peak no zonal gateway carries (900,000: AWS adds up to 32 IPs per AZ, 17 at this peak).
# Needs the AWS provider >= 6.24.0 (on an older one, call modules/aws-nat-egress-zonal). Replace the IDs.
terraform {
  required_version = ">= 1.9"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.24.0"
    }
  }
}

provider "aws" {
  region = "eu-west-1"
}

module "zonal" {
  source = "../.."

  name = "api-egress"
  public_subnet_ids = {
    "eu-west-1a" = "subnet-0a1b2c3d4e5f60718"
    "eu-west-1b" = "subnet-0b1c2d3e4f5a60718"
  }
  peak_connections = 120000
}

module "regional" {
  source = "../.."

  name               = "batch-egress"
  mode               = "regional"
  ip_mode            = "automatic"
  vpc_id             = "vpc-0a1b2c3d4e5f60718"
  availability_zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
  peak_connections   = 900000
}

output "zonal_public_ips" {
  value = module.zonal.public_ips
}

output "regional_gateway" {
  value = module.regional.nat_gateway_ids
}
