variable "cluster_name" {
  description = "Name of an existing EKS cluster (creating the control plane is out of scope)."
  type        = string
}

variable "name" {
  description = "Node group name in EKS (also the launch template's name prefix)."
  type        = string
}

variable "node_role_arn" {
  description = "IAM role the nodes run as (AmazonEKSWorkerNodePolicy, AmazonEC2ContainerRegistryReadOnly, the CNI policy)."
  type        = string
}

variable "subnet_ids" {
  description = "Private subnets, one per AZ the group spans (their route to the internet: modules/aws-nat-egress)."
  type        = list(string)
}

variable "agent_image" {
  description = <<-EOT
    The wirespeed agent image (tag or digest) Bottlerocket nodes run as a bootstrap container to set NIC rings and
    MTU before kubelet starts; give the image modules/node-tuning runs. Null for the image of the wirespeed release
    this module was generated from. Unused on AL2023 (its boot script tunes).
  EOT
  type        = string
  default     = null

  validation {
    condition     = var.agent_image == null ? true : try(regex(local.node_group_facts.image_pattern, var.agent_image).tag != null || regex(local.node_group_facts.image_pattern, var.agent_image).digest != null, false)
    error_message = "agent_image: '${coalesce(var.agent_image, "null")}' is not allowed; allowed: ${local.node_group_facts.image_allowed}"
  }
}

variable "desired_size" {
  description = "Initial node count, min_size..max_size; later changes by the autoscaler are kept (ignore_changes). Default: min_size."
  type        = number
  default     = null

  validation {
    condition     = var.desired_size == null || try(var.desired_size == floor(var.desired_size) && var.desired_size >= local.low && var.desired_size <= local.high, false)
    error_message = "desired_size: ${coalesce(var.desired_size, 0)} is not allowed; allowed: a whole number from ${local.low} to ${local.high}"
  }
}

variable "ena_express" {
  description = <<-EOT
    ENA Express (SRD) on the primary interface: every type must support it. The profile becomes <profile>-ena-express
    (RX ring 8,192, MTU 8,900 on ENA links, AWS guidance). Needs security_group_ids.
  EOT
  type        = bool
  default     = false
}

variable "instance_types" {
  description = <<-EOT
    EC2 types, 1..20, all in wirespeed's catalog: network-optimised (c6in, c7gn, m6in, ...) unless
    not_network_optimised_reason says why not; one architecture; one ring class (all above, or all at most, 25 Gb/s
    sustained).
  EOT
  type        = list(string)
  default     = ["c6in.8xlarge"]

  validation {
    condition     = length(var.instance_types) > 0
    error_message = "instance_types: [] is not allowed; allowed: a non-empty list of EC2 instance type names, e.g. ['c6in.8xlarge']"
  }

  validation {
    condition     = length(var.instance_types) <= local.node_group_facts.max_instance_types
    error_message = "instance_types: [${join(", ", [for n in var.instance_types : "'${n}'"])}] is not allowed; allowed: at most ${local.node_group_facts.max_instance_types} types (EKS limit)"
  }

  validation {
    condition     = alltrue([for n in var.instance_types : contains(keys(local.aws_instance_types), lower(trimspace(n)))])
    error_message = join("\n", [for i, n in var.instance_types : "instance_types[${i}]: '${n}' is not allowed; allowed: an AWS instance type from the catalog (`wirespeed catalog list --cloud aws`)" if !contains(keys(local.aws_instance_types), lower(trimspace(n)))])
  }

  validation {
    condition     = try(length(var.not_network_optimised_reason) > 0, false) || alltrue([for n in var.instance_types : try(local.aws_instance_types[lower(trimspace(n))].network_optimised, true)])
    error_message = join("\n", [for i, n in var.instance_types : "instance_types[${i}]: '${lower(trimspace(n))}' is not allowed; allowed: a network-optimised type (e.g. ${local.aws_instance_types[lower(trimspace(n))].alternatives}), or give not_network_optimised_reason" if !try(local.aws_instance_types[lower(trimspace(n))].network_optimised, true)])
  }

  validation {
    condition     = !var.ena_express || alltrue([for n in var.instance_types : try(local.aws_instance_types[lower(trimspace(n))].ena_express, true)])
    error_message = join("\n", [for i, n in var.instance_types : "instance_types[${i}]: '${lower(trimspace(n))}' is not allowed; allowed: a type that supports ENA Express (EnaSrdSupported), or ena_express = false" if !try(local.aws_instance_types[lower(trimspace(n))].ena_express, true)])
  }

  validation {
    condition     = length(distinct(compact([for n in var.instance_types : try(local.aws_instance_types[lower(trimspace(n))].architecture, "")]))) <= 1
    error_message = "instance_types: [${join(", ", [for n in var.instance_types : "'${lower(trimspace(n))}'" if contains(keys(local.aws_instance_types), lower(trimspace(n)))])}] is not allowed; allowed: one architecture per node pool (one AMI): ${join(" or ", sort(distinct(compact([for n in var.instance_types : try(local.aws_instance_types[lower(trimspace(n))].architecture, "")]))))}"
  }

  validation {
    condition     = length(distinct(compact([for n in var.instance_types : try(local.aws_instance_types[lower(trimspace(n))].ring_class, "")]))) <= 1
    error_message = "instance_types: [${join(", ", [for n in var.instance_types : "'${lower(trimspace(n))}'" if contains(keys(local.aws_instance_types), lower(trimspace(n)))])}] is not allowed; allowed: types that share one ring profile (sustained bandwidth all above or all at most ${local.node_group_facts.balanced_max_gbps} Gb/s); split them into node pools: ${join("; ", [for c in sort(distinct(compact([for n in var.instance_types : try(local.aws_instance_types[lower(trimspace(n))].ring_class, "")]))) : "${c}: ${join(", ", [for n in var.instance_types : lower(trimspace(n)) if try(local.aws_instance_types[lower(trimspace(n))].ring_class, "") == c])}"])}"
  }
}

variable "labels" {
  description = "Extra Kubernetes node labels. wirespeed.io/profile is always set to the profile's name."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for k, v in var.labels : can(regex(local.node_group_facts.label_key_pattern, k))])
    error_message = join("\n", [for k, v in var.labels : "labels['${k}']: '${k}' is not allowed; allowed: a Kubernetes label key ([prefix/]name)" if !can(regex(local.node_group_facts.label_key_pattern, k))])
  }

  validation {
    condition     = alltrue([for k, v in var.labels : can(regex(local.node_group_facts.label_value_pattern, v)) if can(regex(local.node_group_facts.label_key_pattern, k))])
    error_message = join("\n", [for k, v in var.labels : "labels['${k}']: '${v}' is not allowed; allowed: a Kubernetes label value (63 characters or fewer)" if can(regex(local.node_group_facts.label_key_pattern, k)) && !can(regex(local.node_group_facts.label_value_pattern, v))])
  }

  validation {
    condition     = !contains(keys(var.labels), local.node_group_facts.profile_label) || lookup(var.labels, local.node_group_facts.profile_label, "") == local.profile_name
    error_message = "labels['${local.node_group_facts.profile_label}']: '${lookup(var.labels, local.node_group_facts.profile_label, "")}' is not allowed; allowed: left out: wirespeed sets it to the profile's name"
  }
}

variable "max_size" {
  description = "Autoscaling maximum, 1..450 (EKS quota per managed node group)."
  type        = number
  default     = 3

  validation {
    condition     = try(var.max_size == floor(var.max_size) && var.max_size >= 1 && var.max_size <= local.node_group_facts.max_nodes, false)
    error_message = "max_size: ${var.max_size} is not allowed; allowed: a whole number from 1 to ${local.node_group_facts.max_nodes}"
  }
}

variable "max_unavailable_percentage" {
  description = "update_config.max_unavailable_percentage, 1..100: the share of nodes replaced at once on an update."
  type        = number
  default     = 10

  validation {
    condition     = var.max_unavailable_percentage == floor(var.max_unavailable_percentage) && var.max_unavailable_percentage >= 1 && var.max_unavailable_percentage <= 100
    error_message = "max_unavailable_percentage: ${var.max_unavailable_percentage} is not allowed; allowed: a whole number from 1 to 100"
  }
}

variable "min_size" {
  description = "Autoscaling minimum, 0..max_size."
  type        = number
  default     = 1

  validation {
    condition     = try(var.min_size == floor(var.min_size) && var.min_size >= 0 && var.min_size <= local.node_group_facts.max_nodes, false)
    error_message = "min_size: ${var.min_size} is not allowed; allowed: a whole number from 0 to ${local.node_group_facts.max_nodes}"
  }

  validation {
    condition     = (try(var.min_size == floor(var.min_size) && var.min_size >= 0 && var.min_size <= local.node_group_facts.max_nodes, false) ? var.min_size : 0) <= local.high
    error_message = "min_size: ${var.min_size} is not allowed; allowed: at most max_size (${local.high})"
  }
}

variable "not_network_optimised_reason" {
  description = <<-EOT
    Why types outside the network-optimised families are acceptable here; without it they are refused. At most 256
    characters: recorded on the node group, the launch template and the instances as the tag the policy rule
    network-optimised-sku reads.
  EOT
  type        = string
  default     = null

  validation {
    condition     = try(trimspace(var.not_network_optimised_reason) != "", var.not_network_optimised_reason == null)
    error_message = "not_network_optimised_reason: '${coalesce(var.not_network_optimised_reason, " ")}' is not allowed; allowed: a non-empty sentence saying why"
  }

  validation {
    condition     = try(length(trimspace(var.not_network_optimised_reason)) <= local.node_group_facts.reason_max_length, true)
    error_message = "not_network_optimised_reason: '${try(length(trimspace(var.not_network_optimised_reason)), 0)} characters' is not allowed; allowed: at most ${local.node_group_facts.reason_max_length} characters (it is recorded as an AWS tag, whose values hold 256)"
  }
}

variable "operating_system" {
  description = "al2023 (the boot script tunes sysctls, rings and MTU) or bottlerocket (sysctls through settings.kernel.sysctl; rings and MTU by agent_image as a bootstrap container before kubelet)."
  type        = string
  default     = "al2023"

  validation {
    condition     = contains(local.node_group_facts.operating_systems, var.operating_system)
    error_message = "operating_system: '${var.operating_system}' is not allowed; allowed: one of ${join(", ", local.node_group_facts.operating_systems)}"
  }
}

variable "profile" {
  description = "Tuning profile: a built-in name (throughput, balanced). With ena_express the nodes apply <profile>-ena-express."
  type        = string
  default     = "throughput"

  validation {
    condition     = contains(local.node_group_facts.profiles, var.profile)
    error_message = "profile: '${var.profile}' is not allowed; allowed: a built-in profile name (${join(", ", local.node_group_facts.profiles)})"
  }
}

variable "security_group_ids" {
  description = "Security groups for the nodes (normally the cluster security group). Required with ena_express: the launch template then defines the network interface and EKS adds none."
  type        = list(string)
  default     = null

  validation {
    condition     = !(var.ena_express && var.security_group_ids == null)
    error_message = "security_group_ids: null is not allowed; allowed: the node security groups (e.g. the cluster security group): with ena_express the launch template defines the network interface, and EKS then adds none"
  }
}

variable "tags" {
  description = "AWS tags on the node group, the launch template and the instances."
  type        = map(string)
  default     = {}
}

variable "taints" {
  description = "Node taints: key, optional value, effect in EKS's spelling (NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE)."
  type = list(object({
    key    = string
    value  = optional(string)
    effect = optional(string, "NO_SCHEDULE")
  }))
  default = []

  validation {
    condition     = alltrue([for t in var.taints : can(regex(local.node_group_facts.label_key_pattern, t.key))])
    error_message = join("\n", [for i, t in var.taints : "taints[${i}].key: '${t.key}' is not allowed; allowed: a Kubernetes taint key ([prefix/]name)" if !can(regex(local.node_group_facts.label_key_pattern, t.key))])
  }

  validation {
    condition     = alltrue([for t in var.taints : contains(local.node_group_facts.taint_effects, t.effect)])
    error_message = join("\n", [for i, t in var.taints : "taints[${i}].effect: '${t.effect}' is not allowed; allowed: one of ${join(", ", local.node_group_facts.taint_effects)}" if !contains(local.node_group_facts.taint_effects, t.effect)])
  }

  validation {
    condition     = alltrue([for t in var.taints : t.value == null || can(regex(local.node_group_facts.label_value_pattern, coalesce(t.value, "x")))])
    error_message = join("\n", [for i, t in var.taints : "taints[${i}].value: '${t.value}' is not allowed; allowed: a taint value (63 characters or fewer)" if t.value != null && !can(regex(local.node_group_facts.label_value_pattern, coalesce(t.value, "x")))])
  }
}
