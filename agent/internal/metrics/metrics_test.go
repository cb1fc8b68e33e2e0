package metrics

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wirespeed-io/wirespeed/agent/internal/probe"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// smallReport is one VF whose RX ring was restored and whose TX ring is left alone, one primary whose RX
// ring is stuck below the profile, one pod veth the agent skips, and two sysctls (one drifted).
func smallReport() status.Report {
	return status.Report{
		Profile: "throughput",
		State:   status.StateDegraded,
		Reason:  "eth1: rx ring 4096 rejected: invalid argument",
		Interfaces: []status.Interface{
			{Name: "enP1s1", Index: 7, Driver: "mlx5_core", Role: "sriov-vf", Selected: true,
				Reason: "driver mlx5_core enslaved to eth0",
				RX:     &status.Ring{Desired: 8192, Current: 8192, Max: 8192},
				TX:     &status.Ring{Desired: 0, Current: 1024, Max: 8192},
				MTU:    &status.Value{Desired: 1500, Current: 1500}},
			{Name: "eth1", Index: 3, Driver: "e1000e", Role: "primary", Selected: true,
				Reason: "matches selector",
				RX:     &status.Ring{Desired: 4096, Current: 256, Max: 4096},
				Error:  "rx ring 4096 rejected: invalid argument"},
			{Name: "lxc12ab", Index: 40, Driver: "veth", Role: "virtual", Selected: false,
				Reason: "veth: pod interface"},
		},
		Sysctls: map[string]status.Value{
			"net.core.netdev_max_backlog": {Desired: 32768, Current: 32768},
			"net.core.netdev_budget":      {Desired: 600, Current: 300},
		},
		Errors: []string{"eth1: rx ring 4096 rejected: invalid argument"},
		Time:   time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC),
	}
}

const smallReportExposition = `
# HELP wirespeed_agent_apply_errors_total Settings the agent failed to apply, counted once per reconcile that failed them.
# TYPE wirespeed_agent_apply_errors_total counter
wirespeed_agent_apply_errors_total 1
# HELP wirespeed_agent_degraded 1 when the last reconcile could not apply the profile.
# TYPE wirespeed_agent_degraded gauge
wirespeed_agent_degraded 1
# HELP wirespeed_agent_drift 1 when any managed value differs from the profile.
# TYPE wirespeed_agent_drift gauge
wirespeed_agent_drift 1
# HELP wirespeed_agent_interface_apply_failing 1 when the last reconcile could not apply the profile to this interface.
# TYPE wirespeed_agent_interface_apply_failing gauge
wirespeed_agent_interface_apply_failing{driver="e1000e",interface="eth1",role="primary"} 1
wirespeed_agent_interface_apply_failing{driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 0
# HELP wirespeed_agent_interface_drift 1 when a managed ring or MTU of this interface differs from the profile.
# TYPE wirespeed_agent_interface_drift gauge
wirespeed_agent_interface_drift{driver="e1000e",interface="eth1",role="primary"} 1
wirespeed_agent_interface_drift{driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 0
# HELP wirespeed_agent_last_reconcile_timestamp_seconds Time the last reconcile finished, in seconds since the epoch.
# TYPE wirespeed_agent_last_reconcile_timestamp_seconds gauge
wirespeed_agent_last_reconcile_timestamp_seconds 1.7953524e+09
# HELP wirespeed_agent_link_events_total Netlink link events seen, by kind (added, removed, changed).
# TYPE wirespeed_agent_link_events_total counter
wirespeed_agent_link_events_total{kind="added"} 2
wirespeed_agent_link_events_total{kind="changed"} 0
wirespeed_agent_link_events_total{kind="removed"} 1
wirespeed_agent_link_events_total{kind="unknown"} 1
# HELP wirespeed_agent_mtu_desired_bytes MTU the profile asks for (current MTU: node-exporter's node_network_mtu_bytes).
# TYPE wirespeed_agent_mtu_desired_bytes gauge
wirespeed_agent_mtu_desired_bytes{driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 1500
# HELP wirespeed_agent_reconciles_total Reconciles finished, by result (applied, degraded, dry-run).
# TYPE wirespeed_agent_reconciles_total counter
wirespeed_agent_reconciles_total{result="applied"} 0
wirespeed_agent_reconciles_total{result="degraded"} 1
wirespeed_agent_reconciles_total{result="dry-run"} 0
# HELP wirespeed_agent_ring_current_entries Ring size the device reported at the last reconcile.
# TYPE wirespeed_agent_ring_current_entries gauge
wirespeed_agent_ring_current_entries{direction="rx",driver="e1000e",interface="eth1",role="primary"} 256
wirespeed_agent_ring_current_entries{direction="rx",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 8192
wirespeed_agent_ring_current_entries{direction="tx",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 1024
# HELP wirespeed_agent_ring_desired_entries Ring size the profile asks for, after clamping to the device maximum and the driver's rounding rule.
# TYPE wirespeed_agent_ring_desired_entries gauge
wirespeed_agent_ring_desired_entries{direction="rx",driver="e1000e",interface="eth1",role="primary"} 4096
wirespeed_agent_ring_desired_entries{direction="rx",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 8192
# HELP wirespeed_agent_ring_max_entries Largest ring size the device reports it supports.
# TYPE wirespeed_agent_ring_max_entries gauge
wirespeed_agent_ring_max_entries{direction="rx",driver="e1000e",interface="eth1",role="primary"} 4096
wirespeed_agent_ring_max_entries{direction="rx",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 8192
wirespeed_agent_ring_max_entries{direction="tx",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 8192
# HELP wirespeed_agent_ring_refused 1 when the device kept a different ring size than the agent wrote (desired vs current entries); the agent does not rewrite it while the device keeps that size.
# TYPE wirespeed_agent_ring_refused gauge
wirespeed_agent_ring_refused{direction="rx",driver="e1000e",interface="eth1",role="primary"} 0
wirespeed_agent_ring_refused{direction="rx",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 0
# HELP wirespeed_agent_sysctl_current Sysctl value read at the last reconcile.
# TYPE wirespeed_agent_sysctl_current gauge
wirespeed_agent_sysctl_current{sysctl="net.core.netdev_budget"} 300
wirespeed_agent_sysctl_current{sysctl="net.core.netdev_max_backlog"} 32768
# HELP wirespeed_agent_sysctl_desired Sysctl value the profile asks for.
# TYPE wirespeed_agent_sysctl_desired gauge
wirespeed_agent_sysctl_desired{sysctl="net.core.netdev_budget"} 600
wirespeed_agent_sysctl_desired{sysctl="net.core.netdev_max_backlog"} 32768
`

func TestObserveExposition(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.LinkEvent(KindAdded)
	m.LinkEvent(KindAdded)
	m.LinkEvent(KindRemoved)
	m.LinkEvent("renamed") // not a kind the agent emits: counted as unknown, never a new series
	m.Observe(smallReport())

	if err := testutil.GatherAndCompare(reg, strings.NewReader(smallReportExposition)); err != nil {
		t.Fatal(err)
	}
}

// An SR-IOV VF re-added by the host comes back under a new name: its old series must go, not linger at
// their last values.
func TestObserveDropsInterfacesThatDisappear(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.Observe(smallReport())

	next := smallReport()
	next.State = status.StateApplied
	next.Errors = nil
	next.Interfaces = []status.Interface{{
		Name: "enP2s1", Index: 9, Driver: "mlx5_core", Role: "sriov-vf", Selected: true,
		RX: &status.Ring{Desired: 8192, Current: 8192, Max: 8192},
	}}
	m.Observe(next)

	want := `
# HELP wirespeed_agent_ring_current_entries Ring size the device reported at the last reconcile.
# TYPE wirespeed_agent_ring_current_entries gauge
wirespeed_agent_ring_current_entries{direction="rx",driver="mlx5_core",interface="enP2s1",role="sriov-vf"} 8192
# HELP wirespeed_agent_interface_drift 1 when a managed ring or MTU of this interface differs from the profile.
# TYPE wirespeed_agent_interface_drift gauge
wirespeed_agent_interface_drift{driver="mlx5_core",interface="enP2s1",role="sriov-vf"} 0
# HELP wirespeed_agent_reconciles_total Reconciles finished, by result (applied, degraded, dry-run).
# TYPE wirespeed_agent_reconciles_total counter
wirespeed_agent_reconciles_total{result="applied"} 1
wirespeed_agent_reconciles_total{result="degraded"} 1
wirespeed_agent_reconciles_total{result="dry-run"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"wirespeed_agent_ring_current_entries", "wirespeed_agent_interface_drift",
		"wirespeed_agent_reconciles_total"); err != nil {
		t.Fatal(err)
	}
}

// A device that keeps a smaller ring than the agent wrote is drift on every surface: desired above current,
// the interface and node drift gauges, and ring_refused naming the direction.
func TestRefusedRingShowsAsDrift(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.Observe(status.Report{
		Profile: "throughput",
		State:   status.StateDegraded,
		Interfaces: []status.Interface{
			{Name: "enP1s1", Index: 3, Driver: "mlx5_core", Role: "sriov-vf", Selected: true,
				RX:    &status.Ring{Desired: 8192, Current: 4096, Max: 8192, Refused: true},
				Error: "rx ring: the device kept 4096 when 8192 was written (device max 8192); not written again while it keeps that size"},
			{Name: "enP2s2", Index: 4, Driver: "mlx5_core", Role: "sriov-vf", Selected: true,
				RX: &status.Ring{Desired: 8192, Current: 8192, Max: 8192}},
		},
		Time: time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC),
	})
	want := `
# HELP wirespeed_agent_drift 1 when any managed value differs from the profile.
# TYPE wirespeed_agent_drift gauge
wirespeed_agent_drift 1
# HELP wirespeed_agent_interface_drift 1 when a managed ring or MTU of this interface differs from the profile.
# TYPE wirespeed_agent_interface_drift gauge
wirespeed_agent_interface_drift{driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 1
wirespeed_agent_interface_drift{driver="mlx5_core",interface="enP2s2",role="sriov-vf"} 0
# HELP wirespeed_agent_ring_current_entries Ring size the device reported at the last reconcile.
# TYPE wirespeed_agent_ring_current_entries gauge
wirespeed_agent_ring_current_entries{direction="rx",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 4096
wirespeed_agent_ring_current_entries{direction="rx",driver="mlx5_core",interface="enP2s2",role="sriov-vf"} 8192
# HELP wirespeed_agent_ring_desired_entries Ring size the profile asks for, after clamping to the device maximum and the driver's rounding rule.
# TYPE wirespeed_agent_ring_desired_entries gauge
wirespeed_agent_ring_desired_entries{direction="rx",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 8192
wirespeed_agent_ring_desired_entries{direction="rx",driver="mlx5_core",interface="enP2s2",role="sriov-vf"} 8192
# HELP wirespeed_agent_ring_refused 1 when the device kept a different ring size than the agent wrote (desired vs current entries); the agent does not rewrite it while the device keeps that size.
# TYPE wirespeed_agent_ring_refused gauge
wirespeed_agent_ring_refused{direction="rx",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 1
wirespeed_agent_ring_refused{direction="rx",driver="mlx5_core",interface="enP2s2",role="sriov-vf"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "wirespeed_agent_drift",
		"wirespeed_agent_interface_drift", "wirespeed_agent_ring_current_entries",
		"wirespeed_agent_ring_desired_entries", "wirespeed_agent_ring_refused"); err != nil {
		t.Fatal(err)
	}
}

func TestNoSnapshotBeforeFirstReconcile(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	New(reg)
	// Only the counters, all at zero: a gauge such as drift=0 before anything was read would be a lie.
	n, err := testutil.GatherAndCount(reg)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(linkEventKinds) + len(reconcileResults) + 1; n != want {
		t.Fatalf("series before the first reconcile = %d, want %d (counters only)", n, want)
	}
}

func TestCountErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    status.Report
		want int
	}{
		{name: "none", r: status.Report{}, want: 0},
		{name: "sysctl error only", r: status.Report{Errors: []string{"net.core.netdev_budget: permission denied"}}, want: 1},
		{name: "link error also listed in Errors counts once", r: smallReport(), want: 1},
		{name: "link error only on the interface", r: status.Report{Interfaces: []status.Interface{
			{Name: "eth1", Error: "rx ring: operation not supported"},
			{Name: "eth2", Error: "rx ring: operation not supported"},
		}}, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := countErrors(tc.r); got != tc.want {
				t.Fatalf("countErrors = %d, want %d", got, tc.want)
			}
		})
	}
}

// A report naming one link twice must not break the whole scrape with a duplicate-series error.
func TestDuplicateInterfaceNameKeepsScrapeWorking(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	r := smallReport()
	r.Interfaces = append(r.Interfaces, r.Interfaces[0])
	m.Observe(r)
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

// Scrapes run concurrently with reconciles; under -race this catches unsynchronised access.
func TestObserveDuringScrape(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			m.Observe(smallReport())
			m.LinkEvent(KindChanged)
		}
	}()
	for range 200 {
		if _, err := reg.Gather(); err != nil {
			t.Fatal(err)
		}
	}
	<-done
}

var update = flag.Bool("update", false, "rewrite the metrics table in README.md")

// TestREADMEListsEveryMetric keeps README.md's table equal to what the registry exports.
func TestREADMEListsEveryMetric(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.SetDriverStats(fakeDriverStats)
	m.Observe(smallReport())
	// The SNAT accounting's families too (registered apart, when conntrack is readable), with an outbound
	// section so the capacity and pressure gauges exist: dashboards and alerts read their names here.
	s := NewSNAT(reg)
	s.Observe(snat.Snapshot{Top: []snat.Use{{Destination: "52.1.2.3:443/tcp", InUse: 1, New: 1}}, Attributed: true,
		Workloads: []snat.WorkloadUse{{Workload: snat.Workload{Namespace: "shop", Name: "web", Kind: "Deployment"},
			Destination: "52.1.2.3:443/tcp", InUse: 1}}},
		status.SNAT{Kind: "azure-load-balancer", Capacity: 1024})
	// The continuous probe's families (registered with --probe), each with one series.
	pr := NewProbe(reg)
	self, peer := probe.Node{Name: "a", Zone: "z1"}, probe.Node{Name: "b", Zone: "z2"}
	pr.Peers(self, []probe.Node{peer})
	pr.RoundTrips(self, peer)(time.Millisecond)
	pr.Round(self, []probe.Node{peer}, probe.Report{Peers: []probe.Result{{Retransmits: 1,
		CausesBySide: map[string]map[string]uint64{"peer": {"backlog": 1}}}}})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, f := range families {
		labels := map[string]bool{}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		var names []string
		for l := range labels {
			names = append(names, "`"+l+"`")
		}
		sort.Strings(names)
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s | %s |", f.GetName(),
			strings.ToLower(f.GetType().String()), strings.Join(names, ", "), f.GetHelp()))
	}

	const head, tail = "| metric | type | labels | meaning |\n|---|---|---|---|\n", "<!-- end metrics table -->"
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start, end := strings.Index(readme, head), strings.Index(readme, tail)
	if start < 0 || end < start {
		t.Fatal("README.md lost its metrics table markers")
	}
	start += len(head)
	want := strings.Join(rows, "\n") + "\n"
	if got := readme[start:end]; got != want {
		if *update {
			if err := os.WriteFile("README.md", []byte(readme[:start]+want+readme[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("README.md metrics table is stale; run with -update. Want:\n%s", want)
	}
}

// fakeDriverStats stands in for `ethtool -S` on NICs no test machine has: the mlx5_core VF of smallReport
// reports its curated counter among others; e1000e's stats cannot be read (the link went away).
func fakeDriverStats(intf string) (map[string]uint64, error) {
	switch intf {
	case "enP1s1":
		return map[string]uint64{"rx_out_of_buffer": 42, "rx_packets": 1000, "tx_packets": 900}, nil
	default:
		return nil, fmt.Errorf("fake ethtool: no device %s", intf)
	}
}

// Only curated counters of selected NICs are exported, labelled with their cause; a NIC whose stats
// cannot be read is skipped rather than failing the scrape.
func TestDriverCountersUnderFakeEthtool(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.Observe(smallReport())
	if n, err := testutil.GatherAndCount(reg, "wirespeed_agent_nic_driver_counter_total"); err != nil || n != 0 {
		t.Fatalf("before SetDriverStats: %d series, err %v; want none", n, err)
	}
	m.SetDriverStats(fakeDriverStats)
	const want = `
# HELP wirespeed_agent_nic_driver_counter_total A drop or allowance counter of the NIC driver as ` + "`ethtool -S`" + ` names it (read through the ETHTOOL_GSTATS ioctl at scrape time), for the counters nic_drivers.json curates on interfaces the profile selects; cause is rx_ring_overflow, instance_allowance or not_a_node_setting.
# TYPE wirespeed_agent_nic_driver_counter_total counter
wirespeed_agent_nic_driver_counter_total{cause="rx_ring_overflow",counter="rx_out_of_buffer",driver="mlx5_core",interface="enP1s1",role="sriov-vf"} 42
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "wirespeed_agent_nic_driver_counter_total"); err != nil {
		t.Fatal(err)
	}
}

// ENA's allowance counters come out with their causes (fake ENA: no ENA exists here).
func TestENAAllowanceCountersUnderFakeEthtool(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.SetDriverStats(func(string) (map[string]uint64, error) {
		return map[string]uint64{"bw_in_allowance_exceeded": 3, "linklocal_allowance_exceeded": 1, "queue_0_tx_cnt": 5}, nil
	})
	m.Observe(status.Report{State: status.StateApplied, Interfaces: []status.Interface{
		{Name: "ens5", Driver: "ena", Role: "primary", Selected: true},
		{Name: "veth1", Driver: "veth", Role: "virtual", Selected: false},
	}})
	const want = `
# HELP wirespeed_agent_nic_driver_counter_total A drop or allowance counter of the NIC driver as ` + "`ethtool -S`" + ` names it (read through the ETHTOOL_GSTATS ioctl at scrape time), for the counters nic_drivers.json curates on interfaces the profile selects; cause is rx_ring_overflow, instance_allowance or not_a_node_setting.
# TYPE wirespeed_agent_nic_driver_counter_total counter
wirespeed_agent_nic_driver_counter_total{cause="instance_allowance",counter="bw_in_allowance_exceeded",driver="ena",interface="ens5",role="primary"} 3
wirespeed_agent_nic_driver_counter_total{cause="not_a_node_setting",counter="linklocal_allowance_exceeded",driver="ena",interface="ens5",role="primary"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "wirespeed_agent_nic_driver_counter_total"); err != nil {
		t.Fatal(err)
	}
}
