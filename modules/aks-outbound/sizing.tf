# The numbers come from modules/sizing (proven equal to wirespeed.sizing over shared vectors). It is called only
# with inputs this module's own rules accept, so a bad input is reported once, in this module's words.
module "sizing" {
  source = "../sizing"

  pools                    = local.lb_ready ? [for p in var.pools : { max_count = p.max_count, max_surge = trimspace(p.max_surge) }] : null
  allocated_outbound_ports = local.lb_ready ? var.allocated_outbound_ports : null
  workload = local.lb_ready && var.connections_per_second != null ? {
    connections_per_second = var.connections_per_second
    hold_seconds           = var.hold_seconds
    headroom               = var.headroom
  } : null
  outbound_ips            = local.lb_ready ? local.fixed_ips : null
  azure_nat_gateway_flows = local.nat_ready ? var.nat_gateway_flows : null
}

# The plan AKS would refuse is refused here, before anything is created, naming required and available.
output "sizing" {
  description = <<-EOT
    The outbound sizing from modules/sizing: nodes at peak (max_count + surge of every pool), ports per node, IPs, ports
    required and available, the dynamic-default comparison; the NAT gateway's IPs and capacity.
  EOT
  value = {
    load_balancer = local.lb_ready ? {
      allocated_outbound_ports = module.sizing.allocated_outbound_ports
      outbound_ips             = module.sizing.outbound_ips
      nodes_at_max             = module.sizing.nodes_at_max
      ports_required           = module.sizing.ports_required
      ports_available          = module.sizing.ports_available
      headroom_ports           = module.sizing.headroom_ports
      max_nodes_supported      = module.sizing.max_nodes_supported
      dynamic_default_ports    = module.sizing.dynamic_default_ports
      pools                    = module.sizing.pools
    } : null
    nat_gateway = module.sizing.azure_nat_gateway
  }

  precondition {
    condition     = module.sizing.infeasible == null
    error_message = local.infeasible_message
  }

  precondition {
    condition     = module.sizing.infeasible != null || module.sizing.feasible != false
    error_message = local.fixed_ips_message
  }

  precondition {
    condition     = try(module.sizing.azure_nat_gateway.feasible, true)
    error_message = local.nat_infeasible_message
  }
}
