# terraform test with the real AWS provider's schema and mocked responses (no AWS account here): the resources
# NatEgress registers, wired as it wires them.
mock_provider "aws" {}

variables {
  name = "egress"
  public_subnet_ids = {
    "eu-west-1a" = "subnet-0a"
    "eu-west-1b" = "subnet-0b"
    "eu-west-1c" = "subnet-0c"
  }
}

run "three_ips_per_gateway_primary_and_secondaries" {
  variables {
    peak_connections        = 120000
    private_route_table_ids = { "eu-west-1a" = "rtb-0a", "eu-west-1b" = "rtb-0b", "eu-west-1c" = "rtb-0c" }
    alarm_actions           = ["arn:aws:sns:eu-west-1:123456789012:oncall"]
  }

  # 3 IPs exceed the default quota of 2 per gateway, 9 the Region's 5: the checks warn, the apply goes on.
  expect_failures = [check.elastic_ip_quota, check.region_elastic_ip_quota]

  assert {
    condition     = length(aws_eip.this) == 9 && length(aws_nat_gateway.this) == 3
    error_message = "want 3 gateways with 3 Elastic IPs each"
  }

  assert {
    condition = alltrue([for az, gateway in aws_nat_gateway.this :
      gateway.allocation_id == aws_eip.this["${az}/0"].allocation_id &&
      toset(gateway.secondary_allocation_ids) == toset([aws_eip.this["${az}/1"].allocation_id, aws_eip.this["${az}/2"].allocation_id]) &&
      gateway.subnet_id == var.public_subnet_ids[az] && gateway.connectivity_type == "public"
    ])
    error_message = "each gateway: the AZ's first Elastic IP as primary, the other two as secondary, in the AZ's public subnet"
  }

  assert {
    condition = alltrue([for az, route in aws_route.default :
      route.destination_cidr_block == "0.0.0.0/0" && route.nat_gateway_id == aws_nat_gateway.this[az].id && route.route_table_id == var.private_route_table_ids[az]
    ]) && length(aws_route.default) == 3
    error_message = "each private route table: 0.0.0.0/0 to its own AZ's gateway"
  }

  assert {
    condition = alltrue([for az, alarm in aws_cloudwatch_metric_alarm.port_allocation :
      alarm.namespace == "AWS/NATGateway" && alarm.metric_name == "ErrorPortAllocation" && alarm.statistic == "Sum" &&
      alarm.period == 60 && alarm.threshold == 0 && alarm.comparison_operator == "GreaterThanThreshold" &&
      alarm.treat_missing_data == "notBreaching" && alarm.dimensions.NatGatewayId == aws_nat_gateway.this[az].id &&
      alarm.alarm_actions == toset(var.alarm_actions)
    ]) && length(aws_cloudwatch_metric_alarm.port_allocation) == 3
    error_message = "each gateway: an ErrorPortAllocation > 0 alarm over one-minute sums, notifying alarm_actions"
  }

  assert {
    condition     = output.ips_by_az == { "eu-west-1a" = 3, "eu-west-1b" = 3, "eu-west-1c" = 3 } && length(output.public_ips["eu-west-1a"]) == 3
    error_message = "outputs: 3 IPs per AZ"
  }

  assert {
    condition     = output.profile_outbound.kind == "aws-nat-gateway" && output.profile_outbound.public_ips == 3 && output.profile_outbound.allocated_ports_per_node == null && output.profile_outbound.udp_hold_seconds == 350
    error_message = "profile_outbound: the agent watches each destination against the AZ gateway's 3 IPs, UDP held for AWS's 350 s idle timeout"
  }
}

run "one_ip_no_secondaries_no_alarms" {
  variables {
    peak_connections = 55000
    alarms           = false
  }

  assert {
    condition     = length(aws_eip.this) == 3 && alltrue([for gateway in aws_nat_gateway.this : length(coalesce(gateway.secondary_allocation_ids, [])) == 0])
    error_message = "55,000 connections: one Elastic IP per gateway, no secondary allocation"
  }

  assert {
    condition     = length(aws_cloudwatch_metric_alarm.port_allocation) == 0 && length(aws_route.default) == 0
    error_message = "alarms = false and no route tables: no alarm, no route"
  }
}

run "per_az_demand" {
  variables {
    peak_connections_by_az = { "eu-west-1a" = 1, "eu-west-1b" = 110000, "eu-west-1c" = 440000 }
  }

  expect_failures = [check.elastic_ip_quota, check.region_elastic_ip_quota]

  assert {
    condition     = output.ips_by_az == { "eu-west-1a" = 1, "eu-west-1b" = 2, "eu-west-1c" = 8 } && length(aws_eip.this) == 11
    error_message = "per AZ: 1, 2 and 8 Elastic IPs"
  }
}

run "more_than_eight_ips_refused" {
  command = plan
  variables {
    peak_connections = 440001
  }
  expect_failures = [var.peak_connections]
}

run "measured_peak_provenance_passed_through" {
  variables {
    peak_connections = 1000
    measured_from    = " prometheus http://prometheus:9090, max over 7d: 96,000 to 52.1.2.3:443/tcp "
  }

  assert {
    condition     = output.measured_from == "prometheus http://prometheus:9090, max over 7d: 96,000 to 52.1.2.3:443/tcp" && output.ips_by_az["eu-west-1a"] == 1
    error_message = "measured_from: the provenance, trimmed, as NatEgress's output"
  }
}

run "measured_from_on_two_lines_refused" {
  command = plan
  variables {
    peak_connections = 1000
    measured_from    = "prometheus\nhttp://prometheus:9090"
  }
  expect_failures = [var.measured_from]
}
