# terraform test with the real AWS provider's schema (>= 6.24.0: the regional module is called even in zonal mode) and
# mocked responses (no AWS account): each mode builds the chosen module's resources and passes its outputs through.
mock_provider "aws" {}

variables {
  name = "egress"
}

run "zonal_by_default" {
  variables {
    public_subnet_ids      = { "eu-west-1a" = "subnet-0a", "eu-west-1b" = "subnet-0b" }
    peak_connections_by_az = { "eu-west-1a" = 110000, "eu-west-1b" = 55000 }
  }

  # Within the default Elastic IP quotas: a child module's failed check fails a run, and expect_failures takes only
  # the root module's.

  assert {
    condition     = length(module.zonal) == 1 && length(module.regional) == 0
    error_message = "mode zonal: only the zonal module"
  }

  assert {
    condition     = output.ips_by_az == { "eu-west-1a" = 2, "eu-west-1b" = 1 } && length(output.nat_gateway_ids) == 2 && length(output.public_ips["eu-west-1a"]) == 2
    error_message = "the zonal module's gateways and IPs: one gateway per AZ, 2 and 1 IPs"
  }

  assert {
    condition     = output.profile_outbound == { kind = "aws-nat-gateway", allocated_ports_per_node = null, public_ips = 1, udp_hold_seconds = 350 }
    error_message = "profile_outbound: the zonal module's, the smaller AZ's 1 IP"
  }
}

run "regional" {
  variables {
    mode                   = "regional"
    ip_mode                = "automatic"
    vpc_id                 = "vpc-0a"
    availability_zones     = ["eu-west-1a", "eu-west-1b"]
    peak_connections_by_az = { "eu-west-1a" = 600000, "eu-west-1b" = 110000 }
    alarms                 = false
  }

  # Automatic mode: AWS adds the IPs, so no Elastic IP of the module counts against the Region's quota.

  assert {
    condition     = length(module.zonal) == 0 && length(module.regional) == 1
    error_message = "mode regional: only the regional module"
  }

  assert {
    condition     = output.ips_by_az == { "eu-west-1a" = 11, "eu-west-1b" = 2 } && toset(values(output.nat_gateway_ids)) == toset([module.regional[0].nat_gateway_id])
    error_message = "the regional module's one gateway for both AZs, floors of 11 and 2 IPs"
  }

  assert {
    condition     = output.profile_outbound == { kind = "aws-nat-gateway", allocated_ports_per_node = null, public_ips = 2, udp_hold_seconds = 350 }
    error_message = "profile_outbound: the regional module's, the smaller AZ's floor of 2 IPs"
  }
}
