# A runnable root: an ENA Express node group on c6in types for an existing cluster. Replace the IDs with yours.
terraform {
  required_version = ">= 1.9"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.100"
    }
  }
}

provider "aws" {
  region = "eu-west-1"
}

module "edge_nodes" {
  source = "../.."

  name               = "edge"
  cluster_name       = "prod"
  node_role_arn      = "arn:aws:iam::123456789012:role/eks-node"
  subnet_ids         = ["subnet-0a1b2c3d4e5f60718", "subnet-0b1c2d3e4f5a60718"]
  security_group_ids = ["sg-0123456789abcdef0"]

  instance_types = ["c6in.8xlarge", "c6in.12xlarge"]
  profile        = "throughput"
  ena_express    = true
  min_size       = 2
  max_size       = 20

  labels = { team = "payments" }
  taints = [{ key = "dedicated", value = "edge", effect = "NO_SCHEDULE" }]
}

output "profile" {
  value = module.edge_nodes.profile
}
