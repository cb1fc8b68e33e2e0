# What wirespeed.aws.NatEgress registers with mode = "regional": one NAT gateway for the VPC (availability_mode =
# "regional", no subnet), with each AZ's Elastic IPs as an availability_zone_address block (manual), or none at all
# (automatic: AWS adds IPs and AZs itself; adding the blocks later recreates the gateway in manual mode, per the
# provider's docs). The private route tables' default route goes to the one gateway, and one ErrorPortAllocation
# alarm covers it. The IP counts come from modules/sizing (sizing.tf).

resource "aws_eip" "this" {
  for_each = local.eips

  domain = "vpc"
  tags   = merge(var.tags, { Name = "${var.name}-${each.value.az}-${each.value.index}" })
}

resource "aws_nat_gateway" "this" {
  availability_mode = "regional"
  connectivity_type = "public"
  vpc_id            = var.vpc_id

  dynamic "availability_zone_address" {
    for_each = local.manual ? local.ips_by_az : {}
    content {
      allocation_ids = [for index in range(availability_zone_address.value) : aws_eip.this["${availability_zone_address.key}/${index}"].allocation_id]
      # An AZ ID (euw1-az1) goes in availability_zone_id, a name in availability_zone: exactly one of them is set.
      availability_zone    = can(regex(local.nat_facts.az_id_pattern, availability_zone_address.key)) ? null : availability_zone_address.key
      availability_zone_id = can(regex(local.nat_facts.az_id_pattern, availability_zone_address.key)) ? availability_zone_address.key : null
    }
  }

  tags = merge(var.tags, { Name = var.name })
}

resource "aws_route" "default" {
  for_each = coalesce(var.private_route_table_ids, {})

  route_table_id         = each.value
  destination_cidr_block = "0.0.0.0/0"
  nat_gateway_id         = aws_nat_gateway.this.id
}

resource "aws_cloudwatch_metric_alarm" "port_allocation" {
  count = var.alarms ? 1 : 0

  alarm_name        = "${var.name}-port-allocation"
  alarm_description = "Regional NAT gateway ${var.name} failed to allocate source ports: connections are failing. Sized per AZ for connections to one destination: ${join(", ", [for az, plan in module.sizing : "${az} ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(plan.aws_nat_gateway.demand)))))} (${plan.aws_nat_gateway.ips} IP(s))"])}; ${local.manual ? "add Elastic IPs in the AZ that ran out (up to ${local.nat_facts.max_ips} per AZ)" : "AWS adds IPs in automatic mode (up to ${local.nat_facts.max_ips} per AZ): errors mean it has not caught up"}, or spread calls over more destination IPs."
  namespace         = "AWS/NATGateway"
  metric_name       = "ErrorPortAllocation"
  # The dimension AWS documents for NAT gateway metrics (the metrics page lists NatGatewayId only).
  dimensions = { NatGatewayId = aws_nat_gateway.this.id }
  statistic  = "Sum"
  # One-minute datapoints: wirespeed.aws.egress.ALARM_PERIOD_SECONDS, generated into facts.tf.json.
  period              = local.nat_facts.alarm_period_seconds
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  tags                = length(var.tags) > 0 ? var.tags : null
}
