# A plan of the example with a mock azurerm provider (no Azure credentials needed).
mock_provider "azurerm" {}

run "plan" {
  command = plan

  assert {
    # 8 conn/s x 240 s x 1.25 = 2,400 ports; (3 + 1) + (200 + 20) = 224 nodes x 2,400 = 537,600: 9 IPs.
    condition     = output.outbound_ports_allocated == 2400 && output.public_ip_count == 9
    error_message = "outbound sizing"
  }
}
