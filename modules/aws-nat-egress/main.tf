# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
# NAT egress in the availability mode asked for: zonal (one gateway per AZ in its public subnet, at most 8 IPs each:
# modules/aws-nat-egress-zonal) or regional (one gateway for the VPC, up to 32 IPs per AZ, manual or automatic:
# modules/aws-nat-egress-regional), as wirespeed.aws.NatEgress(mode=...) builds them. Each is sized by
# modules/sizing from the same demand inputs.

module "zonal" {
  source = "../aws-nat-egress-zonal"
  count  = var.mode == "zonal" ? 1 : 0

  name                    = var.name
  public_subnet_ids       = var.public_subnet_ids
  peak_connections        = var.peak_connections
  peak_connections_by_az  = var.peak_connections_by_az
  ip_count                = var.ip_count
  private_route_table_ids = var.private_route_table_ids
  alarms                  = var.alarms
  alarm_actions           = var.alarm_actions
  tags                    = var.tags
  measured_from           = var.measured_from
}

module "regional" {
  source = "../aws-nat-egress-regional"
  count  = var.mode == "regional" ? 1 : 0

  name                    = var.name
  vpc_id                  = var.vpc_id
  availability_zones      = var.availability_zones
  ip_mode                 = var.ip_mode
  peak_connections        = var.peak_connections
  peak_connections_by_az  = var.peak_connections_by_az
  ip_count                = var.ip_count
  private_route_table_ids = var.private_route_table_ids
  alarms                  = var.alarms
  alarm_actions           = var.alarm_actions
  tags                    = var.tags
  measured_from           = var.measured_from
}
