# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
# The IP count per AZ comes from modules/sizing (wirespeed.sizing.nat_gateway, regional mode): 55,000 connections per
# IP to one destination, rounded up, at least 1, at most 32 per AZ. In automatic mode it is the floor AWS must reach
# at the peak: no Elastic IP is created for it.
module "sizing" {
  source   = "../sizing"
  for_each = local.sized_demand

  aws_nat_gateway_connections = each.value
  aws_nat_gateway_mode        = "regional"
}

locals {
  ips_by_az = { for az, plan in module.sizing : az => plan.aws_nat_gateway.ips }
  eips = { for key, eip in merge([
    for az, ips in local.ips_by_az : { for index in range(ips) : "${az}/${index}" => { az = az, index = index } }
  ]...) : key => eip if local.manual }
  # The tuning profile's outbound section for nodes behind the gateway (wirespeed.aws.snat.nat_gateway_outbound): the
  # smallest AZ's IPs (automatic: the smallest floor), as one profile serves nodes in every AZ, and at most the
  # profile's bound for public_ips: SNATPortPressure then fires early in a bigger AZ, never late in the tightest.
  # Null while no AZ is sized (a refused input).
  profile_outbound = length(local.ips_by_az) == 0 ? null : {
    kind                     = local.nat_facts.profile_kind
    allocated_ports_per_node = null
    public_ips               = min(local.nat_facts.profile_max_public_ips, values(local.ips_by_az)...)
    udp_hold_seconds         = local.nat_facts.profile_udp_hold_seconds
  }
}

# More Elastic IPs than the Region's default quota is allowed but needs the quota raised first: a warning, as
# wirespeed.sizing.aws_nat gives it. (AWS documents the per-gateway quota for zonal gateways; a regional one takes
# up to 32 IPs per AZ.)
check "region_elastic_ip_quota" {
  assert {
    condition     = length(local.eips) <= local.nat_facts.region_eip_quota
    error_message = "Warning: ${length(local.eips)} Elastic IPs in all exceed the default quota of ${local.nat_facts.region_eip_quota} Elastic IPs per Region; raise ${local.nat_facts.region_quota_label} to at least ${length(local.eips)} (plus the Elastic IPs the Region already holds) first."
  }
}
