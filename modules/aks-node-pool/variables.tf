variable "name" {
  description = "AKS pool name: 1-12 lowercase letters and digits, starting with a letter; unique in the cluster."
  type        = string

  validation {
    condition     = can(regex(local.pool_facts.name_pattern, var.name))
    error_message = "name: '${var.name}' is not allowed: 1-12 lowercase letters and digits, starting with a letter (AKS pool name)"
  }
}

variable "vm_size" {
  description = <<-EOT
    Azure VM size, e.g. Standard_D16s_v6 (Standard_ prefix and case optional). Refused unless in wirespeed's catalog and
    network-optimised (a v6 MANA size), or not_network_optimised_reason says why this pool may use another. Create-only.
  EOT
  type        = string

  validation {
    condition     = contains(keys(local.catalog.sizes), templatestring(local.size_key_template, { name = var.vm_size }))
    error_message = "vm_size: '${var.vm_size}' is not allowed: not in wirespeed's catalog, so accelerated networking cannot be confirmed (unknown instance type '${var.vm_size}': `wirespeed catalog list` shows every known type)"
  }

  validation {
    condition     = try(local.catalog.sizes[templatestring(local.size_key_template, { name = var.vm_size })].network_optimised, true) || var.not_network_optimised_reason != null
    error_message = "vm_size: ${try(coalesce(local.catalog.sizes[templatestring(local.size_key_template, { name = var.vm_size })].not_network_optimised), "")}"
  }
}

variable "extra_sysctls" {
  description = <<-EOT
    More sysctls for AKS to set at node creation, by kernel name (net.core.somaxconn = 32768), within AKS's ranges
    (profiles.tf.json, from wirespeed.sizing.aks_sysctls). net.ipv4.ip_local_port_range is "FIRST LAST". A name the
    profile already sets is refused. Create-only.
  EOT
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for k, v in var.extra_sysctls : !contains(keys(local.profile.aks_sysctls), k)])
    error_message = join("; ", [for k, v in var.extra_sysctls : "extra_sysctls['${k}']: ${v} is not allowed: profile '${var.profile}' already sets ${k} to ${local.profile.aks_sysctls[k]}" if contains(keys(local.profile.aks_sysctls), k)])
  }

  validation {
    condition     = alltrue([for k, v in var.extra_sysctls : contains(keys(local.aks_sysctls), k)])
    error_message = join("; ", [for k, v in var.extra_sysctls : "extra_sysctls['${k}']: '${k}' is not a sysctl AKS sets at node creation; supported: ${join(", ", local.pool_facts.supported_sysctls)}" if !contains(keys(local.aks_sysctls), k)])
  }

  validation {
    condition = alltrue([for k, v in var.extra_sysctls : (
      !contains(keys(local.aks_sysctls), k) || k == "net.ipv4.ip_local_port_range" || contains(keys(local.profile.aks_sysctls), k) ||
      try(can(regex("^[0-9]+$", v)) && tonumber(v) >= local.aks_sysctls[k].low && tonumber(v) <= local.aks_sysctls[k].high, false)
    )])
    error_message = join("; ", [for k, v in var.extra_sysctls : "extra_sysctls['${k}']: ${can(tonumber(v)) ? v : "'${v}'"} is not allowed: ${local.aks_sysctls[k].allowed}" if !(
      !contains(keys(local.aks_sysctls), k) || k == "net.ipv4.ip_local_port_range" || contains(keys(local.profile.aks_sysctls), k) ||
      try(can(regex("^[0-9]+$", v)) && tonumber(v) >= local.aks_sysctls[k].low && tonumber(v) <= local.aks_sysctls[k].high, false)
    )])
  }

  validation {
    condition = alltrue([for k, v in var.extra_sysctls : k != "net.ipv4.ip_local_port_range" || contains(keys(local.profile.aks_sysctls), k) || try(
      tonumber(split(" ", v)[0]) >= local.aks_sysctls[k].first[0] && tonumber(split(" ", v)[0]) <= local.aks_sysctls[k].first[1] &&
      tonumber(split(" ", v)[1]) >= local.aks_sysctls[k].last[0] && tonumber(split(" ", v)[1]) <= local.aks_sysctls[k].last[1] &&
      tonumber(split(" ", v)[0]) < tonumber(split(" ", v)[1]) && can(regex("^[0-9]+ [0-9]+$", v)),
      false
    )])
    error_message = join("; ", [for k, v in var.extra_sysctls : "extra_sysctls['${k}']: '${v}' is not allowed: ${local.aks_sysctls[k].allowed}" if k == "net.ipv4.ip_local_port_range" && !contains(keys(local.profile.aks_sysctls), k)])
  }
}

variable "kubernetes_cluster_id" {
  description = "ID of the azurerm_kubernetes_cluster the pool joins. Required, except for the system pool (system_pool = true), which the cluster itself is built from."
  type        = string
  default     = null

  validation {
    condition     = var.system_pool || var.kubernetes_cluster_id != null
    error_message = "kubernetes_cluster_id: null is not allowed: the ID of the azurerm_kubernetes_cluster the pool joins (required unless system_pool is true)"
  }
}

variable "labels" {
  description = "Extra node labels. wirespeed.io/profile is added; setting it to another value than the profile's name is refused (the tuning DaemonSet selects nodes by it)."
  type        = map(string)
  default     = {}

  validation {
    condition     = !local.profile_valid || lookup(var.labels, local.pool_facts.profile_label, var.profile) == var.profile
    error_message = "labels['${local.pool_facts.profile_label}']: '${lookup(var.labels, local.pool_facts.profile_label, "")}' is not allowed: it must equal the pool's profile '${var.profile}' (the DaemonSet selects nodes by it); leave it out and it is set for you"
  }
}

variable "max_count" {
  description = "Autoscaler maximum, 1..1,000. Counted in outbound sizing (modules/aks-outbound) with max_surge."
  type        = number
  default     = 3

  validation {
    condition     = var.max_count == floor(var.max_count) && var.max_count >= 1 && var.max_count <= local.pool_facts.max_pool_nodes
    error_message = "max_count: ${var.max_count} is not allowed: ${local.pool_facts.allowed.max_count}"
  }
}

variable "max_pods" {
  description = "Pods per node, 10..250. Default null (AKS's default for the network plugin). Create-only."
  type        = number
  default     = null

  validation {
    condition     = var.max_pods == null || try(var.max_pods == floor(var.max_pods) && var.max_pods >= local.pool_facts.max_pods[0] && var.max_pods <= local.pool_facts.max_pods[1], false)
    error_message = "max_pods: ${coalesce(var.max_pods, 0)} is not allowed: ${local.pool_facts.allowed.max_pods}"
  }
}

variable "max_surge" {
  description = <<-EOT
    Extra nodes during an upgrade: a node count ("2", 1..max_count) or a percent of the pool ("10%", above 0 up to 100,
    rounded up). Default "10%" (the AKS API default). Not 0: max_unavailable stays 0 and AKS refuses both at 0.
  EOT
  type        = string
  default     = "10%"

  validation {
    condition = (
      can(regex("^[0-9]+(\\.[0-9]+)?%$", trimspace(var.max_surge))) ? try(tonumber(trimsuffix(trimspace(var.max_surge), "%")) > 0 && tonumber(trimsuffix(trimspace(var.max_surge), "%")) <= 100, false) :
      can(regex("^[0-9]+$", trimspace(var.max_surge))) ? try(tonumber(trimspace(var.max_surge)) >= 1 && (tonumber(trimspace(var.max_surge)) <= var.max_count || !local.max_count_valid), false) : false
    )
    error_message = "max_surge: '${var.max_surge}' is not allowed: a node count from 1 to max_count${local.max_count_valid ? " (${var.max_count})" : ""} or a percent above 0% up to 100% (e.g. '1' or '10%')"
  }
}

variable "min_count" {
  description = "Autoscaler minimum, 0..1,000 (1..1,000 for the system pool); at most max_count. Equal to max_count: a fixed-size pool (autoscaling off)."
  type        = number
  default     = 1

  validation {
    condition     = var.min_count == floor(var.min_count) && var.min_count >= (var.system_pool ? local.pool_facts.system_min_count : 0) && var.min_count <= local.pool_facts.max_pool_nodes
    error_message = "min_count: ${var.min_count} is not allowed: ${var.system_pool ? local.pool_facts.allowed.system_min_count : local.pool_facts.allowed.min_count}"
  }

  validation {
    condition     = !(var.min_count == floor(var.min_count) && var.min_count >= 0 && local.max_count_valid && var.min_count > var.max_count)
    error_message = "min_count: ${var.min_count} is not allowed: must be at most max_count (${var.max_count}) (autoscaler range min..max)"
  }
}

variable "not_network_optimised_reason" {
  description = <<-EOT
    Why this pool may use a size that is not network-optimised (e.g. "GPU pool, egress is light"). Default null: such
    sizes are refused. Non-empty text of at most 256 characters when given; recorded on the pool as the tag the policy
    rule network-optimised-sku reads (output tags).
  EOT
  type        = string
  default     = null

  validation {
    condition     = var.not_network_optimised_reason == null || trimspace(coalesce(var.not_network_optimised_reason, " ")) != ""
    error_message = "not_network_optimised_reason: '${coalesce(var.not_network_optimised_reason, " ")}' is not allowed: a written reason (non-empty text) or null"
  }

  validation {
    condition     = try(length(trimspace(var.not_network_optimised_reason)) <= local.pool_facts.reason_max_length, true)
    error_message = "not_network_optimised_reason: a reason of ${try(length(trimspace(var.not_network_optimised_reason)), 0)} characters is not allowed: at most ${local.pool_facts.reason_max_length} (it is recorded as a tag on the pool, and Azure tag values hold at most 256)"
  }
}

variable "orchestrator_version" {
  description = "Kubernetes version of the pool's nodes; default null (the cluster's)."
  type        = string
  default     = null
}

variable "os_sku" {
  description = "Node OS: Ubuntu (default), Ubuntu2204, AzureLinux or AzureLinux3. Windows is refused: the tuning agent and linux_os_config are Linux-only."
  type        = string
  default     = "Ubuntu"

  validation {
    condition     = contains(local.pool_facts.os_skus, var.os_sku)
    error_message = "os_sku: '${var.os_sku}' is not allowed: one of ${join(", ", local.pool_facts.os_skus)} (Linux: the tuning agent and linuxOSConfig are Linux-only)"
  }
}

variable "profile" {
  description = <<-EOT
    Built-in tuning profile (throughput, balanced). Default throughput. Sets the node label wirespeed.io/profile and the
    sysctls AKS can set at node creation (linux_os_config), as profiles.tf.json (generated from wirespeed.profiles)
    holds them.
  EOT
  type        = string
  default     = "throughput"

  validation {
    condition     = contains(keys(local.wirespeed_profiles), var.profile)
    error_message = "profile: '${var.profile}' is not allowed: '${var.profile}' is not a built-in profile: ${join(", ", sort(keys(local.wirespeed_profiles)))}"
  }
}

variable "system_pool" {
  description = <<-EOT
    true: this is the cluster's system pool, which azurerm builds inside azurerm_kubernetes_cluster (default_node_pool),
    not as a resource of its own. The module then creates nothing and outputs default_node_pool, the block's values;
    min_count is then at least 1 (AKS keeps a system pool running). Default false: a user pool
    (azurerm_kubernetes_cluster_node_pool).
  EOT
  type        = bool
  default     = false
  nullable    = false
}

variable "tags" {
  description = "Azure tags for the pool's scale set."
  type        = map(string)
  default     = {}
}

variable "taints" {
  description = "Node taints as KEY[=VALUE]:EFFECT (EFFECT NoSchedule, PreferNoSchedule or NoExecute). Default none. The tuning DaemonSet tolerates every taint."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for t in var.taints : can(regex(local.taint_pattern, t))])
    error_message = join("; ", [for i, t in var.taints : "taints[${i}]: '${t}' is not allowed: KEY[=VALUE]:EFFECT with EFFECT one of ${join(", ", local.pool_facts.taint_effects)}" if !can(regex(local.taint_pattern, t))])
  }

  # Terraform only (Python's system pool takes taints): azurerm's default_node_pool block has no node_taints
  # (azurerm 5.2.0 schema, `terraform providers schema -json`), so they could not reach the nodes.
  validation {
    condition     = !var.system_pool || length(var.taints) == 0
    error_message = "taints: ${jsonencode(var.taints)} is not allowed with system_pool = true: azurerm's default_node_pool cannot set node taints (only_critical_addons_enabled on the cluster's block gives the CriticalAddonsOnly taint); leave taints empty"
  }
}

variable "vnet_subnet_id" {
  description = "Subnet for the nodes; default null (the cluster's default)."
  type        = string
  default     = null
}

variable "zones" {
  description = "Availability zones, each of \"1\", \"2\", \"3\", at most once. Default none (regional). Create-only."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for z in var.zones : contains(local.pool_facts.zones, z)])
    error_message = join("; ", [for i, z in var.zones : "zones[${i}]: '${z}' is not allowed: one of ${join(", ", local.pool_facts.zones)}" if !contains(local.pool_facts.zones, z)])
  }

  validation {
    condition     = length(distinct(var.zones)) == length(var.zones)
    error_message = "zones: [${join(", ", [for z in var.zones : "'${z}'"])}] is not allowed: each zone at most once"
  }
}
