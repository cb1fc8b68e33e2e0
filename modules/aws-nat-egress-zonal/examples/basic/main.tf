# A runnable root: NAT egress for three AZs sized for 120,000 connections from each AZ to its busiest
# destination (3 Elastic IPs per gateway: above the default quota of 2, so Terraform warns). Replace the IDs.
terraform {
  required_version = ">= 1.9"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.10"
    }
  }
}

provider "aws" {
  region = "eu-west-1"
}

module "egress" {
  source = "../.."

  name = "prod-egress"
  public_subnet_ids = {
    "eu-west-1a" = "subnet-0a1b2c3d4e5f60718"
    "eu-west-1b" = "subnet-0b1c2d3e4f5a60718"
    "eu-west-1c" = "subnet-0c1d2e3f4a5b60718"
  }
  peak_connections = 120000
  private_route_table_ids = {
    "eu-west-1a" = "rtb-0a1b2c3d4e5f60718"
    "eu-west-1b" = "rtb-0b1c2d3e4f5a60718"
    "eu-west-1c" = "rtb-0c1d2e3f4a5b60718"
  }
}

output "public_ips" {
  value = module.egress.public_ips
}
