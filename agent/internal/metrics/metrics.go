// Package metrics exports what the agent manages: the desired, current and maximum value of every ring
// and sysctl it tunes, whether they drift, and how reconciles and link events go.
//
// It also exports the NIC driver counters nic_drivers.json curates (ring overflow, cloud allowances),
// which node-exporter's default collectors do not read. It deliberately exports nothing node-exporter
// already has by default (node_softnet_dropped_total,
// node_softnet_times_squeezed_total, node_network_receive_drop_total, node_network_mtu_bytes: the softnet,
// netdev and netclass collectors of prometheus/node_exporter, each registered defaultEnabled in
// collector/softnet_linux.go, netdev_*.go and netclass_linux.go): join on those instead of scraping them twice.
package metrics

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed-io/wirespeed/agent/internal/rings"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

const namespace = "wirespeed_agent"

// Link event kinds accepted by LinkEvent; anything else is counted as kindUnknown so a caller bug cannot
// grow the series count without bound.
const (
	KindAdded   = "added"
	KindRemoved = "removed"
	KindChanged = "changed"
	kindUnknown = "unknown"
)

var linkEventKinds = []string{KindAdded, KindRemoved, KindChanged, kindUnknown}

// Reconcile results are the report states.
var reconcileResults = []status.State{status.StateApplied, status.StateDegraded, status.StateDryRun}

var (
	interfaceLabels = []string{"interface", "driver", "role"}
	ringLabels      = []string{"interface", "driver", "role", "direction"}

	ringDesiredDesc = prometheus.NewDesc(namespace+"_ring_desired_entries",
		"Ring size the profile asks for, after clamping to the device maximum and the driver's rounding rule.",
		ringLabels, nil)
	ringCurrentDesc = prometheus.NewDesc(namespace+"_ring_current_entries",
		"Ring size the device reported at the last reconcile.", ringLabels, nil)
	ringMaxDesc = prometheus.NewDesc(namespace+"_ring_max_entries",
		"Largest ring size the device reports it supports.", ringLabels, nil)
	ringRefusedDesc = prometheus.NewDesc(namespace+"_ring_refused",
		"1 when the device kept a different ring size than the agent wrote (desired vs current entries); "+
			"the agent does not rewrite it while the device keeps that size.", ringLabels, nil)
	mtuDesiredDesc = prometheus.NewDesc(namespace+"_mtu_desired_bytes",
		"MTU the profile asks for (current MTU: node-exporter's node_network_mtu_bytes).",
		interfaceLabels, nil)
	interfaceDriftDesc = prometheus.NewDesc(namespace+"_interface_drift",
		"1 when a managed ring or MTU of this interface differs from the profile.", interfaceLabels, nil)
	interfaceErrorDesc = prometheus.NewDesc(namespace+"_interface_apply_failing",
		"1 when the last reconcile could not apply the profile to this interface.", interfaceLabels, nil)
	sysctlDesiredDesc = prometheus.NewDesc(namespace+"_sysctl_desired",
		"Sysctl value the profile asks for.", []string{"sysctl"}, nil)
	sysctlCurrentDesc = prometheus.NewDesc(namespace+"_sysctl_current",
		"Sysctl value read at the last reconcile.", []string{"sysctl"}, nil)
	driftDesc = prometheus.NewDesc(namespace+"_drift",
		"1 when any managed value differs from the profile.", nil, nil)
	degradedDesc = prometheus.NewDesc(namespace+"_degraded",
		"1 when the last reconcile could not apply the profile.", nil, nil)
	lastReconcileDesc = prometheus.NewDesc(namespace+"_last_reconcile_timestamp_seconds",
		"Time the last reconcile finished, in seconds since the epoch.", nil, nil)
	// node-exporter's ethtool collector is off by default, so these are not a duplicate; only the counters
	// nic_drivers.json curates are exported, which bounds the counter label.
	driverCounterDesc = prometheus.NewDesc(namespace+"_nic_driver_counter_total",
		"A drop or allowance counter of the NIC driver as `ethtool -S` names it (read through the ETHTOOL_GSTATS "+
			"ioctl at scrape time), for the counters nic_drivers.json curates on interfaces the profile selects; "+
			"cause is rx_ring_overflow, instance_allowance or not_a_node_setting.",
		[]string{"interface", "driver", "role", "counter", "cause"}, nil)
)

// DriverStats reads a link's `ethtool -S` counters; (*ethioctl.Reader).Stats is one.
type DriverStats func(intf string) (map[string]uint64, error)

// Metrics holds the agent's series. The per-interface and per-sysctl gauges are a snapshot of the last
// report, produced at scrape time: an interface that disappears (an SR-IOV VF re-added comes back under a
// new name or index) simply stops being exported, with no stale series left behind and no window in which
// a scrape sees half of an update.
type Metrics struct {
	mu     sync.Mutex
	series []prometheus.Metric // nil until the first reconcile: no value beats a made-up zero
	// nics are the selected links of the last report whose driver has curated counters.
	nics        []status.Interface
	driverStats DriverStats

	applyErrors prometheus.Counter
	linkEvents  *prometheus.CounterVec
	reconciles  *prometheus.CounterVec
}

// New registers the agent's metrics with reg. It panics if they are already registered there, like
// prometheus.MustRegister: that is a programming error, not a runtime condition.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		applyErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "apply_errors_total",
			Help: "Settings the agent failed to apply, counted once per reconcile that failed them.",
		}),
		linkEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "link_events_total",
			Help: "Netlink link events seen, by kind (added, removed, changed).",
		}, []string{"kind"}),
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "reconciles_total",
			Help: "Reconciles finished, by result (applied, degraded, dry-run).",
		}, []string{"result"}),
	}
	// Every label value exists from the start so rate() and absent() work before the first event.
	for _, k := range linkEventKinds {
		m.linkEvents.WithLabelValues(k)
	}
	for _, r := range reconcileResults {
		m.reconciles.WithLabelValues(string(r))
	}
	reg.MustRegister(m.applyErrors, m.linkEvents, m.reconciles, snapshot{m}, driverCounters{m})
	return m
}

// SetDriverStats turns on the driver counters: read with stats at every scrape.
func (m *Metrics) SetDriverStats(stats DriverStats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.driverStats = stats
}

// Observe records one reconcile's report. Call it after every reconcile.
func (m *Metrics) Observe(r status.Report) {
	m.reconciles.WithLabelValues(string(r.State)).Inc()
	m.applyErrors.Add(float64(countErrors(r)))
	series := snapshotSeries(r)
	var nics []status.Interface
	seen := map[string]bool{}
	for _, i := range r.Interfaces {
		if i.Selected && !seen[i.Name] && len(rings.Drivers[i.Driver].Counters) > 0 {
			seen[i.Name] = true
			nics = append(nics, status.Interface{Name: i.Name, Driver: i.Driver, Role: i.Role})
		}
	}
	m.mu.Lock()
	m.series = series
	m.nics = nics
	m.mu.Unlock()
}

// LinkEvent counts one netlink link event; kind is KindAdded, KindRemoved or KindChanged.
func (m *Metrics) LinkEvent(kind string) {
	switch kind {
	case KindAdded, KindRemoved, KindChanged:
	default:
		kind = kindUnknown
	}
	m.linkEvents.WithLabelValues(kind).Inc()
}

// countErrors counts the distinct failures in a report. The reconciler may list a link's failure both in
// Report.Errors and in Interface.Error; a link error already quoted in Report.Errors is not counted twice.
func countErrors(r status.Report) int {
	n := len(r.Errors)
	for _, i := range r.Interfaces {
		if i.Error == "" {
			continue
		}
		quoted := false
		for _, e := range r.Errors {
			if strings.Contains(e, i.Error) {
				quoted = true
				break
			}
		}
		if !quoted {
			n++
		}
	}
	return n
}

// driverCounters reads the curated driver counters of the selected NICs at scrape time. A NIC whose
// stats cannot be read (gone since the last reconcile) is left out of that scrape.
type driverCounters struct{ m *Metrics }

func (d driverCounters) Describe(ch chan<- *prometheus.Desc) { ch <- driverCounterDesc }

func (d driverCounters) Collect(ch chan<- prometheus.Metric) {
	d.m.mu.Lock()
	nics, stats := d.m.nics, d.m.driverStats
	d.m.mu.Unlock()
	if stats == nil {
		return
	}
	for _, i := range nics {
		values, err := stats(i.Name)
		if err != nil {
			continue
		}
		for _, c := range rings.Drivers[i.Driver].Counters {
			if v, ok := values[c.Name]; ok {
				ch <- prometheus.MustNewConstMetric(driverCounterDesc, prometheus.CounterValue, float64(v),
					i.Name, i.Driver, i.Role, c.Name, string(c.Cause))
			}
		}
	}
}

// snapshot exports the last report as gauges at scrape time.
type snapshot struct{ m *Metrics }

func (s snapshot) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{ringDesiredDesc, ringCurrentDesc, ringMaxDesc, ringRefusedDesc, mtuDesiredDesc,
		interfaceDriftDesc, interfaceErrorDesc, sysctlDesiredDesc, sysctlCurrentDesc, driftDesc, degradedDesc,
		lastReconcileDesc} {
		ch <- d
	}
}

func (s snapshot) Collect(ch chan<- prometheus.Metric) {
	s.m.mu.Lock()
	series := s.m.series
	s.m.mu.Unlock()
	for _, m := range series {
		ch <- m
	}
}

// snapshotSeries turns a report into gauges. It runs in Observe rather than at scrape time so the
// snapshot shares no memory with the caller's report.
func snapshotSeries(r status.Report) []prometheus.Metric {
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	seen := map[string]bool{}
	for _, i := range r.Interfaces {
		// Unselected links (pod veths, bridges, cilium_*) are left out: one series set per pod would
		// make the agent's cardinality grow with pod churn while saying nothing about tuning.
		// A name listed twice would make the whole scrape fail with a duplicate-series error; the
		// first entry wins.
		if !i.Selected || seen[i.Name] {
			continue
		}
		seen[i.Name] = true
		for _, dir := range []struct {
			name string
			ring *status.Ring
		}{{"rx", i.RX}, {"tx", i.TX}} {
			if dir.ring == nil {
				continue
			}
			if dir.ring.Desired != 0 { // 0 means the profile leaves this ring alone
				gauge(ringDesiredDesc, float64(dir.ring.Desired), i.Name, i.Driver, i.Role, dir.name)
				gauge(ringRefusedDesc, boolValue(dir.ring.Refused), i.Name, i.Driver, i.Role, dir.name)
			}
			gauge(ringCurrentDesc, float64(dir.ring.Current), i.Name, i.Driver, i.Role, dir.name)
			gauge(ringMaxDesc, float64(dir.ring.Max), i.Name, i.Driver, i.Role, dir.name)
		}
		if i.MTU != nil {
			gauge(mtuDesiredDesc, float64(i.MTU.Desired), i.Name, i.Driver, i.Role)
		}
		gauge(interfaceDriftDesc, boolValue(interfaceDrifted(i)), i.Name, i.Driver, i.Role)
		gauge(interfaceErrorDesc, boolValue(i.Error != ""), i.Name, i.Driver, i.Role)
	}
	for name, v := range r.Sysctls {
		gauge(sysctlDesiredDesc, float64(v.Desired), name)
		gauge(sysctlCurrentDesc, float64(v.Current), name)
	}
	gauge(driftDesc, boolValue(r.Drifted()))
	gauge(degradedDesc, boolValue(r.State == status.StateDegraded))
	if !r.Time.IsZero() {
		gauge(lastReconcileDesc, float64(r.Time.UnixNano())/1e9)
	}
	return out
}

// interfaceDrifted applies Report.Drifted's rule to one interface.
func interfaceDrifted(i status.Interface) bool {
	return status.Report{Interfaces: []status.Interface{i}}.Drifted()
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
