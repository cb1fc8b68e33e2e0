# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""Alert rules and a Grafana dashboard for a fleet of tuned nodes: the answers `wirespeed-agent diagnose` gives on
one node, across every node.

The series are the agent's (``wirespeed_agent_*``, agent/internal/metrics/README.md) and node-exporter's default
collectors (softnet, netdev, conntrack), which the agent deliberately does not duplicate. Each alert says the known
cause and the fix in the words diagnose uses; the SNAT alerts read the agent's per-destination accounting. Three
shapes of one rule set: a plain Prometheus rules file (:func:`rules_file`), a Prometheus Operator ``PrometheusRule``
(:func:`prometheus_rule`) emitted beside the tuning manifests, and the dashboard JSON (:func:`dashboard`), built
with grafana-foundation-sdk rather than typed by hand.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from wirespeed.manifests.metadata import metadata
from wirespeed.names import (
    AGENT_NAME,
    PROBE_NODE_SETTING_CAUSES,
    PROBE_RTT,
    PROBE_TAILS,
    SNAT_ALLOCATED_PORTS,
    SNAT_OTHER_DESTINATION,
    SNAT_OTHER_WORKLOAD,
    SNAT_PORTS_IN_USE,
    SNAT_PORTS_IN_USE_BY_WORKLOAD,
    SNAT_PORTS_IN_USE_MAX,
    SNAT_PORTS_PEAK,
)
from wirespeed.sizing import nat_gateway, snat_limits

Obj = dict[str, Any]

GROUP = "wirespeed-node-network"
# The PodMonitor's scrape job is "<namespace>/<name>"; a hand-written scrape config usually names it after the
# agent. The regex matches both.
AGENT_JOB = f".*{AGENT_NAME}.*"
RULE_WINDOW = "5m"  # rate() window: 10 scrapes at the PodMonitor's 30 s interval
# WirespeedRetransmissionTails' window: 15 probe rounds (the agent counts tails when a round ends, every minute by
# default); at the probe's defaults (32 round trips/s per node, agent/internal/probe) 28,800 round trips, so one
# tail is 35 per million of them.
TAILS_WINDOW = "15m"
DASHBOARD_UID = "wirespeed-node-network"
# Grafana's dashboard UID rule: "can have a maximum length of 40 characters" of letters, digits, '-' and '_'
# (grafana.com/docs/grafana/latest/developers/http_api/dashboard/, "Identifier (id) vs unique identifier (uid)").
_UID = re.compile(r"[A-Za-z0-9_-]{1,40}")


def check_dashboard_uid(uid: str) -> str | None:
    """None when ``uid`` is a valid Grafana dashboard UID, else why not."""
    if _UID.fullmatch(uid):
        return None
    return f"{uid!r} is not allowed; allowed: a Grafana dashboard UID: letters, digits, '-' and '_', 1-40 characters"


@dataclass(frozen=True, slots=True)
class Alert:
    """One alert rule. ``summary``/``description`` may use ``{{ $labels.<name> }}`` (never ``$value``, so tests
    can state the exact annotations)."""

    name: str
    expr: str
    for_: str
    severity: str
    summary: str
    description: str
    fix: str
    # A template that queries Prometheus when the alert fires (the SNAT alerts: the workloads holding the ports).
    workloads: str = ""

    def rule(self) -> Obj:
        annotations = {"summary": self.summary, "description": self.description, "fix": self.fix}
        if self.workloads:
            annotations["workloads"] = self.workloads
        return {
            "alert": self.name,
            "expr": self.expr,
            "for": self.for_,
            "labels": {"severity": self.severity},
            "annotations": annotations,
        }


# SNATPortPressure's threshold by default (wirespeed.sizing.snat_limits): the alerts fire where the Node condition does
# for a profile that keeps the default; the agent exports the capacity, not each profile's threshold.
SNAT_PRESSURE_RATIO = snat_limits.DEFAULT_PRESSURE_PERCENT / 100
_ONE_DESTINATION = f'destination!="{SNAT_OTHER_DESTINATION}"'  # "other" is many destinations summed
_NODE_SETTING_CAUSES = "|".join(PROBE_NODE_SETTING_CAUSES)
_AWS_NAT = f'{SNAT_ALLOCATED_PORTS}{{kind="{snat_limits.AWS_NAT_GATEWAY}"}}'


# The labels the agent's per-workload series names a workload by (agent/internal/metrics/README.md).
_WORKLOAD_LABELS = "namespace, workload, kind"


# How many workloads the SNAT alerts' `workloads` annotation names, as the Node condition's message names them.
TOP_WORKLOADS = 3
NO_WORKLOAD_SERIES = "none named: no per-workload series (the agent runs with --snat-by-workload=false, or predates it)"


def _top_workloads(query: str, *labels: str) -> str:
    """The `workloads` annotation: the ``TOP_WORKLOADS`` workloads ``query`` (a PromQL format, one %q per label of
    ``labels``, one series per workload) finds when the alert fires, busiest first: "ns/name (Kind) ports; ...".

    The workloads go in an annotation, not the labels: an alert is one series of its expr, so a workload label makes
    a new alert each time the busiest workload changes, which restarts the `for` wait (two workloads trading first
    place every few minutes would keep the alert pending, never firing, while the destination stays pressed;
    tests/manifests/test_alerts.py has that case) and makes Alertmanager resolve one alert and notify another for
    one pressure.
    One alert per pressed destination keeps grouping, silences and inhibition on what is scarce, the destination's
    ports; the annotation names who spends them. Template functions: prometheus.io/docs/prometheus/latest/
    configuration/template_reference/ (query, printf; Go's text/template range and else)."""
    args = " ".join(f"$labels.{label}" for label in labels)
    found = f"sort_desc(topk({TOP_WORKLOADS}, {query}))"
    return (
        f"{{{{ with query (printf `{found}` {args}) }}}}{{{{ range $i, $s := . }}}}{{{{ if $i }}}}; {{{{ end }}}}"
        '{{ $s.Labels.namespace }}/{{ $s.Labels.workload }} ({{ $s.Labels.kind }}) {{ printf "%.0f" $s.Value }}'
        f"{{{{ end }}}}{{{{ else }}}}{NO_WORKLOAD_SERIES}{{{{ end }}}}"
    )


def _driver_rate(selector: str, by: str) -> str:
    return f"sum by ({by}) (rate(wirespeed_agent_nic_driver_counter_total{{{selector}}}[{RULE_WINDOW}]))"


ALERTS: tuple[Alert, ...] = (
    Alert(
        name="WirespeedRingOverflowRising",
        expr=_driver_rate('cause="rx_ring_overflow"', "instance, interface, driver") + " > 0",
        for_="10m",
        severity="warning",
        summary="RX ring overflow on {{ $labels.instance }} {{ $labels.interface }} ({{ $labels.driver }})",
        description="The NIC dropped packets because its RX ring was full (a driver counter such as mlx5 "
        "rx_out_of_buffer or mana hc_rx_discards_no_wqe is rising).",
        fix="Raise rings.{{ $labels.driver }}.rx in the tuning profile (`wirespeed size rings --driver "
        "{{ $labels.driver }}` gives the value); if the ring is already at its maximum "
        "(wirespeed_agent_ring_max_entries), use a larger or network-optimised size.",
    ),
    Alert(
        name="WirespeedBacklogDropsRising",
        expr=f"sum by (instance) (rate(node_softnet_dropped_total[{RULE_WINDOW}])) > 0",
        for_="10m",
        severity="warning",
        summary="Backlog drops on {{ $labels.instance }}",
        description="The per-CPU input backlog was full: enqueue_to_backlog dropped packets "
        "(/proc/net/softnet_stat column 2), typically microbursts on veth or RPS traffic.",
        fix='Raise sysctls."net.core.netdev_max_backlog" in the tuning profile (`wirespeed size backlog` gives '
        "the value).",
    ),
    Alert(
        name="WirespeedTimeSqueeze",
        # Occasional squeezes are normal; wirespeed alerts when receive processing runs out of budget for a
        # sustained quarter of an hour.
        expr=f"sum by (instance) (rate(node_softnet_times_squeezed_total[{RULE_WINDOW}])) > 1",
        for_="15m",
        severity="info",
        summary="Receive processing keeps running out of budget on {{ $labels.instance }}",
        description="net_rx_action stopped with packets still waiting more than once a second "
        "(softnet_stat time_squeeze); packets wait in rings and backlogs, which then overflow.",
        fix='Raise sysctls."net.core.netdev_budget" (and netdev_budget_usecs) in the tuning profile.',
    ),
    Alert(
        name="WirespeedENAAllowanceExceeded",
        expr=_driver_rate('driver="ena", counter=~".+_allowance_exceeded"', "instance, interface, counter") + " > 0",
        for_="5m",
        severity="warning",
        summary="ENA {{ $labels.counter }} on {{ $labels.instance }} {{ $labels.interface }}",
        description="The EC2 instance exceeded a network allowance (bandwidth, PPS, connection tracking or "
        "link-local): packets were queued or dropped by the cloud, not by this node.",
        fix="No node setting raises an allowance: move to a larger or network-optimised size "
        "(`wirespeed catalog list --network-optimised`); for linklocal_allowance_exceeded cache DNS on the node.",
    ),
    Alert(
        name="WirespeedConntrackNearFull",
        expr="max by (instance) (node_nf_conntrack_entries / node_nf_conntrack_entries_limit) > 0.9",
        for_="5m",
        severity="warning",
        summary="Connection-tracking table above 90% on {{ $labels.instance }}",
        description="New flows are dropped ('nf_conntrack: table full, dropping packet') once the table is full.",
        fix='Raise sysctls."net.netfilter.nf_conntrack_max" in the tuning profile, or stop tracking flows '
        "that need no NAT.",
    ),
    Alert(
        name="WirespeedTuningDegraded",
        expr="max by (instance) (wirespeed_agent_degraded) == 1",
        for_="10m",
        severity="warning",
        summary="The wirespeed agent cannot apply its profile on {{ $labels.instance }}",
        description="The last reconciles failed to apply part of the profile; the Node condition "
        "NetworkTuningDegraded and annotation wirespeed.io/tuning-status say which setting and why.",
        fix="Read the agent's reason (kubectl describe node); a device that keeps a smaller ring "
        "(wirespeed_agent_ring_refused) needs a profile within its limits.",
    ),
    Alert(
        name="WirespeedDrift",
        expr="max by (instance) (wirespeed_agent_drift) == 1",
        for_="15m",
        severity="warning",
        summary="Tuning on {{ $labels.instance }} differs from the profile",
        description="A ring, MTU or sysctl has differed from the profile for longer than many resyncs: the agent "
        "runs with --dry-run, a device refuses the value, or something else keeps changing it.",
        fix="Compare wirespeed_agent_ring_desired_entries with _current_entries and wirespeed_agent_sysctl_desired "
        "with _current; find who else writes the setting.",
    ),
    Alert(
        name="WirespeedSNATPortPressure",
        # Per destination, so the alert names it: each destination's ports in use over the node's per-destination
        # capacity (the profile's outbound section, as the agent exports it). The workloads holding them are named
        # in the `workloads` annotation (see _top_workloads for why not in the labels).
        expr=f"max by (instance, node, destination) ({SNAT_PORTS_IN_USE}{{{_ONE_DESTINATION}}} / ignoring "
        f"(destination, zone, kind) group_left {SNAT_ALLOCATED_PORTS}) > {SNAT_PRESSURE_RATIO:g}",
        for_="5m",
        severity="warning",
        summary="SNAT ports to {{ $labels.destination }} near capacity on {{ $labels.node }} ({{ $labels.instance }})",
        description=f"One destination (IP, port, protocol) holds more than {snat_limits.DEFAULT_PRESSURE_PERCENT}% of "
        "the SNAT ports this node may use for it (the profile's outbound section: allocatedOutboundPorts behind an AKS "
        "load balancer, or the NAT gateway's IPs); new connections to it fail once none are free. The Node condition "
        "SNATPortPressure and `wirespeed drift` name it too; the annotation workloads names the workloads holding "
        "the most of them.",
        fix="Size from the measured peak: `wirespeed size azure-lb --from-prometheus URL --pool ...` (or azure-natgw, "
        "aws-natgw) and pin it (wirespeed:measuredPeakPortsPerNode); or reuse connections to that destination.",
        workloads=_top_workloads(
            f'{SNAT_PORTS_IN_USE_BY_WORKLOAD}{{instance=%q, destination=%q, workload!="{SNAT_OTHER_WORKLOAD}"}}',
            "instance",
            "destination",
        ),
    ),
    Alert(
        name="WirespeedNATGatewayAZPressure",
        # Fleet-level: an AWS NAT gateway's 55,000 connections per IP to one destination are shared by every node of
        # its AZ, so no single node sees the pressure. Sums the nodes behind AWS NAT gateways by zone and
        # destination, against that zone's capacity (the smallest any of its nodes reports).
        # The workloads holding the most of them, summed over the zone's nodes behind the gateway, are named in the
        # `workloads` annotation.
        expr=f"sum by (zone, destination) ({SNAT_PORTS_IN_USE}{{{_ONE_DESTINATION}}} and on (instance, job) "
        f"{_AWS_NAT}) / on (zone) group_left min by (zone) ({_AWS_NAT}) > {SNAT_PRESSURE_RATIO:g}",
        for_="5m",
        severity="warning",
        summary="NAT gateway in {{ $labels.zone }}: connections to {{ $labels.destination }} near capacity",
        description=f"Summed over every node behind the zone's AWS NAT gateway, one destination holds more than "
        f"{snat_limits.DEFAULT_PRESSURE_PERCENT}% of the {nat_gateway.AWS_CONNECTIONS_PER_IP:,} connections per IP "
        "the gateway's IPs give it; then ErrorPortAllocation rises and connections fail. Assumes one cluster's nodes "
        "per Prometheus (add your cluster label to the sum otherwise); the annotation workloads names the workloads "
        "holding the most of them over the zone's nodes behind the gateway.",
        fix="`wirespeed size aws-natgw --from-prometheus URL` sizes each AZ's IPs from the measured sums; add IPs to "
        "that zone's gateway or spread calls over more destination IPs.",
        workloads=_top_workloads(
            f"sum by ({_WORKLOAD_LABELS}) ({SNAT_PORTS_IN_USE_BY_WORKLOAD}"
            f'{{destination=%q, workload!="{SNAT_OTHER_WORKLOAD}"}} '
            f"* on (instance, job) group_left (zone) (0 * {SNAT_ALLOCATED_PORTS}"
            f'{{kind="{snat_limits.AWS_NAT_GATEWAY}", zone=%q}} + 1))',
            "destination",
            "zone",
        ),
    ),
    Alert(
        name="WirespeedRetransmissionTails",
        # Tails the agent's probe attributed to a counter that rose on one side (not "unexplained"): requests that
        # waited for a TCP retransmission because a node setting, or the cloud's allowance, dropped a segment.
        expr=f"sum by (instance, node, peer_node, cause, side) (increase({PROBE_TAILS}"
        f'{{cause=~"{_NODE_SETTING_CAUSES}"}}[{TAILS_WINDOW}])) > 0',
        for_="5m",
        severity="warning",
        summary="Retransmission tails from {{ $labels.cause }} on the {{ $labels.side }} side of "
        "{{ $labels.node }} -> {{ $labels.peer_node }}",
        description=f"The wirespeed probe from {{{{ $labels.node }}}} to {{{{ $labels.peer_node }}}} saw round trips "
        f"over its tail threshold in the last {TAILS_WINDOW}, in intervals where the {{{{ $labels.cause }}}} counter "
        "rose on the {{ $labels.side }} side (local: the prober, peer: the node it probes, or both): requests waited "
        "for a TCP retransmission (at least the 200 ms minimum RTO).",
        fix="On the node the side names: rx_ring_overflow: raise the profile's rx ring (`wirespeed size rings`); "
        'backlog: raise sysctls."net.core.netdev_max_backlog" (`wirespeed size backlog`); conntrack: raise '
        'sysctls."net.netfilter.nf_conntrack_max"; allowance: a larger or network-optimised size. Then compare with '
        "`wirespeed prove --from-prometheus URL --before ... --after ...`.",
    ),
    Alert(
        name="WirespeedAgentMissing",
        expr=f'(up{{job=~"{AGENT_JOB}"}} == 0) or absent(up{{job=~"{AGENT_JOB}"}})',
        for_="10m",
        severity="warning",
        summary="A wirespeed agent is not being scraped",
        description="An agent target is down, or no agent target exists at all: nodes it should tune keep "
        "driver-default rings after a VF is re-added, and nothing reports their drops.",
        fix="Check the wirespeed-agent DaemonSet's pods in the agent namespace.",
    ),
)


def rule_groups() -> Obj:
    """The rules as Prometheus's rule file body: ``{"groups": [...]}``."""
    return {"groups": [{"name": GROUP, "rules": [a.rule() for a in ALERTS]}]}


def rules_file() -> Obj:
    """A plain Prometheus rules file (``rule_files:``), for Prometheus without the Operator."""
    return rule_groups()


def prometheus_rule(namespace: str) -> Obj:
    """The same rules as a Prometheus Operator ``PrometheusRule`` in the agent's namespace."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": metadata(AGENT_NAME, "monitoring", namespace),
        "spec": rule_groups(),
    }


@dataclass(frozen=True, slots=True)
class Query:
    expr: str
    legend: str


@dataclass(frozen=True, slots=True)
class PanelSpec:
    title: str
    description: str
    unit: str
    queries: tuple[Query, ...]


_RATE = "$__rate_interval"
_DRIVER_COUNTER = "wirespeed_agent_nic_driver_counter_total"
_PHYSICAL = 'device!~"lo|veth.*|lxc.*|cali.*|cilium.*"'  # pod and loopback links: drops there are not the NIC's

# The dashboard's filters (its template variables, :func:`_variables`). Every selector carries them; each variable
# offers "All", and a label a setup does not have leaves its filter at All, which matches series without it.
# - cluster: the `cluster` label a multi-cluster setup puts on every series (Prometheus external_labels or a
#   relabeling; Thanos, Mimir). Its All is `.*`, which also matches series that have no such label.
# - pool: the node pool, from kube-state-metrics' kube_node_labels (`label_<name>` per node label it is allowed to
#   export, --metric-labels-allowlist=nodes=[...]): AKS's kubernetes.azure.com/agentpool, EKS managed node groups'
#   eks.amazonaws.com/nodegroup, Karpenter's karpenter.sh/nodepool (POOL_LABELS). It narrows the node list.
# - node: the agent's `node` label (the PodMonitor's NODE_NAME_RELABELING); its All is every node listed, so a pool
#   choice reaches the panels through it. node-exporter's series have no `node`: they are matched on `instance`,
#   which is the node's name (kube-prometheus relabels it so) or its IP with the port, the agent's host IP (the
#   agent runs on the host network, so its own `instance` is the node's IP: the hidden variable `host`).
_AGENT_FILTER = 'cluster=~"$cluster", node=~"$node"'
_NODE_EXPORTER_FILTER = 'cluster=~"$cluster", instance=~"($host|$node)(:[0-9]+)?"'
_AGENT_UP = f'up{{job=~"{AGENT_JOB}", {_AGENT_FILTER}}}'
# kube-state-metrics writes a node label as label_<name> with every character outside [a-zA-Z0-9_] as '_'
# (kubernetes/kube-state-metrics docs/metrics/cluster/node-metrics.md, kube_node_labels; the allowlist flag in
# docs/developer/cli-arguments.md). AKS: learn.microsoft.com/azure/aks/use-labels ("kubernetes.azure.com/agentpool");
# EKS: docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html ("eks.amazonaws.com/nodegroup");
# Karpenter: karpenter.sh/docs/concepts/scheduling/ ("Well-Known Labels": karpenter.sh/nodepool).
POOL_LABELS = ("kubernetes.azure.com/agentpool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool")


def _ksm_label(node_label: str) -> str:
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", node_label)


def _agent(metric: str, matchers: str = "") -> str:
    """An agent series' selector, filtered by the dashboard's variables."""
    return f"{metric}{{{matchers + ', ' if matchers else ''}{_AGENT_FILTER}}}"


def _node_exporter(metric: str, matchers: str = "") -> str:
    """A node-exporter series' selector, filtered by the dashboard's variables."""
    return f"{metric}{{{matchers + ', ' if matchers else ''}{_NODE_EXPORTER_FILTER}}}"


def _pool_nodes() -> str:
    """The agent's nodes in the chosen clusters and pools; every agent node where kube-state-metrics is not there."""
    agent_up = f'up{{job=~"{AGENT_JOB}", cluster=~"$cluster"}}'
    in_pool = " or ".join(f'kube_node_labels{{cluster=~"$cluster", {_ksm_label(n)}=~"$pool"}}' for n in POOL_LABELS)
    no_ksm = f'{agent_up} unless on () kube_node_labels{{cluster=~"$cluster"}}'
    return f"group by (node) ({agent_up} and on (node) ({in_pool}) or {no_ksm})"


_ONE_DESTINATION_HERE = f"{_ONE_DESTINATION}, {_AGENT_FILTER}"
_RING_OVERFLOW = 'cause="rx_ring_overflow"'
_NOT_RING_OVERFLOW = 'cause!="rx_ring_overflow"'
_AWS_NAT_HERE = _agent(SNAT_ALLOCATED_PORTS, f'kind="{snat_limits.AWS_NAT_GATEWAY}"')
_NAMED_WORKLOAD_MATCHER = f'workload!="{SNAT_OTHER_WORKLOAD}"'
# The percentiles `wirespeed prove` prints but p99.99: at the probe's defaults a node makes 32 round trips a second
# (agent/internal/probe), 3,840 in two minutes, fewer than the 10,000 that put one beyond a p99.99: over a panel's
# $__rate_interval it would be decided by no round trip of a small selection. `wirespeed prove` has the windows for it.
_PROBE_QUANTILES = ((0.5, "p50"), (0.99, "p99"), (0.999, "p99.9"))

PANELS: tuple[PanelSpec, ...] = (
    PanelSpec(
        "Backlog drops (softnet)",
        "enqueue_to_backlog drops per node (node-exporter). Fix: net.core.netdev_max_backlog.",
        "pps",
        (Query(f"sum by (instance) (rate({_node_exporter('node_softnet_dropped_total')}[{_RATE}]))", "{{instance}}"),),
    ),
    PanelSpec(
        "Time squeeze (softnet)",
        "Times receive processing ran out of budget (node-exporter). Fix: net.core.netdev_budget.",
        "ops",
        (
            Query(
                f"sum by (instance) (rate({_node_exporter('node_softnet_times_squeezed_total')}[{_RATE}]))",
                "{{instance}}",
            ),
        ),
    ),
    PanelSpec(
        "RX ring overflow (driver counters)",
        "Curated driver counters with cause rx_ring_overflow (wirespeed agent). Fix: rings.<driver>.rx.",
        "pps",
        (
            Query(
                f"sum by (instance, interface, driver) (rate({_agent(_DRIVER_COUNTER, _RING_OVERFLOW)}[{_RATE}]))",
                "{{instance}} {{interface}} {{driver}}",
            ),
        ),
    ),
    PanelSpec(
        "Cloud allowance exceeded (ENA)",
        "ENA allowance counters (wirespeed agent). Fix: a larger or network-optimised size.",
        "pps",
        (
            Query(
                f"sum by (instance, interface, counter) (rate({_agent(_DRIVER_COUNTER, _NOT_RING_OVERFLOW)}[{_RATE}]))",
                "{{instance}} {{counter}}",
            ),
        ),
    ),
    PanelSpec(
        "Receive drops per interface",
        "rx_dropped + rx_missed_errors (node-exporter), physical interfaces.",
        "pps",
        (
            Query(
                f"sum by (instance, device) (rate({_node_exporter('node_network_receive_drop_total', _PHYSICAL)}"
                f"[{_RATE}]))",
                "{{instance}} {{device}}",
            ),
        ),
    ),
    PanelSpec(
        "Conntrack fill",
        "Entries over the table's limit (node-exporter). Fix: net.netfilter.nf_conntrack_max.",
        "percentunit",
        (
            Query(
                f"max by (instance) ({_node_exporter('node_nf_conntrack_entries')} / "
                f"{_node_exporter('node_nf_conntrack_entries_limit')})",
                "{{instance}}",
            ),
        ),
    ),
    PanelSpec(
        "RX ring: current vs max",
        "The ring size each NIC runs with and the largest it supports (wirespeed agent).",
        "short",
        (
            Query(
                _agent("wirespeed_agent_ring_current_entries", 'direction="rx"'), "{{instance}} {{interface}} current"
            ),
            Query(_agent("wirespeed_agent_ring_max_entries", 'direction="rx"'), "{{instance}} {{interface}} max"),
        ),
    ),
    PanelSpec(
        "Backlog size: desired vs current",
        "net.core.netdev_max_backlog as the profile asks and as the node runs (wirespeed agent).",
        "short",
        (
            Query(
                _agent("wirespeed_agent_sysctl_desired", 'sysctl="net.core.netdev_max_backlog"'), "{{instance}} desired"
            ),
            Query(
                _agent("wirespeed_agent_sysctl_current", 'sysctl="net.core.netdev_max_backlog"'), "{{instance}} current"
            ),
        ),
    ),
    PanelSpec(
        "SNAT: top destinations",
        "Ports in use per node and destination, open flows plus closed ones still holding their port (wirespeed "
        "agent); the ten busiest.",
        "short",
        (Query(f"topk(10, {SNAT_PORTS_IN_USE}{{{_ONE_DESTINATION_HERE}}})", "{{node}} {{destination}}"),),
    ),
    PanelSpec(
        "SNAT: peak vs allocated",
        "Each node's busiest destination: the agent's peak over its window against the per-destination capacity the "
        "profile sized (allocated ports, or the NAT gateway's IPs). Fix: `wirespeed size ... --from-prometheus`.",
        "short",
        (
            Query(f"max by (instance, node) ({_agent(SNAT_PORTS_PEAK)})", "{{node}} peak"),
            Query(f"max by (instance, node) ({_agent(SNAT_ALLOCATED_PORTS)})", "{{node}} allocated"),
        ),
    ),
    PanelSpec(
        "SNAT: busiest destination, share of capacity",
        f"Ports in use to each node's busiest destination over its capacity; SNATPortPressure at "
        f"{snat_limits.DEFAULT_PRESSURE_PERCENT}% by default.",
        "percentunit",
        (
            Query(
                f"max by (instance, node) ({_agent(SNAT_PORTS_IN_USE_MAX)} / ignoring (kind, zone) "
                f"{_agent(SNAT_ALLOCATED_PORTS)})",
                "{{node}}",
            ),
        ),
    ),
    PanelSpec(
        "AWS NAT gateway: connections per AZ and destination",
        "Summed over the nodes behind AWS NAT gateways (the gateway's limit is per destination and shared by the AZ).",
        "short",
        (
            Query(
                f"topk(10, sum by (zone, destination) ({SNAT_PORTS_IN_USE}{{{_ONE_DESTINATION_HERE}}} "
                f"and on (instance, job) {_AWS_NAT_HERE}))",
                "{{zone}} {{destination}}",
            ),
        ),
    ),
    PanelSpec(
        "Nodes degraded, drifting, agents down",
        "Counts across the chosen nodes (wirespeed agent; up from the scrape).",
        "short",
        (
            Query(f"sum({_agent('wirespeed_agent_degraded')})", "degraded"),
            Query(f"sum({_agent('wirespeed_agent_drift')})", "drifting"),
            Query(f"count({_AGENT_UP} == 0) or vector(0)", "agents down"),
        ),
    ),
    # Panels after the first 13 are appended, never inserted: a panel's id is its place (see dashboard()), and
    # links to one panel keep working only while the places before it stay.
    PanelSpec(
        "SNAT: top workloads by destination",
        "Ports in use per node, workload and destination (wirespeed agent, --snat-by-workload): who holds the ports "
        "SNATPortPressure counts; the ten busiest, without the agent's workload named other (many workloads summed). "
        "Per node, as an Azure load balancer allocates ports per node and the alert judges them.",
        "short",
        (
            Query(
                f"topk(10, sum by (node, namespace, workload, kind, destination) "
                f"({_agent(SNAT_PORTS_IN_USE_BY_WORKLOAD, _NAMED_WORKLOAD_MATCHER)}))",
                "{{node}} {{namespace}}/{{workload}} ({{kind}}) {{destination}}",
            ),
        ),
    ),
    PanelSpec(
        "Probe: round-trip percentiles",
        "The probe's synchronous 1-byte request/response round trips over the chosen nodes (wirespeed agent, "
        "--probe), same-zone and cross-zone pairs apart. Interpolated inside the histogram's buckets (two per decade; "
        "199.5 ms just under Linux's 200 ms minimum RTO): a p99.9 above 199.5 ms waited out a retransmission.",
        "s",
        tuple(
            Query(
                f"histogram_quantile({quantile}, sum by (le, zones) (rate({_agent(PROBE_RTT + '_bucket')}[{_RATE}])))",
                f"{name} {{{{zones}}}}-zone",
            )
            for quantile, name in _PROBE_QUANTILES
        ),
    ),
    PanelSpec(
        "Probe: tails by cause and side",
        f"Round trips over the tail threshold in the last {TAILS_WINDOW} (the window WirespeedRetransmissionTails "
        "judges; the agent counts them when a probe round ends), by the drop counter that rose with them and the side "
        "it rose on (local: the prober, peer: the probed node). unexplained: no counter rose.",
        "short",
        (
            Query(
                f"sum by (cause, side) (increase({_agent(PROBE_TAILS)}[{TAILS_WINDOW}]))",
                "{{cause}} {{side}}",
            ),
        ),
    ),
    PanelSpec(
        "Probe: worst node pairs",
        f"The ten (node, peer) pairs with the most tails in the last {TAILS_WINDOW}, every cause; pairs without tails "
        "are left out. WirespeedRetransmissionTails names the pair, cause and side.",
        "short",
        (
            Query(
                f"topk(10, sum by (node, peer_node) (increase({_agent(PROBE_TAILS)}[{TAILS_WINDOW}])) > 0)",
                "{{node}} -> {{peer_node}}",
            ),
        ),
    ),
)


def dashboard_queries() -> list[str]:
    """Every PromQL expression on the dashboard, in panel order."""
    return [q.expr for p in PANELS for q in p.queries]


def variable_queries() -> list[str]:
    """The PromQL inside each query variable's ``query_result(...)`` or ``label_values(...)``, in variable order."""
    return [expr for _, _, expr, _ in _FILTERS]


# (name, label, PromQL, regex): the dashboard's filters in the order Grafana resolves them (each reads those before
# it). query_result() and label_values() are the Prometheus data source's variable functions
# (grafana.com/docs/grafana/latest/datasources/prometheus/template-variables/, "Query types"); the regex keeps the
# value (its first capture group) out of each returned series. `host` is hidden: the chosen nodes' IPs.
_FILTERS: tuple[tuple[str, str, str, str], ...] = (
    ("cluster", "Cluster", f'up{{job=~"{AGENT_JOB}"}}', ""),
    (
        "pool",
        "Pool",
        'kube_node_labels{cluster=~"$cluster"}',
        "/(?:" + "|".join(_ksm_label(n) for n in POOL_LABELS) + ')="([^"]+)"/',
    ),
    ("node", "Node", _pool_nodes(), '/node="([^"]+)"/'),
    ("host", "", f"group by (instance) ({_AGENT_UP})", '/instance="([^"]+):[0-9]+"/'),
)
# Fields grafana-foundation-sdk 10.1.0 writes that Grafana's current dashboard schema has no more (@grafana/schema
# 13.2.3, dist/types/raw/dashboard/x/types.gen.d.ts: Dashboard has no `style`, the theme being the viewer's
# preference; VariableModel has no `auto`, `auto_count`, `auto_min` nor `id`). tests/manifests/test_dashboard.py checks
# the
# board against that schema.
_NOT_IN_SCHEMA = {"board": ("style",), "variable": ("auto", "auto_count", "auto_min", "id")}


def _variables(datasource: Any) -> list[Any]:
    """The data source picker, then cluster, pool, node (and the hidden host) as multi-value filters with All."""
    from grafana_foundation_sdk.builders.dashboard import DatasourceVariable, QueryVariable
    from grafana_foundation_sdk.models.dashboard import VariableHide, VariableOption, VariableRefresh, VariableSort

    variables: list[Any] = [DatasourceVariable("datasource").label("Prometheus").type("prometheus")]
    for name, label, expr, regex in _FILTERS:
        variable = (
            QueryVariable(name)
            .datasource(datasource)
            # label_values() gives the label's values outright; query_result() gives whole series for the regex.
            .query(f"label_values({expr}, {name})" if not regex else f"query_result({expr})")
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
            .sort(VariableSort.ALPHABETICAL_CASE_INSENSITIVE_ASC)
            .include_all(True)
            .multi(True)
            .current(VariableOption(selected=True, text="All", value="$__all"))
        )
        if regex:
            variable = variable.regex(regex)
        # cluster and pool: All is `.*`, which matches series without the label too. node and host: All is the
        # nodes listed, which is how a pool choice reaches the panels.
        if name in ("cluster", "pool"):
            variable = variable.all_value(".*")
        variable = variable.label(label) if label else variable.hide(VariableHide.HIDE_VARIABLE)
        variables.append(variable)
    return variables


def dashboard(uid: str = DASHBOARD_UID) -> Obj:
    """The Grafana dashboard as JSON-ready data, built with grafana-foundation-sdk.

    Raises ValueError naming the UID when ``uid`` is not one Grafana accepts.
    """
    problem = check_dashboard_uid(uid)
    if problem:
        raise ValueError(f"uid: {problem}")
    from grafana_foundation_sdk.builders.common import VizLegendOptions, VizTooltipOptions
    from grafana_foundation_sdk.builders.dashboard import Dashboard
    from grafana_foundation_sdk.builders.prometheus import Dataquery
    from grafana_foundation_sdk.builders.timeseries import Panel as Timeseries
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.models.common import LegendDisplayMode, LegendPlacement, SortOrder, TooltipDisplayMode
    from grafana_foundation_sdk.models.dashboard import DataSourceRef

    datasource = DataSourceRef(type_val="prometheus", uid="${datasource}")
    board = (
        Dashboard("wirespeed: node network drops")
        .uid(uid)
        .tags(["wirespeed", "network"])
        .refresh("1m")
        .time("now-6h", "now")
    )
    for variable in _variables(datasource):
        board = board.with_variable(variable)
    for number, spec in enumerate(PANELS, start=1):
        panel = (
            Timeseries()
            # Grafana numbers panels when it loads a board without ids, and links to one panel (viewPanel=,
            # d-solo/ embeds, alert annotations) by that number: given here, they do not shift when panels move.
            .id(number)
            .title(spec.title)
            .description(spec.description)
            .unit(spec.unit)
            .min(0)
            .datasource(datasource)
            .height(8)
            .span(12)
            # A fleet puts many nodes on one panel: a table legend and a tooltip listing every series, worst first.
            .legend(
                VizLegendOptions()
                .display_mode(LegendDisplayMode.TABLE)
                .placement(LegendPlacement.BOTTOM)
                .show_legend(True)
            )
            .tooltip(VizTooltipOptions().mode(TooltipDisplayMode.MULTI).sort(SortOrder.DESCENDING))
        )
        for ref, query in zip("ABCDEFGH", spec.queries, strict=False):
            panel = panel.with_target(Dataquery().expr(query.expr).legend_format(query.legend).ref_id(ref))
        board = board.with_panel(panel)
    encoded: Obj = json.loads(json.dumps(board.build(), cls=JSONEncoder))
    for key in _NOT_IN_SCHEMA["board"]:
        encoded.pop(key, None)
    for variable in encoded["templating"]["list"]:
        for key in _NOT_IN_SCHEMA["variable"]:
            variable.pop(key, None)
    return encoded
