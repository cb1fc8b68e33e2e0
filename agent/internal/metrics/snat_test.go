package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

const snatExposition = `
# HELP wirespeed_agent_snat_allocated_ports SNAT ports one destination may use, from the profile's outbound section: the node's allocated ports (kind azure-load-balancer), or the per-destination limit per IP times the NAT gateway's IPs (shared by every node behind the gateway). kind is outbound.kind, zone as on the peak.
# TYPE wirespeed_agent_snat_allocated_ports gauge
wirespeed_agent_snat_allocated_ports{kind="azure-load-balancer",zone="westeurope-1"} 4096
# HELP wirespeed_agent_snat_conntrack_entries Entries in this node's conntrack table (nf_conntrack_count), outbound or not.
# TYPE wirespeed_agent_snat_conntrack_entries gauge
wirespeed_agent_snat_conntrack_entries 5000
# HELP wirespeed_agent_snat_new_connections_total New connections this node started to a destination outside the cluster. A destination's series counts from when it entered the top destinations; while outside them its connections count under "other".
# TYPE wirespeed_agent_snat_new_connections_total counter
wirespeed_agent_snat_new_connections_total{destination="52.1.2.3:443/tcp"} 17
wirespeed_agent_snat_new_connections_total{destination="*:*/udp"} 2
wirespeed_agent_snat_new_connections_total{destination="other"} 40
# HELP wirespeed_agent_snat_open_flows Open outbound flows, every destination's: counted until conntrack reaps their entries, as conntrack_entries counts them.
# TYPE wirespeed_agent_snat_open_flows gauge
wirespeed_agent_snat_open_flows 2900
# HELP wirespeed_agent_snat_ports_in_use SNAT ports this node's flows to one destination (IP:PORT/PROTO) hold: open flows plus flows closed less than the hold time ago; the busiest destinations by name, the rest summed as destination="other". zone is the Node's topology.kubernetes.io/zone.
# TYPE wirespeed_agent_snat_ports_in_use gauge
wirespeed_agent_snat_ports_in_use{destination="52.1.2.3:443/tcp",zone="westeurope-1"} 3300
wirespeed_agent_snat_ports_in_use{destination="*:*/udp",zone="westeurope-1"} 12
wirespeed_agent_snat_ports_in_use{destination="other",zone="westeurope-1"} 7
# HELP wirespeed_agent_snat_ports_in_use_max The most SNAT ports one destination holds on this node now.
# TYPE wirespeed_agent_snat_ports_in_use_max gauge
wirespeed_agent_snat_ports_in_use_max 3300
# HELP wirespeed_agent_snat_ports_peak The most SNAT ports one destination held on this node within the peak window (--snat-peak-window).
# TYPE wirespeed_agent_snat_ports_peak gauge
wirespeed_agent_snat_ports_peak{zone="westeurope-1"} 3500
# HELP wirespeed_agent_snat_pressure 1 while the SNATPortPressure Node condition is True.
# TYPE wirespeed_agent_snat_pressure gauge
wirespeed_agent_snat_pressure 1
# HELP wirespeed_agent_snat_resyncs_total Dumps of the conntrack table, by reason: start, overflow (events were lost: ENOBUFS), error (a socket or dump failed and was re-opened).
# TYPE wirespeed_agent_snat_resyncs_total counter
wirespeed_agent_snat_resyncs_total{reason="error"} 0
wirespeed_agent_snat_resyncs_total{reason="overflow"} 2
wirespeed_agent_snat_resyncs_total{reason="start"} 1
# HELP wirespeed_agent_snat_tracked_flows Open outbound flows plus (destination, second) buckets of closed ones still held: what --snat-max-flows bounds.
# TYPE wirespeed_agent_snat_tracked_flows gauge
wirespeed_agent_snat_tracked_flows 3100
# HELP wirespeed_agent_snat_untracked_flows_total Outbound flows left uncounted because --snat-max-flows was reached: the ports in use are then a lower bound.
# TYPE wirespeed_agent_snat_untracked_flows_total counter
wirespeed_agent_snat_untracked_flows_total 0
`

func TestSNATExposition(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewSNAT(reg)
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 3 {
		t.Fatalf("before the first snapshot: %d series (%v), want only the 3 resync counters", n, err)
	}
	m.Resynced(snat.ReasonStart)
	m.Resynced(snat.ReasonOverflow)
	m.Resynced(snat.ReasonOverflow)
	m.SetZone("westeurope-1")
	m.Observe(snat.Snapshot{
		Top: []snat.Use{{Destination: "52.1.2.3:443/tcp", InUse: 3300, New: 17},
			{Destination: "*:*/udp", InUse: 12, New: 2}},
		OtherInUse: 7, OtherNew: 40, Max: 3300, Peak: 3500, Open: 2900, Tracked: 3100, ConntrackEntries: 5000,
	}, status.SNAT{Kind: "azure-load-balancer", Capacity: 4096, Pressure: true})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(snatExposition)); err != nil {
		t.Fatal(err)
	}
}

// Without an outbound section there is no capacity to compare with: neither gauge is made up.
func TestSNATWithoutOutboundSection(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewSNAT(reg)
	m.Observe(snat.Snapshot{ConntrackEntries: -1}, status.SNAT{})
	for _, name := range []string{"wirespeed_agent_snat_allocated_ports", "wirespeed_agent_snat_pressure",
		"wirespeed_agent_snat_conntrack_entries"} {
		if n, _ := testutil.GatherAndCount(reg, name); n != 0 {
			t.Errorf("%s exported without a value to export", name)
		}
	}
	if n, _ := testutil.GatherAndCount(reg, "wirespeed_agent_snat_ports_in_use"); n != 1 {
		t.Errorf("want the \"other\" series even when nothing is in use")
	}
}

// The per-workload gauge names the snapshot's pairs and sums the rest; a workload gone from the snapshot (it
// holds no port any more) has no series at the next scrape.
func TestSNATByWorkloadSeriesFollowTheSnapshot(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := NewSNAT(reg)
	web := snat.Workload{Namespace: "shop", Name: "web", Kind: "Deployment"}
	export := snat.Workload{Namespace: "batch", Name: "export", Kind: "CronJob"}
	s.Observe(snat.Snapshot{Attributed: true, OtherWorkloadInUse: 4, Workloads: []snat.WorkloadUse{
		{Workload: web, Destination: "52.1.2.3:443/tcp", InUse: 9}, {Workload: export, Destination: "52.1.2.3:443/tcp", InUse: 3}}},
		status.SNAT{})
	want := `
# HELP wirespeed_agent_snat_ports_in_use_by_workload ` + byWorkloadHelp + `
# TYPE wirespeed_agent_snat_ports_in_use_by_workload gauge
wirespeed_agent_snat_ports_in_use_by_workload{destination="52.1.2.3:443/tcp",kind="Deployment",namespace="shop",workload="web"} 9
wirespeed_agent_snat_ports_in_use_by_workload{destination="52.1.2.3:443/tcp",kind="CronJob",namespace="batch",workload="export"} 3
wirespeed_agent_snat_ports_in_use_by_workload{destination="other",kind="",namespace="",workload="other"} 4
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "wirespeed_agent_snat_ports_in_use_by_workload"); err != nil {
		t.Fatal(err)
	}
	s.Observe(snat.Snapshot{Attributed: true, Workloads: []snat.WorkloadUse{
		{Workload: web, Destination: "52.1.2.3:443/tcp", InUse: 2}}}, status.SNAT{})
	want = `
# HELP wirespeed_agent_snat_ports_in_use_by_workload ` + byWorkloadHelp + `
# TYPE wirespeed_agent_snat_ports_in_use_by_workload gauge
wirespeed_agent_snat_ports_in_use_by_workload{destination="52.1.2.3:443/tcp",kind="Deployment",namespace="shop",workload="web"} 2
wirespeed_agent_snat_ports_in_use_by_workload{destination="other",kind="",namespace="",workload="other"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "wirespeed_agent_snat_ports_in_use_by_workload"); err != nil {
		t.Fatal(err)
	}
}

const byWorkloadHelp = `SNAT ports one workload's flows to one destination hold on this node (open plus held, as ports_in_use). kind is the workload's (Deployment, StatefulSet, DaemonSet, CronJob, Job, ReplicaSet, Pod, or node: the node's own processes and host-network pods; unknown: an address no pod on this node held when the flow started). The busiest (workload, destination) pairs by name (--snat-workload-top), the rest summed as workload="other" destination="other"; a workload's series disappears once it holds no port.`
