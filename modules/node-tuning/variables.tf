# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
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
    condition     = var.objects_json == null || (var.profiles == null && var.image == null && var.namespace == null && !var.pod_monitor && !var.alerts && var.admission_policy && var.outbound == null && var.probe_port == null)
    error_message = "objects_json: given with ${join(", ", compact([var.profiles == null ? "" : "profiles", var.image == null ? "" : "image", var.namespace == null ? "" : "namespace", var.pod_monitor ? "pod_monitor" : "", var.alerts ? "alerts" : "", var.admission_policy ? "" : "admission_policy", var.outbound == null ? "" : "outbound", var.probe_port == null ? "" : "probe_port"]))} is not allowed; allowed: objects_json alone (pass those to wirespeed render node-tuning instead)."
  }
}

variable "outbound" {
  description = <<-EOT
    How the tuned nodes egress, set as the outbound section of every profile so the agent's SNATPortPressure condition
    compares each destination's ports with it: the profile_outbound of modules/aks-outbound or of
    modules/aws-nat-egress (or its -zonal or -regional module), or { kind = "azure-load-balancer",
    allocated_ports_per_node = N } / { kind = "azure-nat-gateway" or "aws-nat-gateway", public_ips = N }, optionally
    pressure_percent (default 80), exclude_cidrs (pod and service CIDRs), hold_seconds (default 240: seconds an
    ended flow still holds its port, for every protocol without its own hold), tcp_hold_seconds (after a TCP flow's
    close) and udp_hold_seconds (after a UDP flow's last packet; the outbound modules set it from the idle timeout of
    what they create). Null: no outbound section, no SNATPortPressure condition.
  EOT
  type = object({
    kind                     = string
    allocated_ports_per_node = optional(number)
    public_ips               = optional(number)
    pressure_percent         = optional(number)
    exclude_cidrs            = optional(list(string), [])
    hold_seconds             = optional(number)
    tcp_hold_seconds         = optional(number)
    udp_hold_seconds         = optional(number)
  })
  default = null

  validation {
    condition     = var.outbound == null ? true : contains(keys(local.wirespeed.outbound.kinds), var.outbound.kind)
    error_message = "outbound: kind ${jsonencode(try(var.outbound.kind, null))} is not allowed; allowed: one of ${join(", ", [for k in keys(local.wirespeed.outbound.kinds) : jsonencode(k)])}."
  }

  validation {
    condition = var.outbound == null ? true : alltrue([for field in ["allocated_ports_per_node", "public_ips"] : (
      try(local.wirespeed.outbound.kinds[var.outbound.kind], field) == field ? true : var.outbound[field] == null
    )])
    error_message = "outbound: ${join("; ", [for field in ["allocated_ports_per_node", "public_ips"] : "${field} ${jsonencode(var.outbound[field])} is not allowed; allowed: ${local.wirespeed.outbound.only_with[field]}" if try(local.wirespeed.outbound.kinds[var.outbound.kind], field) != field && try(var.outbound[field], null) != null])}."
  }

  validation {
    condition     = var.outbound == null ? true : try(var.outbound[local.wirespeed.outbound.kinds[var.outbound.kind]] != null, true)
    error_message = "outbound: ${try(local.wirespeed.outbound.kinds[var.outbound.kind], "the sizing field")} is required with kind ${jsonencode(try(var.outbound.kind, null))}."
  }

  validation {
    condition = try(var.outbound.allocated_ports_per_node, null) == null ? true : (
      var.outbound.allocated_ports_per_node == floor(var.outbound.allocated_ports_per_node) &&
      var.outbound.allocated_ports_per_node % local.wirespeed.outbound.allocated_ports.multiple == 0 &&
      var.outbound.allocated_ports_per_node >= local.wirespeed.outbound.allocated_ports.low &&
      var.outbound.allocated_ports_per_node <= local.wirespeed.outbound.allocated_ports.high
    )
    error_message = "outbound: allocated_ports_per_node ${jsonencode(try(var.outbound.allocated_ports_per_node, null))} is not allowed; allowed: ${local.wirespeed.outbound.allocated_ports.allowed}."
  }

  validation {
    # The range is the kind's (an Azure NAT gateway's 16, an AWS regional gateway's 32 per AZ); another kind refuses
    # public_ips by the rule above.
    condition = try(var.outbound.public_ips, null) == null || try(local.wirespeed.outbound.public_ips[var.outbound.kind], null) == null ? true : (
      var.outbound.public_ips == floor(var.outbound.public_ips) &&
      var.outbound.public_ips >= local.wirespeed.outbound.public_ips[var.outbound.kind].low &&
      var.outbound.public_ips <= local.wirespeed.outbound.public_ips[var.outbound.kind].high
    )
    error_message = "outbound: public_ips ${jsonencode(try(var.outbound.public_ips, null))} is not allowed; allowed: ${try(local.wirespeed.outbound.public_ips[var.outbound.kind].allowed, "")}."
  }

  validation {
    condition = try(var.outbound.pressure_percent, null) == null ? true : (
      var.outbound.pressure_percent == floor(var.outbound.pressure_percent) &&
      var.outbound.pressure_percent >= local.wirespeed.outbound.pressure_percent.low && var.outbound.pressure_percent <= local.wirespeed.outbound.pressure_percent.high
    )
    error_message = "outbound: pressure_percent ${jsonencode(try(var.outbound.pressure_percent, null))} is not allowed; allowed: ${local.wirespeed.outbound.pressure_percent.allowed}."
  }

  validation {
    condition = try(var.outbound.hold_seconds, null) == null ? true : (
      var.outbound.hold_seconds == floor(var.outbound.hold_seconds) &&
      var.outbound.hold_seconds >= local.wirespeed.outbound.hold_seconds.low && var.outbound.hold_seconds <= local.wirespeed.outbound.hold_seconds.high
    )
    error_message = "outbound: hold_seconds ${jsonencode(try(var.outbound.hold_seconds, null))} is not allowed; allowed: ${local.wirespeed.outbound.hold_seconds.allowed}."
  }

  validation {
    condition = try(var.outbound.tcp_hold_seconds, null) == null ? true : (
      var.outbound.tcp_hold_seconds == floor(var.outbound.tcp_hold_seconds) &&
      var.outbound.tcp_hold_seconds >= local.wirespeed.outbound.tcp_hold_seconds.low && var.outbound.tcp_hold_seconds <= local.wirespeed.outbound.tcp_hold_seconds.high
    )
    error_message = "outbound: tcp_hold_seconds ${jsonencode(try(var.outbound.tcp_hold_seconds, null))} is not allowed; allowed: ${local.wirespeed.outbound.tcp_hold_seconds.allowed}."
  }

  validation {
    condition = try(var.outbound.udp_hold_seconds, null) == null ? true : (
      var.outbound.udp_hold_seconds == floor(var.outbound.udp_hold_seconds) &&
      var.outbound.udp_hold_seconds >= local.wirespeed.outbound.udp_hold_seconds.low && var.outbound.udp_hold_seconds <= local.wirespeed.outbound.udp_hold_seconds.high
    )
    error_message = "outbound: udp_hold_seconds ${jsonencode(try(var.outbound.udp_hold_seconds, null))} is not allowed; allowed: ${local.wirespeed.outbound.udp_hold_seconds.allowed}."
  }

  # A CIDR as the profile's model takes it (wirespeed.profile): an address without a zone, a decimal prefix length
  # without leading zeros, IPv4 octets without leading zeros; host bits may be set.
  validation {
    condition     = var.outbound == null ? true : length(var.outbound.exclude_cidrs) <= local.wirespeed.outbound.max_exclude_cidrs && length([for cidr in var.outbound.exclude_cidrs : cidr if !(can(regex("^[^%/]+/(0|[1-9][0-9]{0,2})$", cidr)) && can(cidrhost(cidr, 0)) && (strcontains(cidr, ":") || !can(regex("(^|\\.)0[0-9]", split("/", cidr)[0]))))]) == 0
    error_message = "outbound: exclude_cidrs ${jsonencode(try([for cidr in var.outbound.exclude_cidrs : cidr if !(can(regex("^[^%/]+/(0|[1-9][0-9]{0,2})$", cidr)) && can(cidrhost(cidr, 0)) && (strcontains(cidr, ":") || !can(regex("(^|\\.)0[0-9]", split("/", cidr)[0]))))], []))} is not allowed; allowed: each ${trimprefix(local.wirespeed.outbound.cidr_allowed, "must be ")}, at most ${local.wirespeed.outbound.max_exclude_cidrs} of them."
  }

}

variable "pod_monitor" {
  description = "Also create a Prometheus Operator PodMonitor scraping every agent pod (needs the monitoring.coreos.com/v1 CRDs in the cluster before plan)."
  type        = bool
  default     = false
  nullable    = false
}

variable "probe_port" {
  description = <<-EOT
    Run the agent's continuous probe (agent/README.md, "Continuous probe") serving and dialing this host TCP port
    (the agent's default is 9809): sets a probe section with this port (and the default peers and streams) in every
    profile, and declares the port on each DaemonSet, to allow between nodes in NetworkPolicy and security groups
    (docs/node-tuning.md, "Probe port"). Null: no probe.
  EOT
  type        = number
  default     = null

  validation {
    condition = var.probe_port == null ? true : (
      var.probe_port == floor(var.probe_port) &&
      var.probe_port >= local.wirespeed.probe.port.low &&
      var.probe_port <= local.wirespeed.probe.port.high &&
      var.probe_port != local.wirespeed.probe.metrics_port
    )
    error_message = "probe_port: ${jsonencode(var.probe_port)} is not allowed; allowed: ${local.wirespeed.probe.port.allowed}."
  }
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
