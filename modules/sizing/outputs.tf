# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
output "allocated_outbound_ports" {
  description = "SNAT ports per node to set as loadBalancerProfile.allocatedOutboundPorts."
  value       = local.lb ? local.allocated : null
}

output "outbound_ips" {
  description = "Managed outbound IPs: the minimal sufficient count, or the fixed outbound_ips given."
  value       = local.lb ? local.ips : null
}

output "outbound_ips_fixed" {
  description = "True when outbound_ips was given and is checked rather than minimised."
  value       = local.lb ? (var.outbound_ips != null) : null
}

output "nodes_at_max" {
  description = "Nodes AKS counts: the sum over pools of max_count plus surge nodes."
  value       = local.lb ? local.nodes : null
}

output "ports_required" {
  description = "allocated_outbound_ports x nodes_at_max."
  value       = local.lb ? local.required : null
}

output "ports_available" {
  description = "outbound_ips x 64,000."
  value       = local.lb ? local.available : null
}

output "headroom_ports" {
  description = "ports_available - ports_required (negative when infeasible)."
  value       = local.lb ? (local.available - local.required) : null
}

output "max_nodes_supported" {
  description = "Nodes this port and IP setting holds before AKS rejects the profile."
  value       = local.lb ? ((local.available - local.available % local.allocated) / local.allocated) : null
}

output "feasible" {
  description = "False when AKS would reject the profile (InvalidLoadBalancerProfileAllocatedOutboundPorts) or no setting fits; see infeasible."
  value       = local.lb ? (local.infeasible == null && local.required <= local.available) : null
}

output "infeasible" {
  description = "Null, or why no setting fits: field (\"ports per node\" or \"outbound IPs\"), required and available in that unit."
  value       = local.infeasible
}

output "dynamic_default_ports" {
  description = "Ports per node Azure would allocate with allocatedOutboundPorts = 0 at nodes_at_max; null above the documented 1,000 nodes."
  value       = local.lb ? local.dynamic_default : null
}

output "dynamic_default_halves_at_nodes" {
  description = "The node count at which Azure's default next halves, or null."
  value       = local.lb ? local.halves_at : null
}

output "pools" {
  description = "Per pool: max_count, surge_nodes and nodes_at_max."
  value       = local.lb ? local.pools_out : null
}

output "azure_nat_gateway" {
  description = "Null unless azure_nat_gateway_flows is given; else ips, demand, per_ip (64,512), capacity, headroom, feasible (at most 16 IPs) and infeasible."
  value       = local.nat_out.azure
}

output "aws_nat_gateway" {
  description = <<-EOT
    Null unless aws_nat_gateway_connections is given; else ips (zonal: primary + secondary; regional: the AZ's), demand,
    per_ip (55,000), capacity, headroom, feasible (at most 8 IPs zonal, 32 per AZ regional), infeasible and
    above_default_eip_quota (a zonal gateway above the default 2 Elastic IPs per NAT gateway).
  EOT
  value       = local.nat_out.aws == null ? null : merge(local.nat_out.aws, { above_default_eip_quota = var.aws_nat_gateway_mode == "zonal" && local.nat.aws.ips > local.facts.aws_nat_default_eip_quota })
}

output "backlog" {
  description = "Null unless backlog is given; else netdev_max_backlog, packets_in_stall, capped_at_aks_max and memory_bytes_per_cpu."
  value       = local.backlog_out
}

output "rings" {
  description = <<-EOT
    Null unless rings is given; else driver, rx and tx (the smallest sizes the driver keeps unchanged that hold
    packets_in_stall, clamped to its max), rx_default, tx_default, packets_in_stall, rx_capped_at_driver_max,
    tx_capped_at_driver_max, queues, memory_bytes (RX buffers on all queues) and extra_memory_bytes (over the defaults).
  EOT
  value       = local.rings_out
}
