# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
variable "availability_zones" {
  description = <<-EOT
    The AZs (names such as eu-west-1a, or IDs such as euw1-az1) the gateway is sized for and, with ip_mode =
    "manual", serves with the sized Elastic IPs. In automatic mode AWS also expands to AZs not listed.
  EOT
  type        = list(string)

  validation {
    condition     = length(var.availability_zones) > 0
    error_message = "availability_zones: [] is not allowed; allowed: the AZ names the gateway serves"
  }

  validation {
    condition     = alltrue([for az in var.availability_zones : can(regex(local.nat_facts.az_pattern, az))])
    error_message = join("\n", [for az in var.availability_zones : "availability_zones: '${az}' is not allowed; allowed: an AZ name such as 'eu-west-1a'" if !can(regex(local.nat_facts.az_pattern, az))])
  }

  validation {
    condition     = length(distinct(var.availability_zones)) == length(var.availability_zones)
    error_message = "availability_zones: [${join(", ", [for az in sort(distinct([for i, az in var.availability_zones : az if contains(slice(var.availability_zones, 0, i), az)])) : "'${az}'"])}] is not allowed; allowed: each AZ once"
  }
}

variable "name" {
  description = "The gateway's Name tag, and the prefix of every Elastic IP's and the alarm's."
  type        = string
}

variable "vpc_id" {
  description = "The VPC the regional NAT gateway serves (no public subnet is needed)."
  type        = string
}

variable "alarm_actions" {
  description = "SNS topic ARNs the ErrorPortAllocation alarm notifies. Only with alarms = true."
  type        = list(string)
  default     = null

  validation {
    condition     = var.alarm_actions == null || var.alarms
    error_message = "alarm_actions: 'given' is not allowed; allowed: only with alarms = true"
  }
}

variable "alarms" {
  description = "A CloudWatch alarm on the gateway's ErrorPortAllocation > 0 in any minute (on the NatGatewayId dimension, the one AWS documents: all AZs together)."
  type        = bool
  default     = true
}

variable "ip_count" {
  description = "Elastic IPs per AZ, 1..32, instead of sizing from connections (manual mode only; the plan for ip_count x 55,000 connections)."
  type        = number
  default     = null

  validation {
    condition     = var.ip_count == null ? true : try(var.ip_count == floor(var.ip_count) && var.ip_count >= 1 && var.ip_count <= local.nat_facts.max_ips, false)
    error_message = "ip_count: ${coalesce(tostring(var.ip_count), "null")} is not allowed; allowed: a whole number from 1 to ${local.nat_facts.max_ips}"
  }

  # The rules reading other variables sit here, on the one no other rule reads: Terraform skips the rules that read a
  # variable whose own value was refused, and nothing should be skipped because of it.
  validation {
    condition     = length([for given in [var.peak_connections != null, var.peak_connections_by_az != null, var.ip_count != null] : given if given]) == 1
    error_message = "peak_connections: [${join(", ", [for name, given in { ip_count = var.ip_count != null, peak_connections = var.peak_connections != null, peak_connections_by_az = var.peak_connections_by_az != null } : "'${name}'" if given])}] is not allowed; allowed: exactly one of peak_connections, peak_connections_by_az or ip_count"
  }

  validation {
    condition     = var.ip_count == null || var.ip_mode != "automatic"
    error_message = "ip_count: ${coalesce(tostring(var.ip_count), "null")} is not allowed; allowed: only with ip_mode 'manual' (automatic mode takes no Elastic IPs of yours)"
  }
}

variable "ip_mode" {
  description = <<-EOT
    manual: the sized Elastic IPs per AZ (availability_zone_address), yours to allow-list. automatic: none given;
    AWS adds IPs (up to 32 per AZ) and AZs as workloads need them, and the sized count per AZ is the floor it must
    reach at the peak.
  EOT
  type        = string
  default     = "manual"
  nullable    = false

  validation {
    condition     = contains(local.nat_facts.ip_modes, var.ip_mode)
    error_message = "ip_mode: '${var.ip_mode}' is not allowed; allowed: ${join(" or ", [for m in local.nat_facts.ip_modes : "'${m}'"])}"
  }
}

variable "measured_from" {
  description = <<-EOT
    Where peak_connections (or peak_connections_by_az) was measured: the source line `wirespeed size aws-natgw
    --from-prometheus URL` prints, one line of at most 512 characters. Passed through, trimmed, as the
    measured_from output, so a plan and a pull request show what the IPs were sized from (NatEgressArgs.measured_from).
    Default null: the figure was not measured.
  EOT
  type        = string
  default     = null

  validation {
    condition     = var.measured_from == null ? true : trimspace(var.measured_from) != "" && length(var.measured_from) <= local.nat_facts.max_source_length && !can(regex("[[:cntrl:]]", var.measured_from))
    error_message = "measured_from: '${coalesce(var.measured_from, "null")}' is not allowed; allowed: where the peak was measured, one line of at most ${local.nat_facts.max_source_length} characters (the source line `wirespeed size ... --from-prometheus` prints)"
  }
}

variable "peak_connections" {
  description = <<-EOT
    Peak simultaneous connections from each AZ to its busiest single destination (IP, port, protocol), one figure for
    every AZ: 55,000 per IP, more than 1,760,000 (32 IPs) refused. Give exactly one of peak_connections,
    peak_connections_by_az or ip_count.
  EOT
  type        = number
  default     = null

  validation {
    condition     = var.peak_connections == null ? true : try(var.peak_connections == floor(var.peak_connections) && var.peak_connections >= 1 && var.peak_connections <= local.nat_facts.max_demand, false)
    error_message = "peak_connections: ${coalesce(tostring(var.peak_connections), "null")} is not allowed; allowed: must be a whole number between 1 and ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(local.nat_facts.max_demand)))))}"
  }

  validation {
    condition     = try(var.peak_connections != floor(var.peak_connections) || var.peak_connections < 1 || var.peak_connections > local.nat_facts.max_demand || var.peak_connections <= local.nat_facts.max_ips * local.nat_facts.connections_per_ip, true)
    error_message = "peak_connections: ${coalesce(tostring(var.peak_connections), "null")} is not allowed; allowed: ${var.peak_connections == null ? "" : strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(var.peak_connections)))))} required but ${local.nat_facts.max_ips} IPs per AZ of a regional gateway give at most ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(local.nat_facts.max_ips * local.nat_facts.connections_per_ip)))))} to one destination; spread calls over more destination IPs (each IP, port and protocol counts on its own)"
  }
}

variable "peak_connections_by_az" {
  description = "As peak_connections, one figure per AZ (the same AZs as availability_zones)."
  type        = map(number)
  default     = null

  validation {
    condition     = var.peak_connections_by_az == null ? true : sort(keys(coalesce(var.peak_connections_by_az, {}))) == sort(distinct(var.availability_zones))
    error_message = "peak_connections_by_az: [${join(", ", [for az in sort(keys(coalesce(var.peak_connections_by_az, {}))) : "'${az}'"])}] is not allowed; allowed: one figure per AZ: ${join(", ", sort(distinct(var.availability_zones)))}"
  }

  validation {
    condition     = alltrue([for az, n in coalesce(var.peak_connections_by_az, {}) : n == floor(n) && n >= 1 && n <= local.nat_facts.max_demand if contains(var.availability_zones, az)])
    error_message = join("\n", [for az, n in coalesce(var.peak_connections_by_az, {}) : "peak_connections_by_az['${az}']: ${n} is not allowed; allowed: must be a whole number between 1 and ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(local.nat_facts.max_demand)))))}" if contains(var.availability_zones, az) && !(n == floor(n) && n >= 1 && n <= local.nat_facts.max_demand)])
  }

  validation {
    condition     = alltrue([for az, n in coalesce(var.peak_connections_by_az, {}) : n <= local.nat_facts.max_ips * local.nat_facts.connections_per_ip if contains(var.availability_zones, az) && n == floor(n) && n >= 1 && n <= local.nat_facts.max_demand])
    error_message = join("\n", [for az, n in coalesce(var.peak_connections_by_az, {}) : "peak_connections_by_az['${az}']: ${n} is not allowed; allowed: ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(n)))))} required but ${local.nat_facts.max_ips} IPs per AZ of a regional gateway give at most ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(local.nat_facts.max_ips * local.nat_facts.connections_per_ip)))))} to one destination; spread calls over more destination IPs (each IP, port and protocol counts on its own)" if contains(var.availability_zones, az) && n == floor(n) && n >= 1 && n <= local.nat_facts.max_demand && n > local.nat_facts.max_ips * local.nat_facts.connections_per_ip])
  }
}

variable "private_route_table_ids" {
  description = "AZ name -> private route table: adds its 0.0.0.0/0 route to the regional gateway. Keys must be AZs of availability_zones. Null: routes are wired elsewhere."
  type        = map(string)
  default     = null

  validation {
    condition     = length(setsubtract(keys(coalesce(var.private_route_table_ids, {})), var.availability_zones)) == 0
    error_message = "private_route_table_ids: [${join(", ", [for az in sort(setsubtract(keys(coalesce(var.private_route_table_ids, {})), var.availability_zones)) : "'${az}'"])}] is not allowed; allowed: AZs of availability_zones"
  }
}

variable "tags" {
  description = "AWS tags on the gateway, every Elastic IP and the alarm."
  type        = map(string)
  default     = {}
}
