################################################################################
# Outbound public IPs (ip_mode = "created")
################################################################################

# As the Pulumi cluster component's "created" mode: addresses you own and can give partners to allowlist.
resource "azurerm_public_ip" "outbound" {
  count = local.public_ip_count

  name                = "${var.public_ip_name_prefix}-${count.index + 1}"
  resource_group_name = var.resource_group_name
  location            = var.location
  sku                 = "Standard"
  allocation_method   = "Static"
  ip_version          = "IPv4"
  # Zone-redundant: the address survives a zone outage, so partners' allowlists stay valid.
  zones = ["1", "2", "3"]
  tags  = var.tags
}
