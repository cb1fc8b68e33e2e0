output "outbound_type" {
  description = "network_profile.outbound_type: loadBalancer or managedNATGateway."
  value       = var.outbound_type
}

output "load_balancer_profile" {
  description = <<-EOT
    network_profile.load_balancer_profile values (null with a NAT gateway): outbound_ports_allocated (never 0),
    managed_outbound_ip_count (ip_mode managed, else null), outbound_ip_address_ids (created or existing),
    outbound_ip_prefix_ids, idle_timeout_in_minutes.
  EOT
  value = local.load_balancer_profile == null ? null : merge(local.load_balancer_profile, {
    outbound_ip_address_ids = var.ip_mode == "created" ? azurerm_public_ip.outbound[*].id : local.load_balancer_profile.outbound_ip_address_ids
  })
}

output "nat_gateway_profile" {
  description = "network_profile.nat_gateway_profile values (null with a load balancer): managed_outbound_ip_count, idle_timeout_in_minutes."
  value       = local.nat_gateway_profile
}

output "nat_gateway_sku" {
  description = "The NAT gateway's SKU (null with a load balancer): name, zone_redundant, gbps, packets_per_second, public_ip_sku."
  value       = local.nat_gateway_sku
}

output "outbound_ip_count" {
  description = "Outbound IPs of the load balancer or the NAT gateway."
  value       = local.outbound_ip_count
}

output "public_ip_ids" {
  description = "IDs of the created public IPs (ip_mode created), else empty."
  value       = azurerm_public_ip.outbound[*].id
}

output "public_ip_addresses" {
  description = "Addresses of the created public IPs, for partners' allowlists."
  value       = azurerm_public_ip.outbound[*].ip_address
}

output "profile_outbound" {
  description = <<-EOT
    The tuning profile's outbound section for these nodes: { kind, allocated_ports_per_node (load balancer) or
    public_ips (NAT gateway) }. Pass it to modules/node-tuning's outbound so the agent sets SNATPortPressure when one
    destination nears what was sized.
  EOT
  value       = local.profile_outbound
}
