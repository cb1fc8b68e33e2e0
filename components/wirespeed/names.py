"""Names the tuning manifests, the policy rules and `wirespeed check` share, in a module that imports nothing.

``wirespeed.manifests`` defines the DaemonSet and ConfigMap with these names; the rules recognise them by the same
names. They live here, not in ``wirespeed.manifests.node_tuning``, because importing that package loads pydantic
and the profile models (~160 ms), which a policy check of a stack export should not pay for two strings.
"""

from __future__ import annotations

AGENT_NAME = "wirespeed-agent"  # the DaemonSet's app.kubernetes.io/name label, ServiceAccount and image name
PROFILE_KEY = "profile.json"  # the key of the profile document in its ConfigMap's data
PROFILE_LABEL = "wirespeed.io/profile"  # the node label a pool carries; the DaemonSet's nodeSelector
# The PodMonitor's scrape interval: the alerts' rate() windows and `--from-prometheus`'s subquery step assume it.
SCRAPE_INTERVAL = "30s"

# The tag (Azure, AWS) or annotation (Karpenter NodePool) that carries the written reason a pool may use a size
# that is not network-optimised; network-optimised-sku lets such a pool through (setting acceptWrittenReason).
# No "/" in it: Azure tag names cannot contain < > % & \ ? / (learn.microsoft.com/azure/azure-resource-manager/
# management/tag-resources#limitations); without a prefix it is still a valid Kubernetes annotation key
# (kubernetes.io/docs/concepts/overview/working-with-objects/annotations/#syntax-and-character-set: a name of at
# most 63 characters, alphanumerics, '-', '_' and '.').
NOT_NETWORK_OPTIMISED_REASON = "wirespeed.io.not-network-optimised-reason"
# The longest reason a tag can carry: Azure tag values hold 256 characters (the limitations above), AWS tag values
# 256 Unicode characters (docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html, "Tag naming limits").
REASON_MAX_LENGTH = 256

# The AKS cluster component's type token: `wirespeed plan` reads how it sized outbound from its registered outputs.
CLUSTER_TYPE = "wirespeed:index:NetworkOptimizedCluster"

# The node agent's SNAT accounting series (agent/internal/metrics/README.md; the issue 19 contract): what the alerts,
# the dashboard and `wirespeed size ... --from-prometheus` read.
SNAT_PORTS_IN_USE = "wirespeed_agent_snat_ports_in_use"  # {destination="IP:PORT/PROTO", zone}: open + held in cooldown
SNAT_PORTS_IN_USE_MAX = "wirespeed_agent_snat_ports_in_use_max"  # the largest destination's value on the node now
SNAT_PORTS_PEAK = "wirespeed_agent_snat_ports_peak"  # {zone}: the largest seen in the agent's window (default 24 h)
SNAT_ALLOCATED_PORTS = "wirespeed_agent_snat_allocated_ports"  # {kind, zone}: one destination's capacity (profile)
SNAT_NEW_CONNECTIONS = "wirespeed_agent_snat_new_connections_total"  # {destination}
SNAT_CONNTRACK_ENTRIES = "wirespeed_agent_snat_conntrack_entries"
SNAT_RESYNCS = "wirespeed_agent_snat_resyncs_total"  # {reason="overflow"|"start"|"error"}
# The destination label value the agent sums every destination outside a node's top K into.
SNAT_OTHER_DESTINATION = "other"
# {namespace, workload, kind, destination}: the ports one workload's flows to one destination hold on the node (issue
# 29); the node's top K pairs (--snat-workload-top), the rest as workload="other" destination="other" (kind "").
SNAT_PORTS_IN_USE_BY_WORKLOAD = "wirespeed_agent_snat_ports_in_use_by_workload"
# K's default, the agent's --snat-workload-top (wirespeed.numbers writes it into agent/internal/numbers). Another
# number than `wirespeed size --by-workload`'s rows per peak (measure.workloads.MAX_WORKLOADS), though both are 20.
SNAT_WORKLOAD_TOP = 20
SNAT_OTHER_WORKLOAD = "other"
# The first wirespeed whose agent exports SNAT_PORTS_IN_USE_BY_WORKLOAD (agent commit 62db406; the agent image is
# tagged with the library's version, wirespeed.manifests.DEFAULT_IMAGE), and the agent flag that turns it on.
SNAT_BY_WORKLOAD_SINCE = "0.1.0"
SNAT_BY_WORKLOAD_FLAG = "--snat-by-workload"

# The annotation on a tuning profile's ConfigMap that says the fastest line rate (Gb/s) of the nodes it tunes: the
# ring and backlog gates size their minimums from it (a ConfigMap alone cannot say which pools run it). NodeTuning
# and `wirespeed render node-tuning --line-rate` write it from the pools' sizes (wirespeed.manifests.options).
LINE_RATE_ANNOTATION = "wirespeed.io/line-rate-gbps"

# The node agent's continuous probe series (issue 30 item 2; agent/internal/metrics/README.md, `--probe`): what
# `wirespeed prove`, the WirespeedRetransmissionTails alert and the dashboard read.
# A histogram of round trips in seconds, labels peer_node, peer_zone, zones ("same"|"cross"); its 15 bounds are two per
# decade from 10 us and one just under each retransmission timeout (199.5 ms, 398 ms, 794 ms, 1.995 s).
PROBE_RTT = "wirespeed_agent_probe_rtt_seconds"
PROBE_TAILS = "wirespeed_agent_probe_tails_total"  # {peer_node, cause, side}: counted when a probe round ends
PROBE_RETRANSMITS = "wirespeed_agent_probe_retransmits_total"  # {peer_node}: TCP_INFO of the probe's own sockets
# A tail's causes: the node settings that drop (ring overflow, backlog, conntrack) or the cloud's allowance, and none.
PROBE_NODE_SETTING_CAUSES = ("rx_ring_overflow", "backlog", "allowance", "conntrack")
PROBE_UNEXPLAINED = "unexplained"
PROBE_CAUSES = (*PROBE_NODE_SETTING_CAUSES, PROBE_UNEXPLAINED)
PROBE_SIDES = ("local", "peer", "both", "unknown")  # where the counter rose: the prober, the probed node, both
