# terraform test with the real AWS provider's schema (>= 6.24.0, the first with regional NAT gateways) and mocked
# responses (no AWS account): the resources NatEgress registers with mode = "regional", wired as it wires them.
mock_provider "aws" {}

variables {
  name               = "egress"
  vpc_id             = "vpc-0a"
  availability_zones = ["eu-west-1a", "euw1-az2"]
}

run "manual_elastic_ips_per_az" {
  variables {
    peak_connections_by_az  = { "eu-west-1a" = 120000, "euw1-az2" = 600000 }
    private_route_table_ids = { "eu-west-1a" = "rtb-0a", "euw1-az2" = "rtb-0b" }
  }

  # 14 Elastic IPs exceed the Region's default 5: the check warns, the apply goes on.
  expect_failures = [check.region_elastic_ip_quota]

  assert {
    condition     = aws_nat_gateway.this.availability_mode == "regional" && aws_nat_gateway.this.vpc_id == var.vpc_id && aws_nat_gateway.this.subnet_id == null
    error_message = "one regional gateway in the VPC, no subnet"
  }

  assert {
    condition = length(aws_eip.this) == 14 && length(aws_nat_gateway.this.availability_zone_address) == 2 && alltrue([
      for block in aws_nat_gateway.this.availability_zone_address :
      (block.availability_zone == "eu-west-1a" && block.availability_zone_id == null && length(block.allocation_ids) == 3) ||
      (block.availability_zone_id == "euw1-az2" && block.availability_zone == null && length(block.allocation_ids) == 11)
    ])
    error_message = "eu-west-1a: 3 Elastic IPs by AZ name; euw1-az2: 11 by AZ ID"
  }

  assert {
    condition = length(aws_route.default) == 2 && alltrue([
      for az, route in aws_route.default : route.nat_gateway_id == aws_nat_gateway.this.id && route.route_table_id == var.private_route_table_ids[az]
    ])
    error_message = "every private route table: 0.0.0.0/0 to the one gateway"
  }

  assert {
    condition     = length(aws_cloudwatch_metric_alarm.port_allocation) == 1 && aws_cloudwatch_metric_alarm.port_allocation[0].dimensions.NatGatewayId == aws_nat_gateway.this.id
    error_message = "one ErrorPortAllocation alarm on the gateway"
  }

  assert {
    condition     = output.profile_outbound == { kind = "aws-nat-gateway", allocated_ports_per_node = null, public_ips = 3, udp_hold_seconds = 350 }
    error_message = "profile_outbound: one profile for nodes in both AZs states the smaller AZ's 3 IPs (not euw1-az2's 11)"
  }
}

run "automatic_mode_takes_no_elastic_ips" {
  variables {
    ip_mode          = "automatic"
    peak_connections = 900000
    alarms           = false
  }

  assert {
    condition     = length(aws_eip.this) == 0 && length(aws_nat_gateway.this.availability_zone_address) == 0
    error_message = "automatic mode: no Elastic IPs, no availability_zone_address blocks"
  }

  assert {
    condition     = output.ips_by_az == { "eu-west-1a" = 17, "euw1-az2" = 17 }
    error_message = "the floor AWS must reach: 17 IPs per AZ for 900,000 connections"
  }

  assert {
    condition     = output.profile_outbound == { kind = "aws-nat-gateway", allocated_ports_per_node = null, public_ips = 17, udp_hold_seconds = 350 }
    error_message = "profile_outbound: the floor of 17 IPs per AZ (within the kind's bound of 32)"
  }
}

run "more_than_32_ips_per_az_refused" {
  command = plan
  variables {
    peak_connections = 1760001
  }
  expect_failures = [var.peak_connections]
}
