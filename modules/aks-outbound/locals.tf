# Pure: which settings reach modules/sizing, the network_profile values from its result, and the refusals of an
# infeasible plan worded as wirespeed.azure.outbound words them. No provider is named here.
locals {
  lb  = var.outbound_type == "loadBalancer"
  nat = var.outbound_type == "managedNATGateway"

  idle_timeout_minutes = coalesce(var.idle_timeout_minutes, lookup(local.outbound_facts.default_idle_timeout, var.outbound_type, 0))

  # Existing IP IDs fix the count; otherwise outbound_ip_count (null: minimise).
  fixed_ips = var.ip_mode == "existing" && length(var.existing_ip_ids) > 0 ? length(var.existing_ip_ids) : var.outbound_ip_count

  pools_valid = length(var.pools) > 0 && alltrue([for p in var.pools : (
    p.max_count == floor(p.max_count) && p.max_count >= 1 && p.max_count <= local.outbound_facts.max_pool_nodes && (
      can(regex("^[0-9]+(\\.[0-9]+)?%$", trimspace(p.max_surge))) ? try(tonumber(trimsuffix(trimspace(p.max_surge), "%")) > 0 && tonumber(trimsuffix(trimspace(p.max_surge), "%")) <= 100, false) :
      can(regex("^[0-9]+$", trimspace(p.max_surge))) ? try(tonumber(trimspace(p.max_surge)) >= 1 && tonumber(trimspace(p.max_surge)) <= p.max_count, false) : false
    )
  )])
  ports_valid = var.allocated_outbound_ports == null || try(
    var.allocated_outbound_ports % local.outbound_facts.port_granularity == 0 && var.allocated_outbound_ports >= local.outbound_facts.port_granularity && var.allocated_outbound_ports <= local.outbound_facts.max_ports_per_node, false
  )
  workload_valid = var.connections_per_second == null || alltrue([for field, value in {
    connections_per_second = var.connections_per_second, hold_seconds = var.hold_seconds, headroom = var.headroom
  } : try(value >= local.outbound_facts.workload[field].low && value <= local.outbound_facts.workload[field].high, false)])
  ips_valid = (
    contains(["managed", "created", "existing"], var.ip_mode) &&
    (var.outbound_ip_count == null || try(var.outbound_ip_count == floor(var.outbound_ip_count) && var.outbound_ip_count >= 1 && var.outbound_ip_count <= local.outbound_facts.max_outbound_ips, false)) &&
    (var.ip_mode == "existing" ? (
      (length(var.existing_ip_ids) > 0) != (length(var.existing_prefix_ids) > 0) && length(var.existing_ip_ids) <= local.outbound_facts.max_outbound_ips &&
      (length(var.existing_ip_ids) > 0 ? var.outbound_ip_count == null || var.outbound_ip_count == length(var.existing_ip_ids) : var.outbound_ip_count != null)
    ) : length(var.existing_ip_ids) + length(var.existing_prefix_ids) == 0)
  )
  lb_ready = (
    local.lb && local.pools_valid && local.ports_valid && local.workload_valid && local.ips_valid &&
    (var.allocated_outbound_ports == null) != (var.connections_per_second == null) && var.nat_gateway_ip_count == null && var.nat_gateway_flows == null
  )
  nat_ready = (
    local.nat && var.nat_gateway_flows != null && var.nat_gateway_ip_count == null &&
    try(var.nat_gateway_flows == floor(var.nat_gateway_flows) && var.nat_gateway_flows >= 1 && var.nat_gateway_flows <= local.outbound_facts.max_nat_demand, false)
  )
}

# azurerm_kubernetes_cluster.network_profile values. The created public IPs' IDs join
# load_balancer_profile.outbound_ip_address_ids in outputs.tf (they need the provider).
locals {
  public_ip_count = local.lb_ready && var.ip_mode == "created" ? module.sizing.outbound_ips : 0

  load_balancer_profile = local.lb_ready ? {
    # Never 0: Azure's default halves as the cluster grows (the SNAT exhaustion wirespeed exists to prevent).
    outbound_ports_allocated  = module.sizing.allocated_outbound_ports
    managed_outbound_ip_count = var.ip_mode == "managed" ? module.sizing.outbound_ips : null
    outbound_ip_address_ids   = var.ip_mode == "existing" ? var.existing_ip_ids : []
    outbound_ip_prefix_ids    = var.ip_mode == "existing" ? var.existing_prefix_ids : []
    idle_timeout_in_minutes   = local.idle_timeout_minutes
  } : null

  nat_gateway_profile = local.nat ? {
    managed_outbound_ip_count = var.nat_gateway_ip_count != null ? var.nat_gateway_ip_count : try(module.sizing.azure_nat_gateway.ips, null)
    idle_timeout_in_minutes   = local.idle_timeout_minutes
  } : null

  # The NAT gateway's SKU and what it gives (zones, throughput, the public IP SKU it takes); null with a load balancer.
  nat_gateway_sku = local.nat ? try(local.outbound_facts.nat_skus[coalesce(var.nat_gateway_sku, "Standard")], null) : null

  outbound_ip_count = local.lb_ready ? module.sizing.outbound_ips : try(local.nat_gateway_profile.managed_outbound_ip_count, null)

  # The tuning profile's outbound section for these nodes (modules/node-tuning's outbound): what the agent's
  # SNATPortPressure condition compares each destination's ports with.
  profile_outbound = local.lb_ready ? {
    kind                     = local.outbound_facts.profile_kind.loadBalancer
    allocated_ports_per_node = module.sizing.allocated_outbound_ports
    public_ips               = null
    # A UDP port is released only at the outbound idle timeout after the last packet.
    udp_hold_seconds = local.idle_timeout_minutes * local.outbound_facts.udp_hold_seconds_per_idle_minute
    } : try(local.nat_gateway_profile.managed_outbound_ip_count, null) != null ? {
    kind                     = local.outbound_facts.profile_kind.managedNATGateway
    allocated_ports_per_node = null
    public_ips               = local.nat_gateway_profile.managed_outbound_ip_count
    # Fixed UDP timers, whatever idle_timeout_in_minutes (TCP's) says.
    udp_hold_seconds = local.outbound_facts.nat_udp_hold_seconds
  } : null
}

# The refusals of an infeasible plan, with Python's thousands separators ("450,560").
locals {
  numbers = {
    ports         = coalesce(module.sizing.allocated_outbound_ports, 0)
    nodes         = coalesce(module.sizing.nodes_at_max, 0)
    required      = coalesce(module.sizing.ports_required, 0)
    available     = coalesce(module.sizing.ports_available, 0)
    per_ip        = local.outbound_facts.ports_per_ip
    inf_required  = try(module.sizing.infeasible.required, 0)
    inf_available = try(module.sizing.infeasible.available, 0)
    nat_demand    = try(module.sizing.azure_nat_gateway.demand, 0)
    nat_available = try(module.sizing.azure_nat_gateway.infeasible.available, 0)
  }
  digits = { for k, n in local.numbers : k => format("%d", n) }
  commas = { for k, s in local.digits : k => join(",", concat(
    [substr(s, 0, (length(s) - 1) % 3 + 1)],
    [for i in range((length(s) - 1) % 3 + 1, length(s), 3) : substr(s, i, 3)],
  )) }

  infeasible_field = try(module.sizing.infeasible.field, "")
  infeasible_message = local.infeasible_field == "ports per node" ? (
    "outbound: infeasible: ports per node: ${local.commas.inf_required} required but at most ${local.commas.inf_available} are allowed; ${local.outbound_facts.suggestion["ports per node"]}"
    ) : (
    "outbound: infeasible: outbound IPs: ${local.commas.inf_required} ports required but ${local.outbound_facts.max_outbound_ips} IPs give at most ${local.commas.inf_available}; ${local.outbound_facts.suggestion["outbound IPs"]}"
  )
  fixed_ips_message = join("", [
    "${var.ip_mode == "existing" ? "existing_ip_ids" : "outbound_ip_count"}: infeasible: ${local.commas.ports} ports x ${local.commas.nodes} nodes ",
    "(maxCount + surge of every pool) = ${local.commas.required} required but ${coalesce(module.sizing.outbound_ips, 0)} IP(s) x ${local.commas.per_ip} = ",
    "${local.commas.available} available; AKS would reject it (InvalidLoadBalancerProfileAllocatedOutboundPorts): add IPs or lower the ports per node",
  ])
  nat_infeasible_message = "nat_gateway_flows: ${local.commas.nat_demand} required but ${local.outbound_facts.nat_max_ips} IPs give at most ${local.commas.nat_available}; ${local.outbound_facts.suggestion.flows}"
}
