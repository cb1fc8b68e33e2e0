# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
variable "name" {
  description = "Prefix of the Name tag of every gateway, Elastic IP and alarm."
  type        = string
}

variable "public_subnet_ids" {
  description = "AZ name -> the public subnet its NAT gateway lives in: one gateway per AZ (a gateway serves its own AZ; routing another AZ through it adds cross-AZ cost and a shared failure)."
  type        = map(string)

  validation {
    condition     = length(var.public_subnet_ids) > 0
    error_message = "public_subnet_ids: {} is not allowed; allowed: a mapping of AZ name to public subnet ID"
  }

  validation {
    condition     = alltrue([for az, subnet in var.public_subnet_ids : can(regex(local.nat_facts.az_pattern, az))])
    error_message = join("\n", [for az, subnet in var.public_subnet_ids : "public_subnet_ids['${az}']: '${az}' is not allowed; allowed: an AZ name such as 'eu-west-1a'" if !can(regex(local.nat_facts.az_pattern, az))])
  }
}

variable "alarm_actions" {
  description = "SNS topic ARNs the ErrorPortAllocation alarms notify. Only with alarms = true."
  type        = list(string)
  default     = null

  validation {
    condition     = var.alarm_actions == null || var.alarms
    error_message = "alarm_actions: 'given' is not allowed; allowed: only with alarms = true"
  }
}

variable "alarms" {
  description = "A CloudWatch alarm per gateway on ErrorPortAllocation > 0 in any minute (the gateway could not allocate a source port: connections are failing)."
  type        = bool
  default     = true
}

variable "ip_count" {
  description = "Elastic IPs per gateway, 1..8, instead of sizing from connections (the plan for ip_count x 55,000 connections)."
  type        = number
  default     = null

  validation {
    condition     = var.ip_count == null ? true : try(var.ip_count == floor(var.ip_count) && var.ip_count >= 1 && var.ip_count <= local.nat_facts.max_ips, false)
    error_message = "ip_count: ${coalesce(tostring(var.ip_count), "null")} is not allowed; allowed: a whole number from 1 to ${local.nat_facts.max_ips}"
  }

  # The rule reading three variables sits here, on the one no other rule reads: Terraform skips the rules that
  # read a variable whose own value was refused, and nothing should be skipped because of it.
  validation {
    condition     = length([for given in [var.peak_connections != null, var.peak_connections_by_az != null, var.ip_count != null] : given if given]) == 1
    error_message = "peak_connections: [${join(", ", [for name, given in { ip_count = var.ip_count != null, peak_connections = var.peak_connections != null, peak_connections_by_az = var.peak_connections_by_az != null } : "'${name}'" if given])}] is not allowed; allowed: exactly one of peak_connections, peak_connections_by_az or ip_count"
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
    every AZ: 55,000 per IP, more than 440,000 (8 IPs) refused (a regional gateway carries up to 32 IPs per AZ). Give
    exactly one of peak_connections, peak_connections_by_az or ip_count.
  EOT
  type        = number
  default     = null

  validation {
    condition     = var.peak_connections == null ? true : try(var.peak_connections == floor(var.peak_connections) && var.peak_connections >= 1 && var.peak_connections <= local.nat_facts.max_demand, false)
    error_message = "peak_connections: ${coalesce(tostring(var.peak_connections), "null")} is not allowed; allowed: must be a whole number between 1 and ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(local.nat_facts.max_demand)))))}"
  }

  validation {
    condition     = try(var.peak_connections != floor(var.peak_connections) || var.peak_connections < 1 || var.peak_connections > local.nat_facts.max_demand || var.peak_connections <= local.nat_facts.max_ips * local.nat_facts.connections_per_ip, true)
    error_message = "peak_connections: ${coalesce(tostring(var.peak_connections), "null")} is not allowed; allowed: ${var.peak_connections == null ? "" : strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(var.peak_connections)))))} required but ${local.nat_facts.max_ips} IPs give at most ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(local.nat_facts.max_ips * local.nat_facts.connections_per_ip)))))} to one destination; use a regional NAT gateway (up to ${local.nat_facts.regional_max_ips} IPs per AZ) or spread calls over more destination IPs"
  }
}

variable "peak_connections_by_az" {
  description = "As peak_connections, one figure per AZ (the same keys as public_subnet_ids)."
  type        = map(number)
  default     = null

  validation {
    condition     = var.peak_connections_by_az == null ? true : sort(keys(coalesce(var.peak_connections_by_az, {}))) == sort(keys(var.public_subnet_ids))
    error_message = "peak_connections_by_az: [${join(", ", [for az in sort(keys(coalesce(var.peak_connections_by_az, {}))) : "'${az}'"])}] is not allowed; allowed: one figure per AZ: ${join(", ", sort(keys(var.public_subnet_ids)))}"
  }

  validation {
    condition     = alltrue([for az, n in coalesce(var.peak_connections_by_az, {}) : n == floor(n) && n >= 1 && n <= local.nat_facts.max_demand if contains(keys(var.public_subnet_ids), az)])
    error_message = join("\n", [for az, n in coalesce(var.peak_connections_by_az, {}) : "peak_connections_by_az['${az}']: ${n} is not allowed; allowed: must be a whole number between 1 and ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(local.nat_facts.max_demand)))))}" if contains(keys(var.public_subnet_ids), az) && !(n == floor(n) && n >= 1 && n <= local.nat_facts.max_demand)])
  }

  validation {
    condition     = alltrue([for az, n in coalesce(var.peak_connections_by_az, {}) : n <= local.nat_facts.max_ips * local.nat_facts.connections_per_ip if contains(keys(var.public_subnet_ids), az) && n == floor(n) && n >= 1 && n <= local.nat_facts.max_demand])
    error_message = join("\n", [for az, n in coalesce(var.peak_connections_by_az, {}) : "peak_connections_by_az['${az}']: ${n} is not allowed; allowed: ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(n)))))} required but ${local.nat_facts.max_ips} IPs give at most ${strrev(join(",", regexall("[0-9]{1,3}", strrev(tostring(local.nat_facts.max_ips * local.nat_facts.connections_per_ip)))))} to one destination; use a regional NAT gateway (up to ${local.nat_facts.regional_max_ips} IPs per AZ) or spread calls over more destination IPs" if contains(keys(var.public_subnet_ids), az) && n == floor(n) && n >= 1 && n <= local.nat_facts.max_demand && n > local.nat_facts.max_ips * local.nat_facts.connections_per_ip])
  }
}

variable "private_route_table_ids" {
  description = "AZ name -> private route table: adds its 0.0.0.0/0 route to that AZ's gateway. Keys must be AZs of public_subnet_ids. Null: routes are wired elsewhere."
  type        = map(string)
  default     = null

  validation {
    condition     = length(setsubtract(keys(coalesce(var.private_route_table_ids, {})), keys(var.public_subnet_ids))) == 0
    error_message = "private_route_table_ids: [${join(", ", [for az in sort(setsubtract(keys(coalesce(var.private_route_table_ids, {})), keys(var.public_subnet_ids))) : "'${az}'"])}] is not allowed; allowed: AZs of public_subnet_ids"
  }
}

variable "tags" {
  description = "AWS tags on every gateway, Elastic IP and alarm."
  type        = map(string)
  default     = {}
}
