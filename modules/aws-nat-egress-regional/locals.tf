# Each AZ's demand in connections to its busiest destination, as wirespeed.aws.egress.plan_egress reads it: one
# figure for every AZ, one per AZ, or an explicit IP count as that many IPs' worth of connections. Only demands
# the rules accept reach modules/sizing, so a refused input is reported once, by this module's own rule.
locals {
  demand_by_az = {
    for az in distinct(var.availability_zones) : az => (
      var.ip_count != null ? var.ip_count * local.nat_facts.connections_per_ip :
      var.peak_connections != null ? var.peak_connections : try(var.peak_connections_by_az[az], null)
    )
  }
  sized_demand = {
    for az, demand in local.demand_by_az : az => demand
    if try(demand == floor(demand) && demand >= 1 && demand <= local.nat_facts.max_ips * local.nat_facts.connections_per_ip, false)
  }
  manual = var.ip_mode == "manual"
}

# What the measured_from output carries (NatEgress registers the same): the provenance without its padding.
locals {
  measured_from = var.measured_from == null ? null : trimspace(var.measured_from)
}
