# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
output "nat_gateway_id" {
  description = "The regional NAT gateway's ID."
  value       = aws_nat_gateway.this.id
}

output "nat_gateway_ids" {
  description = "AZ name -> NAT gateway ID: the one regional gateway for every AZ of availability_zones (the zonal module's shape)."
  value       = { for az in var.availability_zones : az => aws_nat_gateway.this.id }
}

output "route_table_id" {
  description = "The route table AWS creates for the regional gateway (with its route to the internet gateway)."
  value       = aws_nat_gateway.this.route_table_id
}

output "public_ips" {
  description = "AZ name -> the public IPs its traffic leaves from: the module's Elastic IPs (manual), or those AWS had assigned in the AZ when the gateway was last read (automatic)."
  value = local.manual ? { for az, ips in local.ips_by_az : az => [for index in range(ips) : aws_eip.this["${az}/${index}"].public_ip] } : {
    for az in var.availability_zones : az => [for address in aws_nat_gateway.this.regional_nat_gateway_address : address.public_ip if contains([address.availability_zone, address.availability_zone_id], az)]
  }
}

output "allocation_ids" {
  description = "AZ name -> the Elastic IP allocation IDs in that AZ (automatic: those AWS assigned)."
  value = local.manual ? { for az, ips in local.ips_by_az : az => [for index in range(ips) : aws_eip.this["${az}/${index}"].allocation_id] } : {
    for az in var.availability_zones : az => [for address in aws_nat_gateway.this.regional_nat_gateway_address : address.allocation_id if contains([address.availability_zone, address.availability_zone_id], az)]
  }
}

output "ips_by_az" {
  description = "AZ name -> IPs modules/sizing gives for the AZ's demand: the Elastic IPs created (manual), or the floor AWS must reach at the peak (automatic)."
  value       = local.ips_by_az
}

output "sizing" {
  description = "AZ name -> modules/sizing's aws_nat_gateway plan (regional mode): ips, demand, per_ip, capacity, headroom, feasible, above_default_eip_quota."
  value       = { for az, plan in module.sizing : az => plan.aws_nat_gateway }
}

output "alarm_arns" {
  description = "The gateway's name -> its ErrorPortAllocation alarm's ARN (empty with alarms = false)."
  value       = { for alarm in aws_cloudwatch_metric_alarm.port_allocation : var.name => alarm.arn }
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
