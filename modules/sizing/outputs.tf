output "allocated_outbound_ports" {
  description = "SNAT ports per node to set as loadBalancerProfile.allocatedOutboundPorts."
  value       = local.allocated
}

output "outbound_ips" {
  description = "Managed outbound IPs: the minimal sufficient count, or the fixed outbound_ips given."
  value       = local.ips
}

output "outbound_ips_fixed" {
  description = "True when outbound_ips was given and is checked rather than minimised."
  value       = var.outbound_ips != null
}

output "nodes_at_max" {
  description = "Nodes AKS counts: the sum over pools of max_count plus surge nodes."
  value       = local.nodes
}

output "ports_required" {
  description = "allocated_outbound_ports x nodes_at_max."
  value       = local.required
}

output "ports_available" {
  description = "outbound_ips x 64,000."
  value       = local.available
}

output "headroom_ports" {
  description = "ports_available - ports_required (negative when infeasible)."
  value       = local.available - local.required
}

output "max_nodes_supported" {
  description = "Nodes this port and IP setting holds before AKS rejects the profile."
  value       = (local.available - local.available % local.allocated) / local.allocated
}

output "feasible" {
  description = "False when AKS would reject the profile (InvalidLoadBalancerProfileAllocatedOutboundPorts) or no setting fits; see infeasible."
  value       = local.infeasible == null && local.required <= local.available
}

output "infeasible" {
  description = "Null, or why no setting fits: field (\"ports per node\" or \"outbound IPs\"), required and available in that unit."
  value       = local.infeasible
}

output "dynamic_default_ports" {
  description = "Ports per node Azure would allocate with allocatedOutboundPorts = 0 at nodes_at_max; null above the documented 1,000 nodes."
  value       = local.dynamic_default
}

output "dynamic_default_halves_at_nodes" {
  description = "The node count at which Azure's default next halves, or null."
  value       = local.halves_at
}

output "pools" {
  description = "Per pool: max_count, surge_nodes and nodes_at_max."
  value       = local.pools_out
}
