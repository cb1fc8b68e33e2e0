# terraform test with a mock azurerm provider: created public IPs, the load balancer and NAT gateway profiles,
# and the refusals. Run by tests/terratest (TestAksOutboundWithProvider) when the azurerm plugin is in the mirror.
mock_provider "azurerm" {}

variables {
  pools                    = [{ max_count = 100, max_surge = "10%" }]
  allocated_outbound_ports = 2048
  ip_mode                  = "created"
  resource_group_name      = "rg"
  location                 = "westeurope"
}

run "created_public_ips" {
  # apply: the mock provider gives the created IPs their IDs, which the load balancer profile then lists.
  command = apply

  assert {
    # 2,048 ports x 110 nodes = 225,280 ports: 4 IPs of 64,000.
    condition     = length(azurerm_public_ip.outbound) == 4 && length(output.load_balancer_profile.outbound_ip_address_ids) == 4
    error_message = "4 created IPs, all given to the load balancer"
  }
  assert {
    condition = alltrue([for ip in azurerm_public_ip.outbound : (
      ip.sku == "Standard" && ip.allocation_method == "Static" && toset(ip.zones) == toset(["1", "2", "3"])
    )])
    error_message = "Standard, static, zone-redundant"
  }
  assert {
    condition     = output.load_balancer_profile.outbound_ports_allocated == 2048 && output.load_balancer_profile.managed_outbound_ip_count == null
    error_message = "explicit ports, no managed IPs"
  }
}

run "managed_ips" {
  command = plan

  variables {
    ip_mode = "managed"
  }

  assert {
    condition     = length(azurerm_public_ip.outbound) == 0 && output.load_balancer_profile.managed_outbound_ip_count == 4 && output.load_balancer_profile.idle_timeout_in_minutes == 30
    error_message = "managed IPs"
  }
}

run "nat_gateway" {
  command = plan

  variables {
    outbound_type            = "managedNATGateway"
    allocated_outbound_ports = null
    ip_mode                  = "managed"
    nat_gateway_flows        = 100000
  }

  assert {
    condition     = output.load_balancer_profile == null && output.nat_gateway_profile.managed_outbound_ip_count == 2 && output.nat_gateway_profile.idle_timeout_in_minutes == 4
    error_message = "100,000 flows need 2 NAT gateway IPs of 64,512"
  }
}

run "refuses_ports_not_a_multiple_of_8" {
  command = plan

  variables {
    allocated_outbound_ports = 1020
  }

  expect_failures = [var.allocated_outbound_ports]
}

run "refuses_an_infeasible_plan" {
  command = plan

  variables {
    ip_mode                  = "managed"
    allocated_outbound_ports = 4096
    outbound_ip_count        = 2
  }

  expect_failures = [output.sizing]
}
