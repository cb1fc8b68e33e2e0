# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
variable "name" {
  description = "Prefix of the Name tag of every gateway, Elastic IP and alarm."
  type        = string
}

variable "alarm_actions" {
  description = "SNS topic ARNs the ErrorPortAllocation alarms notify. Only with alarms = true."
  type        = list(string)
  default     = null
}

variable "alarms" {
  description = "A CloudWatch alarm per gateway on ErrorPortAllocation > 0 in any minute."
  type        = bool
  default     = true
}

variable "availability_zones" {
  description = "Regional (required there): the AZs (names, or IDs such as euw1-az1) the gateway is sized for and, in manual ip_mode, serves."
  type        = list(string)
  default     = null

  validation {
    condition     = var.mode != "regional" || var.availability_zones != null
    error_message = "availability_zones: null is not allowed; allowed: the AZ names the gateway serves"
  }

  validation {
    condition     = var.mode != "zonal" || var.availability_zones == null
    error_message = "availability_zones: 'given' is not allowed; allowed: only with mode 'regional' (zonal: public_subnet_ids)"
  }
}

variable "ip_count" {
  description = "Elastic IPs per AZ instead of sizing from connections: 1..8 (zonal), 1..32 (regional manual)."
  type        = number
  default     = null
}

variable "ip_mode" {
  description = "Regional: manual (the sized Elastic IPs per AZ, yours to allow-list) or automatic (AWS adds IPs and AZs; the sized count per AZ is the floor it must reach). Zonal: manual only."
  type        = string
  default     = "manual"
  nullable    = false

  validation {
    condition     = contains(["manual", "automatic"], var.ip_mode)
    error_message = "ip_mode: '${var.ip_mode}' is not allowed; allowed: 'manual' or 'automatic'"
  }

  validation {
    condition     = var.mode != "zonal" || var.ip_mode != "automatic"
    error_message = "ip_mode: '${var.ip_mode}' is not allowed; allowed: 'manual' with mode 'zonal' (only a regional gateway adds IPs)"
  }
}

variable "measured_from" {
  description = <<-EOT
    Where peak_connections (or peak_connections_by_az) was measured: the source line `wirespeed size aws-natgw
    --from-prometheus URL` prints. The chosen module checks it (one line of at most 512 characters) and passes it
    through as the measured_from output. Default null: the figure was not measured.
  EOT
  type        = string
  default     = null
}

variable "mode" {
  description = "zonal: one NAT gateway per AZ in its public subnet (public_subnet_ids), at most 8 IPs each. regional: one NAT gateway for the VPC (vpc_id, availability_zones), up to 32 IPs per AZ."
  type        = string
  default     = "zonal"
  nullable    = false

  validation {
    condition     = contains(["zonal", "regional"], var.mode)
    error_message = "mode: '${var.mode}' is not allowed; allowed: 'zonal' or 'regional'"
  }
}

variable "peak_connections" {
  description = <<-EOT
    Peak simultaneous connections from each AZ to its busiest single destination (IP, port, protocol), one figure
    for every AZ: 55,000 per IP, at most 8 IPs (zonal) or 32 per AZ (regional). Give exactly one of
    peak_connections, peak_connections_by_az or ip_count.
  EOT
  type        = number
  default     = null
}

variable "peak_connections_by_az" {
  description = "As peak_connections, one figure per AZ (the AZs of public_subnet_ids, or availability_zones)."
  type        = map(number)
  default     = null
}

variable "private_route_table_ids" {
  description = "AZ name -> private route table: adds its 0.0.0.0/0 route to the AZ's gateway (regional: the one gateway). Null: routes are wired elsewhere."
  type        = map(string)
  default     = null
}

variable "public_subnet_ids" {
  description = "Zonal (required there): AZ name -> the public subnet its NAT gateway lives in."
  type        = map(string)
  default     = null

  validation {
    condition     = var.mode != "zonal" || var.public_subnet_ids != null
    error_message = "public_subnet_ids: null is not allowed; allowed: a mapping of AZ name to public subnet ID"
  }

  validation {
    condition     = var.mode != "regional" || var.public_subnet_ids == null
    error_message = "public_subnet_ids: 'given' is not allowed; allowed: only with mode 'zonal' (a regional gateway has none)"
  }
}

variable "tags" {
  description = "AWS tags on every gateway, Elastic IP and alarm."
  type        = map(string)
  default     = {}
}

variable "vpc_id" {
  description = "Regional (required there): the VPC the gateway serves."
  type        = string
  default     = null

  validation {
    condition     = var.mode != "regional" || var.vpc_id != null
    error_message = "vpc_id: null is not allowed; allowed: the VPC's ID: a regional gateway is created in a VPC"
  }

  validation {
    condition     = var.mode != "zonal" || var.vpc_id == null
    error_message = "vpc_id: 'given' is not allowed; allowed: only with mode 'regional' (zonal: public_subnet_ids)"
  }
}
