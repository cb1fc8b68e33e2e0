variable "admission_policy" {
  description = <<-EOT
    Create the ValidatingAdmissionPolicy (and binding) that lets the agent change only its own Node's
    wirespeed.io/tuning-status annotation and its conditions (needs Kubernetes 1.30+). false only for an older cluster,
    whose API server refuses it: the agent's RBAC then lets it patch any Node.
  EOT
  type        = bool
  default     = true
  nullable    = false
}

variable "alerts" {
  description = "Also create the wirespeed alert rules as a Prometheus Operator PrometheusRule (needs the monitoring.coreos.com/v1 CRDs in the cluster before plan)."
  type        = bool
  default     = false
  nullable    = false
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
  description = <<-EOT
    Namespace created for the agent and labelled Pod Security "privileged": an RFC 1123 label of the agent's own (not
    default or kube-*). Null for the renderer's default (wirespeed-system).
  EOT
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

variable "objects_json" {
  description = <<-EOT
    For custom profile files: the JSON `wirespeed render node-tuning --profile FILE ... --output json` prints (e.g.
    file("tuning.json")), applied as rendered. Give it alone: the rendered objects already carry their profiles, image,
    namespace and monitoring.
  EOT
  type        = string
  default     = null

  validation {
    condition = var.objects_json == null ? true : try(
      jsondecode(var.objects_json)[0].kind == "Namespace" &&
      alltrue([for o in jsondecode(var.objects_json) : can(o.apiVersion) && o.metadata.name != "" && o.metadata.labels["app.kubernetes.io/part-of"] == "wirespeed"]),
    false)
    error_message = "objects_json: ${jsonencode(try(substr(var.objects_json, 0, 40), null))}... is not allowed; allowed: the JSON array `wirespeed render node-tuning --output json` prints (a Namespace first, every object labelled app.kubernetes.io/part-of=wirespeed)."
  }

  validation {
    condition     = var.objects_json == null || (var.profiles == null && var.image == null && var.namespace == null && !var.pod_monitor && !var.alerts && var.admission_policy)
    error_message = "objects_json: given with ${join(", ", compact([var.profiles == null ? "" : "profiles", var.image == null ? "" : "image", var.namespace == null ? "" : "namespace", var.pod_monitor ? "pod_monitor" : "", var.alerts ? "alerts" : "", var.admission_policy ? "" : "admission_policy"]))} is not allowed; allowed: objects_json alone (pass those to wirespeed render node-tuning instead)."
  }
}

variable "pod_monitor" {
  description = "Also create a Prometheus Operator PodMonitor scraping every agent pod (needs the monitoring.coreos.com/v1 CRDs in the cluster before plan)."
  type        = bool
  default     = false
  nullable    = false
}

variable "profiles" {
  description = <<-EOT
    Built-in tuning profiles, one DaemonSet each on the nodes labelled wirespeed.io/profile=<name>, in this order. Null
    for the renderer's default (["throughput"]). Custom profile files: see the README.
  EOT
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
