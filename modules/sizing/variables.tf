# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
variable "allocated_outbound_ports" {
  description = "Explicit SNAT ports per node (a multiple of 8, 8..64,000). Give this or workload, not both."
  type        = number
  default     = null

  validation {
    condition     = var.allocated_outbound_ports == null ? true : try(var.allocated_outbound_ports % local.facts.port_granularity == 0 && var.allocated_outbound_ports >= local.facts.port_granularity && var.allocated_outbound_ports <= local.facts.max_ports_per_node, false)
    error_message = "allocated_outbound_ports: ${var.allocated_outbound_ports == null ? "null" : var.allocated_outbound_ports} is not allowed: must be a multiple of ${local.facts.port_granularity} between ${local.facts.port_granularity} and ${local.facts.max_ports_per_node}."
  }

  validation {
    condition     = var.pools == null ? var.allocated_outbound_ports == null && var.workload == null : (var.allocated_outbound_ports == null) != (var.workload == null)
    error_message = "allocated_outbound_ports: ${var.allocated_outbound_ports == null ? "null" : var.allocated_outbound_ports} is not allowed: give exactly one of allocated_outbound_ports or workload, and only with pools."
  }
}

variable "aws_nat_gateway_connections" {
  description = "Peak concurrent connections from one AZ through an AWS NAT gateway to its busiest destination, 1..1,000,000,000; null to skip."
  type        = number
  default     = null

  validation {
    condition     = var.aws_nat_gateway_connections == null ? true : try(var.aws_nat_gateway_connections == floor(var.aws_nat_gateway_connections) && var.aws_nat_gateway_connections >= 1 && var.aws_nat_gateway_connections <= local.facts.max_nat_demand, false)
    error_message = "aws_nat_gateway_connections (connections): ${var.aws_nat_gateway_connections == null ? "null" : var.aws_nat_gateway_connections} is not allowed: must be a whole number between 1 and ${local.facts.max_nat_demand}."
  }
}

variable "aws_nat_gateway_mode" {
  description = "The AWS NAT gateway's availability mode: zonal (one AZ, at most 8 IPs) or regional (at most 32 IPs per AZ)."
  type        = string
  default     = "zonal"
  nullable    = false

  validation {
    condition     = contains(local.facts.aws_nat_modes, var.aws_nat_gateway_mode)
    error_message = "aws_nat_gateway_mode (mode): '${var.aws_nat_gateway_mode}' is not allowed: ${join(" or ", [for m in local.facts.aws_nat_modes : "'${m}'"])}."
  }
}

variable "azure_nat_gateway_flows" {
  description = "Concurrent outbound flows of all nodes through an Azure NAT gateway (AKS managedNATGateway), 1..1,000,000,000; null to skip."
  type        = number
  default     = null

  validation {
    condition     = var.azure_nat_gateway_flows == null ? true : try(var.azure_nat_gateway_flows == floor(var.azure_nat_gateway_flows) && var.azure_nat_gateway_flows >= 1 && var.azure_nat_gateway_flows <= local.facts.max_nat_demand, false)
    error_message = "azure_nat_gateway_flows (flows): ${var.azure_nat_gateway_flows == null ? "null" : var.azure_nat_gateway_flows} is not allowed: must be a whole number between 1 and ${local.facts.max_nat_demand}."
  }
}

variable "backlog" {
  description = <<-EOT
    net.core.netdev_max_backlog sizing: line_rate_gbps (0.001..800), stall_ms the backlog must absorb (0.001..1,000,
    default 4) and packet_bytes (IP length, 64..9,216, default 1,500); null to skip.
  EOT
  type = object({
    line_rate_gbps = number
    stall_ms       = optional(number)
    packet_bytes   = optional(number)
  })
  default = null

  validation {
    condition     = var.backlog == null ? true : try(var.backlog.line_rate_gbps >= local.facts.packet_ranges.line_rate_gbps[0] && var.backlog.line_rate_gbps <= local.facts.packet_ranges.line_rate_gbps[1], false)
    error_message = "backlog.line_rate_gbps: ${try(var.backlog.line_rate_gbps == null ? "null" : var.backlog.line_rate_gbps, "null")} is not allowed: must be between ${local.facts.packet_ranges.line_rate_gbps[0]} and ${local.facts.packet_ranges.line_rate_gbps[1]}."
  }

  validation {
    condition     = try(var.backlog.stall_ms, null) == null ? true : try(var.backlog.stall_ms >= local.facts.packet_ranges.stall_ms[0] && var.backlog.stall_ms <= local.facts.packet_ranges.stall_ms[1], false)
    error_message = "backlog.stall_ms: ${try(var.backlog.stall_ms == null ? "null" : var.backlog.stall_ms, "null")} is not allowed: must be between ${local.facts.packet_ranges.stall_ms[0]} and ${local.facts.packet_ranges.stall_ms[1]}."
  }

  validation {
    condition     = try(var.backlog.packet_bytes, null) == null ? true : try(var.backlog.packet_bytes == floor(var.backlog.packet_bytes) && var.backlog.packet_bytes >= local.facts.packet_ranges.packet_bytes[0] && var.backlog.packet_bytes <= local.facts.packet_ranges.packet_bytes[1], false)
    error_message = "backlog.packet_bytes: ${try(var.backlog.packet_bytes == null ? "null" : var.backlog.packet_bytes, "null")} is not allowed: must be a whole number between ${local.facts.packet_ranges.packet_bytes[0]} and ${local.facts.packet_ranges.packet_bytes[1]}."
  }
}

variable "outbound_ips" {
  description = "A fixed managed outbound IP count (1..100) to check instead of minimising; the plan then reports feasible."
  type        = number
  default     = null

  validation {
    condition     = var.outbound_ips == null ? true : try(var.outbound_ips == floor(var.outbound_ips) && var.outbound_ips >= 1 && var.outbound_ips <= local.facts.max_outbound_ips, false)
    error_message = "outbound_ips: ${var.outbound_ips == null ? "null" : var.outbound_ips} is not allowed: must be a whole number between 1 and ${local.facts.max_outbound_ips}."
  }
}

variable "pools" {
  description = <<-EOT
    Node pools behind the Azure load balancer: max_count (1..1,000) and max_surge, a node count ("2") or a percent of
    max_count ("10%", AKS's default; rounded up). Null for NAT gateway sizing only (the load balancer outputs are then
    null).
  EOT
  type = list(object({
    max_count = number
    max_surge = optional(string, "10%")
  }))
  default = null

  validation {
    condition     = var.pools == null ? true : length(var.pools) >= 1
    error_message = "pools: [] is not allowed: at least one pool."
  }

  validation {
    condition     = alltrue([for p in coalesce(var.pools, []) : p.max_count == floor(p.max_count) && p.max_count >= 1 && p.max_count <= local.facts.max_pool_nodes])
    error_message = "pools[*].max_count: ${jsonencode([for p in coalesce(var.pools, []) : p.max_count])} is not allowed: must be a whole number between 1 and ${local.facts.max_pool_nodes} (AKS nodes per pool)."
  }

  validation {
    condition = alltrue([for p in coalesce(var.pools, []) : (
      can(regex("^[0-9]+$", trimspace(p.max_surge))) ? tonumber(trimspace(p.max_surge)) <= local.facts.max_pool_nodes :
      can(regex("^[0-9]+(\\.[0-9]+)?%$", trimspace(p.max_surge))) ? tonumber(trimsuffix(trimspace(p.max_surge), "%")) <= local.facts.max_surge_percent : false
    )])
    error_message = "pools[*].max_surge: ${jsonencode([for p in coalesce(var.pools, []) : p.max_surge])} is not allowed: must be a node count between 0 and ${local.facts.max_pool_nodes} or a percent between 0% and ${local.facts.max_surge_percent}%, e.g. \"2\" or \"10%\"."
  }

  validation {
    condition     = sum(concat([0], [for p in coalesce(var.pools, []) : p.max_count])) <= local.facts.max_cluster_nodes
    error_message = "pools: ${sum(concat([0], [for p in coalesce(var.pools, []) : p.max_count]))} nodes at maxCount is not allowed: AKS allows at most ${local.facts.max_cluster_nodes} nodes per cluster across all node pools."
  }
}

variable "rings" {
  description = <<-EOT
    NIC ring sizing, as wirespeed.sizing.rings: driver (as ethtool -i names it; one with rings in facts.tf.json's
    nic_drivers, generated from wirespeed's nic_drivers.json), line_rate_gbps (0.001..800), stall_ms the rings must
    absorb (0.001..1,000, default 1), packet_bytes (IP length, 64..9,216, default 1,500) and queues for the memory
    estimate (1..512, default 8); null to skip.
  EOT
  type = object({
    driver         = string
    line_rate_gbps = number
    stall_ms       = optional(number)
    packet_bytes   = optional(number)
    queues         = optional(number)
  })
  default = null

  validation {
    condition     = var.rings == null ? true : try(contains(keys(local.facts.nic_drivers), lower(trimspace(var.rings.driver))), false)
    error_message = "rings.driver: ${try(jsonencode(var.rings.driver), "null")} is not allowed: must be a NIC driver wirespeed knows: ${join(", ", keys(local.facts.nic_drivers))}."
  }

  validation {
    condition     = var.rings == null ? true : try(local.facts.nic_drivers[lower(trimspace(var.rings.driver))].rx != null, true)
    error_message = "rings.driver: ${try(jsonencode(var.rings.driver), "null")} is not allowed: must be a driver with NIC rings (${join(", ", [for name, d in local.facts.nic_drivers : name if d.rx != null])}); ${try(lower(trimspace(var.rings.driver)), "it")} has none: tune its VF."
  }

  validation {
    condition     = var.rings == null ? true : try(var.rings.line_rate_gbps >= local.facts.packet_ranges.line_rate_gbps[0] && var.rings.line_rate_gbps <= local.facts.packet_ranges.line_rate_gbps[1], false)
    error_message = "rings.line_rate_gbps: ${try(var.rings.line_rate_gbps == null ? "null" : var.rings.line_rate_gbps, "null")} is not allowed: must be between ${local.facts.packet_ranges.line_rate_gbps[0]} and ${local.facts.packet_ranges.line_rate_gbps[1]}."
  }

  validation {
    condition     = try(var.rings.stall_ms, null) == null ? true : try(var.rings.stall_ms >= local.facts.packet_ranges.stall_ms[0] && var.rings.stall_ms <= local.facts.packet_ranges.stall_ms[1], false)
    error_message = "rings.stall_ms: ${try(var.rings.stall_ms == null ? "null" : var.rings.stall_ms, "null")} is not allowed: must be between ${local.facts.packet_ranges.stall_ms[0]} and ${local.facts.packet_ranges.stall_ms[1]}."
  }

  validation {
    condition     = try(var.rings.packet_bytes, null) == null ? true : try(var.rings.packet_bytes == floor(var.rings.packet_bytes) && var.rings.packet_bytes >= local.facts.packet_ranges.packet_bytes[0] && var.rings.packet_bytes <= local.facts.packet_ranges.packet_bytes[1], false)
    error_message = "rings.packet_bytes: ${try(var.rings.packet_bytes == null ? "null" : var.rings.packet_bytes, "null")} is not allowed: must be a whole number between ${local.facts.packet_ranges.packet_bytes[0]} and ${local.facts.packet_ranges.packet_bytes[1]}."
  }

  validation {
    condition     = try(var.rings.queues, null) == null ? true : try(var.rings.queues == floor(var.rings.queues) && var.rings.queues >= local.facts.ring_queues_range[0] && var.rings.queues <= local.facts.ring_queues_range[1], false)
    error_message = "rings.queues: ${try(var.rings.queues == null ? "null" : var.rings.queues, "null")} is not allowed: must be a whole number between ${local.facts.ring_queues_range[0]} and ${local.facts.ring_queues_range[1]}."
  }
}

variable "workload" {
  description = <<-EOT
    Outbound demand per node to its busiest destination: connections_per_second (0.001..1,000,000), hold_seconds
    (1..3,600, default 240) and headroom (1..10, default 1.25). Ports needed = their product, rounded up to a multiple
    of 8.
  EOT
  type = object({
    connections_per_second = number
    hold_seconds           = optional(number, 240)
    headroom               = optional(number, 1.25)
  })
  default = null

  validation {
    condition     = var.workload == null ? true : try(var.workload.connections_per_second >= local.facts.workload_ranges.connections_per_second[0] && var.workload.connections_per_second <= local.facts.workload_ranges.connections_per_second[1], false)
    error_message = "workload.connections_per_second: ${try(var.workload.connections_per_second, "null")} is not allowed: must be between ${local.facts.workload_ranges.connections_per_second[0]} and ${local.facts.workload_ranges.connections_per_second[1]}."
  }

  validation {
    condition     = var.workload == null ? true : try(var.workload.hold_seconds >= local.facts.workload_ranges.hold_seconds[0] && var.workload.hold_seconds <= local.facts.workload_ranges.hold_seconds[1], false)
    error_message = "workload.hold_seconds: ${try(var.workload.hold_seconds, "null")} is not allowed: must be between ${local.facts.workload_ranges.hold_seconds[0]} and ${local.facts.workload_ranges.hold_seconds[1]}."
  }

  validation {
    condition     = var.workload == null ? true : try(var.workload.headroom >= local.facts.workload_ranges.headroom[0] && var.workload.headroom <= local.facts.workload_ranges.headroom[1], false)
    error_message = "workload.headroom: ${try(var.workload.headroom, "null")} is not allowed: must be between ${local.facts.workload_ranges.headroom[0]} and ${local.facts.workload_ranges.headroom[1]}."
  }
}
