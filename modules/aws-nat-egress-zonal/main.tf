# What wirespeed.aws.NatEgress registers: per AZ, one public NAT gateway with its Elastic IPs (the first as the
# primary allocation, the rest as secondary_allocation_ids, never mixed with aws_nat_gateway_eip_association,
# which would fight over the same list), the private route tables' default route, and an ErrorPortAllocation
# alarm. The IP counts come from modules/sizing (sizing.tf).

resource "aws_eip" "this" {
  for_each = local.eips

  domain = "vpc"
  tags   = merge(var.tags, { Name = "${var.name}-${each.value.az}-${each.value.index}" })
}

resource "aws_nat_gateway" "this" {
  for_each = local.ips_by_az

  connectivity_type        = "public"
  subnet_id                = var.public_subnet_ids[each.key]
  allocation_id            = aws_eip.this["${each.key}/0"].allocation_id
  secondary_allocation_ids = each.value > 1 ? [for index in range(1, each.value) : aws_eip.this["${each.key}/${index}"].allocation_id] : null
  tags                     = merge(var.tags, { Name = "${var.name}-${each.key}" })
}

resource "aws_route" "default" {
  for_each = coalesce(var.private_route_table_ids, {})

  route_table_id         = each.value
  destination_cidr_block = "0.0.0.0/0"
  nat_gateway_id         = aws_nat_gateway.this[each.key].id
}

resource "aws_cloudwatch_metric_alarm" "port_allocation" {
  for_each = var.alarms ? local.ips_by_az : {}

  alarm_name        = "${var.name}-${each.key}-port-allocation"
  alarm_description = "NAT gateway ${var.name} in ${each.key} failed to allocate source ports: connections are failing. Sized for ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(module.sizing[each.key].aws_nat_gateway.demand)))))} connections to one destination (${each.value} IP(s)); add IPs (up to ${local.nat_facts.max_ips}) or spread calls over more destination IPs."
  namespace         = "AWS/NATGateway"
  metric_name       = "ErrorPortAllocation"
  dimensions        = { NatGatewayId = aws_nat_gateway.this[each.key].id }
  statistic         = "Sum"
  # One-minute datapoints: wirespeed.aws.egress.ALARM_PERIOD_SECONDS, generated into facts.tf.json.
  period              = local.nat_facts.alarm_period_seconds
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  tags                = length(var.tags) > 0 ? var.tags : null
}
