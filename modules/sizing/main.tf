# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
# The same plan as wirespeed.sizing.azure_lb.plan_load_balancer. Terraform has no exact decimal type, so
# every decimal input is read from its text as an integer numerator over a power-of-ten denominator, and
# every rounding is an integer ceiling division (a - a % b) / b (+1 when a % b > 0): 250 x 64.4% is exactly
# 161 surge nodes and 1.36 x 240 x 1.25 exactly 408 ports, where float ceil() would give 162 and 409.
locals {
  decimal_pattern = "^([0-9]+)(?:\\.([0-9]+))?$"

  lb = var.pools != null
  pools = [for p in coalesce(var.pools, []) : {
    max_count  = p.max_count
    is_percent = endswith(trimspace(p.max_surge), "%")
    surge      = regex(local.decimal_pattern, trimsuffix(trimspace(p.max_surge), "%"))
  }]
  pools_scaled = [for p in local.pools : merge(p, {
    scaled = p.max_count * tonumber("${p.surge[0]}${coalesce(p.surge[1], "0")}")
    per    = 100 * pow(10, length(coalesce(p.surge[1], "0")))
  })]
  pool_rows = [for p in local.pools_scaled : {
    max_count = p.max_count
    surge_nodes = p.is_percent ? (
      # ceil(max_count x numerator / (100 x 10^digits))
      (p.scaled - p.scaled % p.per) / p.per + (p.scaled % p.per > 0 ? 1 : 0)
    ) : tonumber(p.surge[0])
  }]
  pools_out = [for p in local.pool_rows : merge(p, { nodes_at_max = p.max_count + p.surge_nodes })]
  nodes     = sum(concat([0], [for p in local.pools_out : p.nodes_at_max]))

  in_default_table = local.nodes <= local.facts.documented_default_max_nodes
  bracket          = local.in_default_table ? [for row in local.facts.dynamic_default_table : row if local.nodes <= row[0]][0] : null
  dynamic_default  = local.in_default_table ? local.bracket[1] : null
  halves_at        = local.in_default_table ? (local.bracket[0] < local.facts.documented_default_max_nodes ? local.bracket[0] + 1 : null) : null

  # Workload: each value as written (tostring of a Terraform number is its shortest exact decimal).
  workload_parts = var.workload == null ? [] : [
    for v in [var.workload.connections_per_second, var.workload.hold_seconds, var.workload.headroom] :
    regex(local.decimal_pattern, tostring(v))
  ]
  workload_numerator = var.workload == null ? 0 : (
    tonumber("${local.workload_parts[0][0]}${coalesce(local.workload_parts[0][1], "0")}") *
    tonumber("${local.workload_parts[1][0]}${coalesce(local.workload_parts[1][1], "0")}") *
    tonumber("${local.workload_parts[2][0]}${coalesce(local.workload_parts[2][1], "0")}")
  )
  workload_denominator = var.workload == null ? 1 : pow(10, sum([for p in local.workload_parts : length(coalesce(p[1], "0"))]))
  ports_needed = var.workload == null ? 0 : (
    (local.workload_numerator - local.workload_numerator % local.workload_denominator) / local.workload_denominator + (local.workload_numerator % local.workload_denominator > 0 ? 1 : 0)
  )
  granularity = local.facts.port_granularity
  by_workload = ((local.ports_needed - local.ports_needed % local.granularity) / local.granularity + (local.ports_needed % local.granularity > 0 ? 1 : 0)) * local.granularity
  allocated = var.allocated_outbound_ports != null ? var.allocated_outbound_ports : (
    local.dynamic_default == null ? local.by_workload : max(local.by_workload, local.dynamic_default)
  )

  ports_infeasible = var.workload != null && local.allocated > local.facts.max_ports_per_node
  required         = local.allocated * local.nodes
  ips_needed       = max(1, (local.required - local.required % local.facts.ports_per_ip) / local.facts.ports_per_ip + (local.required % local.facts.ports_per_ip > 0 ? 1 : 0))
  ips              = var.outbound_ips != null ? var.outbound_ips : local.ips_needed
  ips_infeasible   = var.outbound_ips == null && local.ips_needed > local.facts.max_outbound_ips
  available        = local.ips * local.facts.ports_per_ip

  infeasible = !local.lb ? null : local.ports_infeasible ? {
    field     = "ports per node"
    required  = local.allocated
    available = local.facts.max_ports_per_node
    } : local.ips_infeasible ? {
    field     = "outbound IPs"
    required  = local.required
    available = local.facts.max_outbound_ips * local.facts.ports_per_ip
  } : null
}

# NAT gateways, as wirespeed.sizing.nat_gateway: ports (Azure) or connections to one destination (AWS) are
# shared by all nodes, so the IP count is ceil(demand / per IP), at least 1. AWS: at most 8 IPs on a zonal gateway,
# 32 per AZ on a regional one.
locals {
  nat_inputs = {
    azure = var.azure_nat_gateway_flows == null ? null : {
      field = "flows", demand = var.azure_nat_gateway_flows, per_ip = local.facts.azure_nat_ports_per_ip, max_ips = local.facts.azure_nat_max_ips
    }
    aws = var.aws_nat_gateway_connections == null ? null : {
      field   = "connections", demand = var.aws_nat_gateway_connections, per_ip = local.facts.aws_nat_connections_per_ip
      max_ips = var.aws_nat_gateway_mode == "regional" ? local.facts.aws_nat_regional_max_ips : local.facts.aws_nat_max_ips
    }
  }
  nat = { for cloud, n in local.nat_inputs : cloud => n == null ? null : merge(n, {
    ips = max(1, (n.demand - n.demand % n.per_ip) / n.per_ip + (n.demand % n.per_ip > 0 ? 1 : 0))
  }) }
  nat_out = { for cloud, n in local.nat : cloud => n == null ? null : {
    cloud      = cloud
    demand     = n.demand
    ips        = n.ips
    per_ip     = n.per_ip
    capacity   = n.ips * n.per_ip
    headroom   = n.ips * n.per_ip - n.demand
    feasible   = n.ips <= n.max_ips
    infeasible = n.ips <= n.max_ips ? null : { field = n.field, required = n.demand, available = n.max_ips * n.per_ip }
  } }
}

# netdev_max_backlog, as wirespeed.sizing.backlog (wirespeed.sizing.queues.Need.recommended): packets arriving
# during the stall, rounded up once on exact decimals (rate x 10^9 / ((bytes + Ethernet overhead) x 8) x stall /
# 1,000); the kernel default when it holds them, else the next power of two within AKS's range. tests/vectors/
# sizing_backlog.json, generated from the Python, holds the two equal.
locals {
  backlog_on    = var.backlog != null
  backlog_rate  = local.backlog_on ? regex(local.decimal_pattern, tostring(var.backlog.line_rate_gbps)) : ["0", null]
  backlog_stall = regex(local.decimal_pattern, tostring(local.backlog_on ? coalesce(var.backlog.stall_ms, local.facts.backlog_default_stall_ms) : 1))
  backlog_bytes = local.backlog_on ? coalesce(var.backlog.packet_bytes, local.facts.default_packet_bytes) : local.facts.default_packet_bytes
  backlog_numerator = (
    tonumber("${local.backlog_rate[0]}${coalesce(local.backlog_rate[1], "0")}") *
    tonumber("${local.backlog_stall[0]}${coalesce(local.backlog_stall[1], "0")}") * 1000000
  )
  backlog_denominator = (
    pow(10, length(coalesce(local.backlog_rate[1], "0")) + length(coalesce(local.backlog_stall[1], "0"))) *
    (local.backlog_bytes + local.facts.ethernet_overhead_bytes) * 8
  )
  backlog_packets = max(1,
    (local.backlog_numerator - local.backlog_numerator % local.backlog_denominator) / local.backlog_denominator +
    (local.backlog_numerator % local.backlog_denominator > 0 ? 1 : 0)
  )
  backlog_wanted = [for e in range(0, 64) : pow(2, e) if pow(2, e) >= local.backlog_packets][0]
  backlog_value = (
    local.backlog_packets <= local.facts.backlog_kernel_default ? local.facts.backlog_kernel_default :
    min(local.backlog_wanted, local.facts.backlog_max)
  )
  backlog_out = local.backlog_on ? {
    netdev_max_backlog   = local.backlog_value
    packets_in_stall     = local.backlog_packets
    capped_at_aks_max    = local.backlog_wanted > local.facts.backlog_max
    memory_bytes_per_cpu = local.backlog_value * (local.backlog_bytes + local.facts.skb_overhead_bytes)
  } : null
}

# NIC rings, as wirespeed.sizing.rings.plan_rings (wirespeed.sizing.queues.Need.recommended): the packets arriving
# during the stall (the backlog's exact arithmetic above), then per direction the driver's default when it holds
# them, else the smallest ring the driver keeps unchanged that holds them (NicDriver.ring_holding): the request follows the driver's rounding rule, except that a down-rounding driver
# (ENA) is asked for the next power of two up (asked for 8,128 it would keep 4,096, so sizing asks for 8,192);
# the driver then applies its own rule (which leaves that request as it is) and clamps to its [min, max].
locals {
  rings_on         = var.rings != null
  ring_driver_name = try(lower(trimspace(var.rings.driver)), "")
  ring_driver      = try(local.facts.nic_drivers[local.ring_driver_name], null)
  # Every later value is computed only for input the validation rules accept, so a refused input shows the
  # rule's message alone.
  ring_ok = try(local.rings_on && local.ring_driver.rx != null, false)

  ring_rate  = local.ring_ok ? regex(local.decimal_pattern, tostring(var.rings.line_rate_gbps)) : ["1", null]
  ring_stall = regex(local.decimal_pattern, tostring(local.ring_ok ? coalesce(var.rings.stall_ms, local.facts.ring_default_stall_ms) : 1))
  ring_bytes = local.ring_ok ? coalesce(var.rings.packet_bytes, local.facts.default_packet_bytes) : local.facts.default_packet_bytes
  ring_numerator = (
    tonumber("${local.ring_rate[0]}${coalesce(local.ring_rate[1], "0")}") *
    tonumber("${local.ring_stall[0]}${coalesce(local.ring_stall[1], "0")}") * 1000000
  )
  ring_denominator = (
    pow(10, length(coalesce(local.ring_rate[1], "0")) + length(coalesce(local.ring_stall[1], "0"))) *
    (local.ring_bytes + local.facts.ethernet_overhead_bytes) * 8
  )
  ring_packets = max(1,
    (local.ring_numerator - local.ring_numerator % local.ring_denominator) / local.ring_denominator +
    (local.ring_numerator % local.ring_denominator > 0 ? 1 : 0)
  )

  ring_rounding = local.ring_ok ? local.ring_driver.rounding : "none"
  ring_rule     = local.ring_rounding == "down_power_of_two" ? "up_power_of_two" : local.ring_rounding
  ring_asked = (
    local.ring_rule == "up_power_of_two" ? [for e in range(0, 64) : pow(2, e) if pow(2, e) >= local.ring_packets][0] :
    local.ring_rule == "multiple_of_8" ? ceil(local.ring_packets / 8) * 8 : local.ring_packets
  )
  ring_kept = (
    local.ring_rounding == "up_power_of_two" ? [for e in range(0, 64) : pow(2, e) if pow(2, e) >= local.ring_asked][0] :
    local.ring_rounding == "down_power_of_two" ? [for e in range(63, -1, -1) : pow(2, e) if pow(2, e) <= local.ring_asked][0] :
    local.ring_rounding == "multiple_of_8" ? ceil(local.ring_asked / 8) * 8 : local.ring_asked
  )
  ring_sizes = { for direction in ["rx", "tx"] : direction => (
    !local.ring_ok ? 0 :
    local.ring_driver[direction].default >= local.ring_packets ? local.ring_driver[direction].default :
    max(local.ring_driver[direction].min, min(local.ring_driver[direction].max, local.ring_kept))
  ) }
  ring_queues = local.ring_ok ? coalesce(var.rings.queues, local.facts.ring_default_queues) : local.facts.ring_default_queues

  rings_out = local.ring_ok ? {
    driver                  = local.ring_driver_name
    rx                      = local.ring_sizes.rx
    tx                      = local.ring_sizes.tx
    rx_default              = local.ring_driver.rx.default
    tx_default              = local.ring_driver.tx.default
    packets_in_stall        = local.ring_packets
    rx_capped_at_driver_max = local.ring_sizes.rx < local.ring_packets
    tx_capped_at_driver_max = local.ring_sizes.tx < local.ring_packets
    queues                  = local.ring_queues
    memory_bytes            = local.ring_sizes.rx * local.ring_driver.rx_buffer_bytes * local.ring_queues
    extra_memory_bytes      = (local.ring_sizes.rx - local.ring_driver.rx.default) * local.ring_driver.rx_buffer_bytes * local.ring_queues
  } : null
}
