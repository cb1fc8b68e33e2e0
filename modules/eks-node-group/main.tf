# What wirespeed.aws.NetworkOptimizedNodeGroup registers: a launch template carrying the boot-time tuning and an
# EKS managed node group using it. Every decision (types, AMI type, user data, labels) is made in locals.tf.

resource "aws_launch_template" "this" {
  name_prefix = "${var.name}-"
  description = "wirespeed: ${local.profile_name} tuning at boot"
  # The MIME user data Python renders (user_data.tf.json): nodeadm NodeConfig + the boot tuning script on AL2023,
  # Bottlerocket settings TOML otherwise.
  user_data = base64encode(local.user_data)

  metadata_options {
    http_endpoint = "enabled"
    http_tokens   = "required"
    # 2, wirespeed.aws.capacity.IMDS_HOP_LIMIT (generated into catalog.tf.json): the AWS default of 1 stops
    # containers behind one extra hop from reaching instance metadata.
    http_put_response_hop_limit = local.node_group_facts.imds_hop_limit
  }

  # With ENA Express the template defines the primary interface, so the security groups travel on it: EC2
  # refuses them in both places, and EKS adds none to a template that defines interfaces.
  vpc_security_group_ids = var.ena_express ? null : var.security_group_ids

  dynamic "network_interfaces" {
    for_each = var.ena_express ? [true] : []
    content {
      device_index    = 0
      security_groups = var.security_group_ids
      ena_srd_specification {
        ena_srd_enabled = true
        ena_srd_udp_specification {
          ena_srd_udp_enabled = true
        }
      }
    }
  }

  tag_specifications {
    resource_type = "instance"
    tags          = local.tags
  }

  tags                   = local.tags
  update_default_version = true
}

resource "aws_eks_node_group" "this" {
  cluster_name    = var.cluster_name
  node_group_name = var.name
  node_role_arn   = var.node_role_arn
  subnet_ids      = var.subnet_ids
  instance_types  = [for t in local.found_types : t.name]
  ami_type        = local.ami_type
  capacity_type   = "ON_DEMAND"

  scaling_config {
    min_size     = local.scaling.min_size
    max_size     = local.scaling.max_size
    desired_size = local.scaling.desired_size
  }

  update_config {
    max_unavailable_percentage = var.max_unavailable_percentage
  }

  labels = local.labels

  dynamic "taint" {
    for_each = var.taints
    content {
      key    = taint.value.key
      value  = taint.value.value
      effect = taint.value.effect
    }
  }

  launch_template {
    id      = aws_launch_template.this.id
    version = tostring(aws_launch_template.this.latest_version)
  }

  tags = length(local.node_group_tags) > 0 ? local.node_group_tags : null

  lifecycle {
    # The cluster autoscaler (or an operator) owns the node count after creation.
    ignore_changes = [scaling_config[0].desired_size]
  }
}
