# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
output "nat_gateway_ids" {
  description = "AZ name -> NAT gateway ID."
  value       = { for az, gateway in aws_nat_gateway.this : az => gateway.id }
}

output "public_ips" {
  description = "AZ name -> the gateway's public IPs, primary first: what destinations must allow-list."
  value       = { for az, ips in local.ips_by_az : az => [for index in range(ips) : aws_eip.this["${az}/${index}"].public_ip] }
}

output "allocation_ids" {
  description = "AZ name -> the Elastic IP allocation IDs, primary first."
  value       = { for az, ips in local.ips_by_az : az => [for index in range(ips) : aws_eip.this["${az}/${index}"].allocation_id] }
}

output "ips_by_az" {
  description = "AZ name -> Elastic IPs on its gateway (primary + secondary), as modules/sizing gives for the AZ's demand."
  value       = local.ips_by_az
}

output "sizing" {
  description = "AZ name -> modules/sizing's aws_nat_gateway plan: ips, demand, per_ip, capacity, headroom, feasible, above_default_eip_quota."
  value       = { for az, plan in module.sizing : az => plan.aws_nat_gateway }
}

output "alarm_arns" {
  description = "AZ name -> the ErrorPortAllocation alarm's ARN (empty with alarms = false)."
  value       = { for az, alarm in aws_cloudwatch_metric_alarm.port_allocation : az => alarm.arn }
}

output "profile_outbound" {
  description = <<-EOT
    The tuning profile's outbound section for nodes behind these gateways, as NatEgress.profile_outbound gives it:
    { kind = "aws-nat-gateway", public_ips = the smallest AZ's IPs }. Pass it to modules/node-tuning's outbound so
    the agent sets SNATPortPressure when one destination on a node nears 55,000 x those IPs.
  EOT
  value       = local.profile_outbound
}

output "measured_from" {
  description = "Where peak_connections was measured (var.measured_from, trimmed), or null: what the IPs were sized from."
  value       = local.measured_from
}
