output "nat_gateway_ids" {
  description = "AZ name -> the NAT gateway serving it (regional: the same gateway for every AZ)."
  value       = var.mode == "zonal" ? module.zonal[0].nat_gateway_ids : module.regional[0].nat_gateway_ids
}

output "public_ips" {
  description = "AZ name -> the public IPs its traffic leaves from, primary first: what destinations must allow-list (regional automatic: those AWS had assigned when last read)."
  value       = var.mode == "zonal" ? module.zonal[0].public_ips : module.regional[0].public_ips
}

output "allocation_ids" {
  description = "AZ name -> the Elastic IP allocation IDs, primary first."
  value       = var.mode == "zonal" ? module.zonal[0].allocation_ids : module.regional[0].allocation_ids
}

output "ips_by_az" {
  description = "AZ name -> IPs modules/sizing gives for the AZ's demand (regional automatic: the floor AWS must reach)."
  value       = var.mode == "zonal" ? module.zonal[0].ips_by_az : module.regional[0].ips_by_az
}

output "sizing" {
  description = "AZ name -> modules/sizing's aws_nat_gateway plan: ips, demand, per_ip, capacity, headroom, feasible, above_default_eip_quota."
  value       = var.mode == "zonal" ? module.zonal[0].sizing : module.regional[0].sizing
}

output "alarm_arns" {
  description = "Gateway (zonal: its AZ; regional: the name) -> its ErrorPortAllocation alarm's ARN (empty with alarms = false)."
  value       = var.mode == "zonal" ? module.zonal[0].alarm_arns : module.regional[0].alarm_arns
}

output "profile_outbound" {
  description = <<-EOT
    The tuning profile's outbound section for nodes behind the gateways, from the chosen module: { kind =
    "aws-nat-gateway", public_ips = the smallest AZ's IPs }. Pass it to modules/node-tuning's outbound.
  EOT
  value       = var.mode == "zonal" ? module.zonal[0].profile_outbound : module.regional[0].profile_outbound
}

output "measured_from" {
  description = "Where peak_connections was measured (var.measured_from, trimmed), or null, from the chosen module."
  value       = var.mode == "zonal" ? module.zonal[0].measured_from : module.regional[0].measured_from
}
