# terraform test with the real AWS provider's schema and mocked responses (no AWS account here): the launch
# template and node group NetworkOptimizedNodeGroup registers.
mock_provider "aws" {
  # The provider checks the node group's launch template id has EC2's shape.
  mock_resource "aws_launch_template" {
    defaults = {
      id             = "lt-0123456789abcdef0"
      latest_version = 1
    }
  }
}

variables {
  name          = "edge"
  cluster_name  = "prod"
  node_role_arn = "arn:aws:iam::123456789012:role/eks-node"
  subnet_ids    = ["subnet-0a", "subnet-0b"]
}

run "plain_al2023" {
  variables {
    instance_types     = ["c6in.8xlarge", "c6in.12xlarge"]
    security_group_ids = ["sg-0a"]
    labels             = { team = "payments" }
    taints             = [{ key = "dedicated", value = "edge", effect = "NO_SCHEDULE" }]
    min_size           = 2
    max_size           = 10
  }

  assert {
    condition     = base64decode(aws_launch_template.this.user_data) == output.user_data && startswith(output.user_data, "Content-Type: multipart/mixed")
    error_message = "the launch template carries the user data output, base64-encoded"
  }

  assert {
    condition = (
      aws_launch_template.this.metadata_options[0].http_tokens == "required" &&
      aws_launch_template.this.metadata_options[0].http_put_response_hop_limit == 2 &&
      aws_launch_template.this.metadata_options[0].http_endpoint == "enabled"
    )
    error_message = "IMDSv2 required, hop limit 2"
  }

  assert {
    condition     = length(aws_launch_template.this.network_interfaces) == 0 && aws_launch_template.this.vpc_security_group_ids == toset(["sg-0a"])
    error_message = "without ENA Express: no interface block, the security groups on the template"
  }

  assert {
    condition = (
      aws_eks_node_group.this.ami_type == "AL2023_x86_64_STANDARD" &&
      aws_eks_node_group.this.instance_types == tolist(["c6in.8xlarge", "c6in.12xlarge"]) &&
      aws_eks_node_group.this.labels == tomap({ team = "payments", "wirespeed.io/profile" = "throughput" }) &&
      aws_eks_node_group.this.scaling_config[0].min_size == 2 && aws_eks_node_group.this.scaling_config[0].max_size == 10 &&
      aws_eks_node_group.this.scaling_config[0].desired_size == 2 &&
      aws_eks_node_group.this.update_config[0].max_unavailable_percentage == 10 &&
      aws_eks_node_group.this.launch_template[0].id == aws_launch_template.this.id &&
      aws_eks_node_group.this.launch_template[0].version == "1" &&
      aws_eks_node_group.this.capacity_type == "ON_DEMAND"
    )
    error_message = "node group: types, AL2023 x86_64, labels with the profile, sizes, update config, the launch template"
  }

  assert {
    condition     = length(aws_eks_node_group.this.taint) == 1 && one(aws_eks_node_group.this.taint).effect == "NO_SCHEDULE"
    error_message = "the taint"
  }
}

run "ena_express_on_the_interface" {
  variables {
    instance_types     = ["c6in.8xlarge"]
    ena_express        = true
    security_group_ids = ["sg-0a"]
  }

  assert {
    condition = (
      length(aws_launch_template.this.network_interfaces) == 1 &&
      aws_launch_template.this.network_interfaces[0].device_index == 0 &&
      aws_launch_template.this.network_interfaces[0].security_groups == toset(["sg-0a"]) &&
      aws_launch_template.this.network_interfaces[0].ena_srd_specification[0].ena_srd_enabled &&
      aws_launch_template.this.network_interfaces[0].ena_srd_specification[0].ena_srd_udp_specification[0].ena_srd_udp_enabled &&
      length(coalesce(aws_launch_template.this.vpc_security_group_ids, [])) == 0
    )
    error_message = "ENA Express: SRD (and UDP) on the primary interface, the security groups there and not on the template"
  }

  assert {
    condition     = output.profile == "throughput-ena-express" && aws_eks_node_group.this.labels["wirespeed.io/profile"] == "throughput-ena-express"
    error_message = "ENA Express: the -ena-express profile"
  }
}

run "graviton_bottlerocket" {
  variables {
    instance_types   = ["c7gn.4xlarge"]
    operating_system = "bottlerocket"
  }

  assert {
    condition     = aws_eks_node_group.this.ami_type == "BOTTLEROCKET_ARM_64" && output.ring_class == "throughput"
    error_message = "Bottlerocket on arm64"
  }
}

run "not_network_optimised_refused" {
  command = plan
  variables {
    instance_types = ["m6i.large"]
  }
  expect_failures = [var.instance_types]
}

run "line_rate_tag_names_the_fastest_type" {
  variables {
    instance_types = ["c6in.8xlarge", "c6in.12xlarge"]
  }

  assert {
    condition = (
      aws_launch_template.this.tags["wirespeed.io/line-rate-gbps"] == "75" &&
      !contains(keys(aws_launch_template.this.tag_specifications[0].tags), "wirespeed.io/line-rate-gbps")
    )
    error_message = "the launch template (not its instances) carries the fastest type's line rate, where netdev-backlog-minimum reads it"
  }
}

run "balanced_on_a_100_gbps_group_warns" {
  command = plan
  variables {
    instance_types = ["c6in.16xlarge"]
    profile        = "balanced"
  }
  # balanced's backlog 8,192 is sized for 25 Gb/s; 100 Gb/s needs 32,768. A warning (the pack decides the level).
  expect_failures = [check.netdev_backlog_line_rate]

  assert {
    condition     = aws_launch_template.this.tags["wirespeed.io/line-rate-gbps"] == "100"
    error_message = "the line rate the policy pack holds the template to"
  }
}
