# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
# The IP count per AZ comes from modules/sizing (wirespeed.sizing.nat_gateway): 55,000 connections per IP to one
# destination, rounded up, at least 1, at most 8 on a zonal gateway.
module "sizing" {
  source   = "../sizing"
  for_each = local.sized_demand

  aws_nat_gateway_connections = each.value
}

locals {
  ips_by_az = { for az, plan in module.sizing : az => plan.aws_nat_gateway.ips }
  eips = merge([
    for az, ips in local.ips_by_az : { for index in range(ips) : "${az}/${index}" => { az = az, index = index } }
  ]...)
  # The tuning profile's outbound section for nodes behind these gateways (wirespeed.aws.snat.nat_gateway_outbound):
  # one profile serves nodes in every AZ, so it states the smallest AZ's IPs and SNATPortPressure is never late in
  # the tightest AZ; the per-AZ fleet view is the alert WirespeedNATGatewayAZPressure. Null while no AZ is sized
  # (a refused input).
  profile_outbound = length(local.ips_by_az) == 0 ? null : {
    kind                     = local.nat_facts.profile_kind
    allocated_ports_per_node = null
    public_ips               = min(local.nat_facts.profile_max_public_ips, values(local.ips_by_az)...)
    udp_hold_seconds         = local.nat_facts.profile_udp_hold_seconds
  }
}

# More Elastic IPs than an account quota's default is allowed but needs the quota raised first: warnings, as
# wirespeed.sizing.aws_nat gives them, not errors. Per gateway ('Elastic IP addresses per public NAT gateway') and
# for the Region ('Elastic IP addresses per Region': every Elastic IP this module allocates counts).
check "elastic_ip_quota" {
  assert {
    condition     = alltrue([for az, plan in module.sizing : !plan.aws_nat_gateway.above_default_eip_quota])
    error_message = join("\n", [for az, plan in module.sizing : "${az}: Warning: ${plan.aws_nat_gateway.ips} IPs exceed the default quota of ${local.nat_facts.default_eip_quota} Elastic IPs per NAT gateway; raise ${local.nat_facts.gateway_quota_label} to ${plan.aws_nat_gateway.ips} first." if plan.aws_nat_gateway.above_default_eip_quota])
  }
}

check "region_elastic_ip_quota" {
  assert {
    condition     = length(local.eips) <= local.nat_facts.region_eip_quota
    error_message = "Warning: ${length(local.eips)} Elastic IPs in all exceed the default quota of ${local.nat_facts.region_eip_quota} Elastic IPs per Region; raise ${local.nat_facts.region_quota_label} to at least ${length(local.eips)} (plus the Elastic IPs the Region already holds) first."
  }
}
