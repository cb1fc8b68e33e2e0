# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
# A runnable root: one regional NAT gateway for a VPC's three AZs, sized for 600,000 connections from each AZ to its
# busiest destination: 11 Elastic IPs per AZ, more than a zonal gateway's 8 carry (33 in all: above the Region's
# default quota of 5 Elastic IPs, so Terraform warns). Needs the AWS provider >= 6.24.0. Replace the IDs.
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

module "egress" {
  source = "../.."

  name               = "prod-egress"
  vpc_id             = "vpc-0a1b2c3d4e5f60718"
  availability_zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
  peak_connections   = 600000
  private_route_table_ids = {
    "eu-west-1a" = "rtb-0a1b2c3d4e5f60718"
    "eu-west-1b" = "rtb-0b1c2d3e4f5a60718"
    "eu-west-1c" = "rtb-0c1d2e3f4a5b60718"
  }
}

output "public_ips" {
  value = module.egress.public_ips
}
