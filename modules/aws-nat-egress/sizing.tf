# The IP count per AZ comes from modules/sizing (wirespeed.sizing.nat_gateway): 55,000 connections per IP to one
# destination, rounded up, at least 1.
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
  # the tightest AZ. The per-AZ fleet view is the alert WirespeedNATGatewayAZPressure.
  profile_outbound = length(local.ips_by_az) == 0 ? null : {
    kind                     = local.nat_facts.profile_kind
    allocated_ports_per_node = null
    public_ips               = min(values(local.ips_by_az)...)
  }
}

# More Elastic IPs than the account's default quota per gateway is allowed but needs a quota increase first:
# a warning, as wirespeed.sizing.nat_gateway gives, not an error.
check "elastic_ip_quota" {
  assert {
    condition     = alltrue([for az, plan in module.sizing : !plan.aws_nat_gateway.above_default_eip_quota])
    error_message = join("\n", [for az, plan in module.sizing : "${az}: Warning: ${plan.aws_nat_gateway.ips} IPs exceed the default quota of ${local.nat_facts.default_eip_quota} Elastic IPs per NAT gateway; request an increase (Service Quotas, 'Elastic IP addresses per public NAT gateway') first." if plan.aws_nat_gateway.above_default_eip_quota])
  }
}
