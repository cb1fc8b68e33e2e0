variable "profiles" {
  description = "Built-in tuning profiles, one DaemonSet each on the nodes labelled wirespeed.io/profile=<name>, in this order. Null for the renderer's default ([\"throughput\"]). Custom profile files: see the README."
  type        = list(string)
  default     = null

  validation {
    condition     = var.profiles == null ? true : length(var.profiles) >= 1
    error_message = "profiles: [] is not allowed; allowed: at least one profile (built-in: ${join(", ", local.wirespeed.builtin_profiles)})."
  }

  validation {
    condition     = alltrue([for name in var.profiles == null ? [] : var.profiles : contains(local.wirespeed.builtin_profiles, name)])
    error_message = "profiles: ${jsonencode([for name in var.profiles == null ? [] : var.profiles : name if !contains(local.wirespeed.builtin_profiles, name)])} is not allowed; allowed: built-in profile names (${join(", ", local.wirespeed.builtin_profiles)})."
  }

  validation {
    condition     = var.profiles == null ? true : length(distinct(var.profiles)) == length(var.profiles)
    error_message = "profiles: ${jsonencode(var.profiles == null ? [] : distinct([for i, name in var.profiles : name if contains(slice(var.profiles, 0, i), name)]))} is not allowed more than once; allowed: each profile name at most once (two DaemonSets selecting one wirespeed.io/profile label would fight over the same nodes)."
  }
}

variable "image" {
  description = "Agent image with a tag or digest (REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:HEX). Null for the image of the wirespeed release the manifests were generated from."
  type        = string
  default     = null

  validation {
    condition     = var.image == null ? true : try(regex(local.wirespeed.image_pattern, var.image).tag != null || regex(local.wirespeed.image_pattern, var.image).digest != null, false)
    error_message = "image: ${jsonencode(var.image)} is not allowed; allowed: ${local.wirespeed.image_allowed}."
  }
}

variable "namespace" {
  description = "Namespace created for the agent and labelled Pod Security \"privileged\": an RFC 1123 label of the agent's own (not default or kube-*). Null for the renderer's default (wirespeed-system)."
  type        = string
  default     = null

  validation {
    condition     = var.namespace == null ? true : can(regex(local.wirespeed.namespace_pattern, var.namespace))
    error_message = "namespace: ${jsonencode(var.namespace)} is not allowed; allowed: ${local.wirespeed.namespace_allowed}."
  }

  validation {
    condition     = !contains(local.wirespeed.shared_namespaces, coalesce(var.namespace, local.wirespeed.default_namespace))
    error_message = "namespace: ${jsonencode(var.namespace)} is not allowed; allowed: a namespace of the agent's own, not one shared with other workloads (${join(", ", local.wirespeed.shared_namespaces)})."
  }
}

variable "pod_monitor" {
  description = "Also create a Prometheus Operator PodMonitor scraping every agent pod (needs the monitoring.coreos.com/v1 CRDs in the cluster before plan)."
  type        = bool
  default     = false
  nullable    = false
}

variable "alerts" {
  description = "Also create the wirespeed alert rules as a Prometheus Operator PrometheusRule (needs the monitoring.coreos.com/v1 CRDs in the cluster before plan)."
  type        = bool
  default     = false
  nullable    = false
}
