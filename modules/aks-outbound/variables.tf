# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
variable "pools" {
  description = <<-EOT
    Every node pool behind the cluster's load balancer (the system pool too): max_count (1..1,000) and max_surge, a node
    count ("2", 1..max_count) or a percent ("10%", above 0 up to 100). AKS requires SNAT ports for max_count + surge of
    every pool. modules/aks-node-pool's sizing_pool output gives one.
  EOT
  type = list(object({
    max_count = number
    max_surge = optional(string, "10%")
  }))

  validation {
    condition     = length(var.pools) >= 1
    error_message = "pools: [] is not allowed: at least one pool (every pool behind the load balancer counts)"
  }

  validation {
    condition     = alltrue([for p in var.pools : p.max_count == floor(p.max_count) && p.max_count >= 1 && p.max_count <= local.outbound_facts.max_pool_nodes])
    error_message = join("; ", [for i, p in var.pools : "pools[${i}].max_count: ${p.max_count} is not allowed: ${local.outbound_facts.allowed.max_count}" if !(p.max_count == floor(p.max_count) && p.max_count >= 1 && p.max_count <= local.outbound_facts.max_pool_nodes)])
  }

  validation {
    condition = alltrue([for p in var.pools : (
      can(regex("^[0-9]+(\\.[0-9]+)?%$", trimspace(p.max_surge))) ? try(tonumber(trimsuffix(trimspace(p.max_surge), "%")) > 0 && tonumber(trimsuffix(trimspace(p.max_surge), "%")) <= 100, false) :
      can(regex("^[0-9]+$", trimspace(p.max_surge))) ? try(tonumber(trimspace(p.max_surge)) >= 1 && tonumber(trimspace(p.max_surge)) <= p.max_count, false) : false
    )])
    error_message = join("; ", [for i, p in var.pools : "pools[${i}].max_surge: '${p.max_surge}' is not allowed: a node count from 1 to max_count (${p.max_count}) or a percent above 0% up to 100% (e.g. '1' or '10%')" if !(
      can(regex("^[0-9]+(\\.[0-9]+)?%$", trimspace(p.max_surge))) ? try(tonumber(trimsuffix(trimspace(p.max_surge), "%")) > 0 && tonumber(trimsuffix(trimspace(p.max_surge), "%")) <= 100, false) :
      can(regex("^[0-9]+$", trimspace(p.max_surge))) ? try(tonumber(trimspace(p.max_surge)) >= 1 && tonumber(trimspace(p.max_surge)) <= p.max_count, false) : false
    )])
  }
}

variable "allocated_outbound_ports" {
  description = "SNAT ports per node, 8..64,000, a multiple of 8. Never 0 (Azure's default halves as the pool grows). Conflicts with connections_per_second. Load balancer only."
  type        = number
  default     = null

  validation {
    condition     = var.outbound_type != "loadBalancer" || (var.allocated_outbound_ports == null) != (var.connections_per_second == null)
    error_message = "allocated_outbound_ports: ${var.allocated_outbound_ports == null ? "null" : var.allocated_outbound_ports} is not allowed: ${local.outbound_facts.allowed.ports_or_workload}"
  }

  validation {
    condition = var.outbound_type != "loadBalancer" || var.allocated_outbound_ports == null || var.connections_per_second != null || try(
      var.allocated_outbound_ports % local.outbound_facts.port_granularity == 0 && var.allocated_outbound_ports >= local.outbound_facts.port_granularity && var.allocated_outbound_ports <= local.outbound_facts.max_ports_per_node,
      false
    )
    error_message = "allocated_outbound_ports: ${var.allocated_outbound_ports == null ? "null" : var.allocated_outbound_ports} is not allowed: ${local.outbound_facts.allowed.allocated_outbound_ports}"
  }

  validation {
    condition     = var.outbound_type != "managedNATGateway" || var.allocated_outbound_ports == null
    error_message = "allocated_outbound_ports: ${var.allocated_outbound_ports == null ? "null" : var.allocated_outbound_ports} is not allowed with managedNATGateway: load balancer setting (a NAT gateway allocates ports on demand)"
  }
}

variable "connections_per_second" {
  description = <<-EOT
    Peak new outbound connections per second per node to its busiest destination (0.001..1,000,000); ports are sized
    from it (rate x hold_seconds x headroom, rounded up to a multiple of 8, never below Azure's default). Conflicts with
    allocated_outbound_ports. Load balancer only.
  EOT
  type        = number
  default     = null

  validation {
    condition = var.outbound_type != "loadBalancer" || var.connections_per_second == null || try(
      var.connections_per_second >= local.outbound_facts.workload.connections_per_second.low && var.connections_per_second <= local.outbound_facts.workload.connections_per_second.high, false
    )
    error_message = "connections_per_second: ${var.connections_per_second == null ? "null" : var.connections_per_second} is not allowed: ${local.outbound_facts.workload.connections_per_second.allowed}"
  }

  validation {
    condition     = var.outbound_type != "managedNATGateway" || var.connections_per_second == null
    error_message = "connections_per_second: ${var.connections_per_second == null ? "null" : var.connections_per_second} is not allowed with managedNATGateway: load balancer setting (a NAT gateway allocates ports on demand)"
  }
}

variable "existing_ip_ids" {
  description = "Public IP resource IDs (ip_mode existing). Conflicts with existing_prefix_ids."
  type        = list(string)
  default     = []

  validation {
    condition     = !(var.outbound_type == "loadBalancer" && contains(["managed", "created"], var.ip_mode) && length(var.existing_ip_ids) + length(var.existing_prefix_ids) > 0)
    error_message = "existing_ip_ids: not allowed with ip_mode '${var.ip_mode}': set ip_mode 'existing' to use your own IPs or prefixes"
  }

  validation {
    condition     = !(var.outbound_type == "loadBalancer" && var.ip_mode == "existing" && (length(var.existing_ip_ids) > 0) == (length(var.existing_prefix_ids) > 0))
    error_message = "existing_ip_ids: give exactly one of existing_ip_ids or existing_prefix_ids with ip_mode 'existing' (AKS takes one)"
  }

  # Worded as wirespeed.azure.outbound words it (the IPs of a NAT gateway are its ip_mode's business); here
  # because a rule on ip_mode may not read existing_ip_ids while this one reads ip_mode (a cycle).
  validation {
    condition     = !(var.outbound_type == "managedNATGateway" && var.ip_mode == "managed" && length(var.existing_ip_ids) + length(var.existing_prefix_ids) > 0)
    error_message = "ip_mode: '${var.ip_mode}' is not allowed with managedNATGateway: only 'managed' (AKS creates the NAT gateway's IPs)"
  }

  validation {
    condition     = length(var.existing_ip_ids) <= local.outbound_facts.max_outbound_ips
    error_message = "existing_ip_ids: ${length(var.existing_ip_ids)} IDs is not allowed: at most ${local.outbound_facts.max_outbound_ips}"
  }
}

variable "existing_prefix_ids" {
  description = "Public IP prefix resource IDs (ip_mode existing); give outbound_ip_count, the IPs they hold. Conflicts with existing_ip_ids."
  type        = list(string)
  default     = []
}

variable "headroom" {
  description = "Multiplier over the mean ports in use, 1..10. Default 1.25."
  type        = number
  default     = 1.25

  validation {
    condition = var.outbound_type != "loadBalancer" || var.connections_per_second == null || var.allocated_outbound_ports != null || try(
      var.headroom >= local.outbound_facts.workload.headroom.low && var.headroom <= local.outbound_facts.workload.headroom.high, false
    )
    error_message = "headroom: ${var.headroom == null ? "null" : var.headroom} is not allowed: ${local.outbound_facts.workload.headroom.allowed}"
  }
}

variable "hold_seconds" {
  description = "Seconds a SNAT port stays taken per connection (its lifetime + Azure's 4-minute reuse cooldown), 1..3,600. Default 240."
  type        = number
  default     = 240

  validation {
    condition = var.outbound_type != "loadBalancer" || var.connections_per_second == null || var.allocated_outbound_ports != null || try(
      var.hold_seconds >= local.outbound_facts.workload.hold_seconds.low && var.hold_seconds <= local.outbound_facts.workload.hold_seconds.high, false
    )
    error_message = "hold_seconds: ${var.hold_seconds == null ? "null" : var.hold_seconds} is not allowed: ${local.outbound_facts.workload.hold_seconds.allowed}"
  }
}

variable "idle_timeout_minutes" {
  description = "Outbound flow idle timeout, 4..120 minutes. Default null: 30 (load balancer) or 4 (NAT gateway)."
  type        = number
  default     = null

  validation {
    condition = var.idle_timeout_minutes == null || try(
      var.idle_timeout_minutes == floor(var.idle_timeout_minutes) && var.idle_timeout_minutes >= local.outbound_facts.idle_timeout[0] && var.idle_timeout_minutes <= local.outbound_facts.idle_timeout[1], false
    )
    error_message = "idle_timeout_minutes: ${var.idle_timeout_minutes == null ? "null" : var.idle_timeout_minutes} is not allowed: ${local.outbound_facts.allowed.idle_timeout_minutes}"
  }
}

variable "ip_mode" {
  description = <<-EOT
    managed (AKS creates the outbound IPs, default), created (this module creates Standard, static, zone-redundant
    public IPs you can give partners to allowlist) or existing (your IP or prefix IDs). Load balancer only; a NAT
    gateway's IPs are always managed.
  EOT
  type        = string
  default     = "managed"

  validation {
    condition     = var.outbound_type != "loadBalancer" || contains(["managed", "created", "existing"], var.ip_mode)
    error_message = "ip_mode: '${var.ip_mode}' is not allowed: 'managed', 'created' or 'existing'"
  }

  validation {
    condition     = var.outbound_type != "managedNATGateway" || var.ip_mode == "managed"
    error_message = "ip_mode: '${var.ip_mode}' is not allowed with managedNATGateway: only 'managed' (AKS creates the NAT gateway's IPs)"
  }
}

variable "location" {
  description = "Azure region of the created public IPs (ip_mode created), the cluster's; unused otherwise."
  type        = string
  default     = null

  validation {
    condition     = !(var.outbound_type == "loadBalancer" && var.ip_mode == "created" && var.location == null)
    error_message = "location: null is not allowed with ip_mode 'created': the cluster's region, where the public IPs go"
  }
}

variable "nat_gateway_flows" {
  description = <<-EOT
    Peak concurrent outbound flows of the whole cluster (1..1,000,000,000); NAT gateway IPs sized at 64,512 ports each
    (at most 16). Conflicts with nat_gateway_ip_count. NAT gateway only.
  EOT
  type        = number
  default     = null

  validation {
    condition = var.outbound_type != "managedNATGateway" || var.nat_gateway_flows == null || try(
      var.nat_gateway_flows == floor(var.nat_gateway_flows) && var.nat_gateway_flows >= 1 && var.nat_gateway_flows <= local.outbound_facts.max_nat_demand, false
    )
    error_message = "nat_gateway_flows: ${var.nat_gateway_flows == null ? "null" : var.nat_gateway_flows} is not allowed: ${local.outbound_facts.allowed.nat_gateway_flows}"
  }

  validation {
    condition     = var.outbound_type != "loadBalancer" || var.nat_gateway_flows == null
    error_message = "nat_gateway_flows: ${var.nat_gateway_flows == null ? "null" : var.nat_gateway_flows} is not allowed with loadBalancer: NAT gateway setting"
  }
}

variable "nat_gateway_ip_count" {
  description = "Managed NAT gateway IPs, 1..16. Conflicts with nat_gateway_flows. NAT gateway only."
  type        = number
  default     = null

  validation {
    condition     = var.outbound_type != "managedNATGateway" || (var.nat_gateway_ip_count == null) != (var.nat_gateway_flows == null)
    error_message = "nat_gateway_ip_count: give exactly one of nat_gateway_ip_count (1..${local.outbound_facts.nat_max_ips}) or nat_gateway_flows (concurrent outbound flows)"
  }

  validation {
    condition = var.outbound_type != "managedNATGateway" || var.nat_gateway_ip_count == null || var.nat_gateway_flows != null || try(
      var.nat_gateway_ip_count == floor(var.nat_gateway_ip_count) && var.nat_gateway_ip_count >= 1 && var.nat_gateway_ip_count <= local.outbound_facts.nat_max_ips, false
    )
    error_message = "nat_gateway_ip_count: ${var.nat_gateway_ip_count == null ? "null" : var.nat_gateway_ip_count} is not allowed: ${local.outbound_facts.allowed.nat_gateway_ip_count}"
  }

  validation {
    condition     = var.outbound_type != "loadBalancer" || var.nat_gateway_ip_count == null
    error_message = "nat_gateway_ip_count: ${var.nat_gateway_ip_count == null ? "null" : var.nat_gateway_ip_count} is not allowed with loadBalancer: NAT gateway setting"
  }
}

variable "nat_gateway_sku" {
  description = <<-EOT
    The managed NAT gateway's SKU: null or Standard (zonal, what AKS creates here). StandardV2 (zone-redundant, the
    same ports per IP and IP limit as Standard) is refused: azurerm_kubernetes_cluster's nat_gateway_profile cannot set
    natGatewayProfile.sku. NAT gateway only.
  EOT
  type        = string
  default     = null

  validation {
    condition     = var.nat_gateway_sku == null || contains(keys(local.outbound_facts.nat_skus), coalesce(var.nat_gateway_sku, "-"))
    error_message = "nat_gateway_sku: '${coalesce(var.nat_gateway_sku, "null")}' is not allowed: ${local.outbound_facts.allowed.nat_gateway_sku}"
  }

  validation {
    condition     = var.outbound_type != "managedNATGateway" || var.nat_gateway_sku == null || !contains(keys(local.outbound_facts.nat_skus), coalesce(var.nat_gateway_sku, "-")) || contains(local.outbound_facts.nat_buildable_skus, coalesce(var.nat_gateway_sku, "-"))
    error_message = "nat_gateway_sku: '${coalesce(var.nat_gateway_sku, "null")}' ${local.outbound_facts.nat_sku_unbuildable}"
  }

  validation {
    condition     = var.outbound_type != "loadBalancer" || var.nat_gateway_sku == null
    error_message = "nat_gateway_sku: '${coalesce(var.nat_gateway_sku, "null")}' is not allowed with loadBalancer: NAT gateway setting"
  }
}

variable "outbound_ip_count" {
  description = <<-EOT
    Fix the load balancer's IP count (1..100) instead of minimising it; the ports are then checked against it. Required
    with existing_prefix_ids (the IPs the prefixes hold); must equal the number of existing_ip_ids.
  EOT
  type        = number
  default     = null

  validation {
    condition = var.outbound_type != "loadBalancer" || var.outbound_ip_count == null || try(
      var.outbound_ip_count == floor(var.outbound_ip_count) && var.outbound_ip_count >= 1 && var.outbound_ip_count <= local.outbound_facts.max_outbound_ips, false
    )
    error_message = "outbound_ip_count: ${var.outbound_ip_count == null ? "null" : var.outbound_ip_count} is not allowed: ${local.outbound_facts.allowed.outbound_ip_count}"
  }

  validation {
    condition     = !(var.outbound_type == "loadBalancer" && var.ip_mode == "existing" && length(var.existing_ip_ids) > 0 && var.outbound_ip_count != null && var.outbound_ip_count != length(var.existing_ip_ids))
    error_message = "outbound_ip_count: ${var.outbound_ip_count == null ? "null" : var.outbound_ip_count} is not allowed: ${length(var.existing_ip_ids)} existing IP ID(s) given"
  }

  validation {
    condition     = !(var.outbound_type == "loadBalancer" && var.ip_mode == "existing" && length(var.existing_ip_ids) == 0 && length(var.existing_prefix_ids) > 0 && var.outbound_ip_count == null)
    error_message = "outbound_ip_count: null is not allowed with existing_prefix_ids: the number of IPs the prefixes hold (1..${local.outbound_facts.max_outbound_ips}), so the ports can be checked against them"
  }

  validation {
    condition     = var.outbound_type != "managedNATGateway" || var.outbound_ip_count == null
    error_message = "outbound_ip_count: ${var.outbound_ip_count == null ? "null" : var.outbound_ip_count} is not allowed with managedNATGateway: load balancer setting (a NAT gateway allocates ports on demand)"
  }
}

variable "outbound_type" {
  description = "loadBalancer (default: explicit SNAT ports per node) or managedNATGateway (ports on demand, 64,512 per IP). Create-only on AKS."
  type        = string
  default     = "loadBalancer"

  validation {
    condition     = contains(["loadBalancer", "managedNATGateway"], var.outbound_type)
    error_message = "outbound_type: '${var.outbound_type}' is not allowed: 'loadBalancer' or 'managedNATGateway'"
  }
}

variable "public_ip_name_prefix" {
  description = "Names of the created public IPs: <prefix>-1, <prefix>-2, ..."
  type        = string
  default     = "aks-outbound"
}

variable "resource_group_name" {
  description = "Resource group for the created public IPs (ip_mode created); unused otherwise."
  type        = string
  default     = null

  validation {
    condition     = !(var.outbound_type == "loadBalancer" && var.ip_mode == "created" && var.resource_group_name == null)
    error_message = "resource_group_name: null is not allowed with ip_mode 'created': the resource group the public IPs go in"
  }
}

variable "tags" {
  description = "Azure tags for the created public IPs."
  type        = map(string)
  default     = {}
}
