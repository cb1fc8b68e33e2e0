package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// OtherDestination labels the sum of every destination not in the top K.
const OtherDestination = "other"

// OtherWorkload labels the sum of every (workload, destination) pair not in the top K.
const OtherWorkload = "other"

var (
	snatInUseDesc = prometheus.NewDesc(namespace+"_snat_ports_in_use",
		"SNAT ports this node's flows to one destination (IP:PORT/PROTO) hold: open flows plus flows closed less "+
			"than the hold time ago; the busiest destinations by name, the rest summed as destination=\"other\". "+
			"zone is the Node's topology.kubernetes.io/zone.",
		[]string{"destination", "zone"}, nil)
	snatMaxDesc = prometheus.NewDesc(namespace+"_snat_ports_in_use_max",
		"The most SNAT ports one destination holds on this node now.", nil, nil)
	snatPeakDesc = prometheus.NewDesc(namespace+"_snat_ports_peak",
		"The most SNAT ports one destination held on this node within the peak window (--snat-peak-window).",
		[]string{"zone"}, nil)
	snatNewDesc = prometheus.NewDesc(namespace+"_snat_new_connections_total",
		"New connections this node started to a destination outside the cluster. A destination's series counts "+
			"from when it entered the top destinations; while outside them its connections count under \"other\".",
		[]string{"destination"}, nil)
	snatEntriesDesc = prometheus.NewDesc(namespace+"_snat_conntrack_entries",
		"Entries in this node's conntrack table (nf_conntrack_count), outbound or not.", nil, nil)
	snatCapacityDesc = prometheus.NewDesc(namespace+"_snat_allocated_ports",
		"SNAT ports one destination may use, from the profile's outbound section: the node's allocated ports "+
			"(kind azure-load-balancer), or the per-destination limit per IP times the NAT gateway's IPs (shared "+
			"by every node behind the gateway). kind is outbound.kind, zone as on the peak.",
		[]string{"kind", "zone"}, nil)
	snatPressureDesc = prometheus.NewDesc(namespace+"_snat_pressure",
		"1 while the SNATPortPressure Node condition is True.", nil, nil)
	snatTrackedDesc = prometheus.NewDesc(namespace+"_snat_tracked_flows",
		"Open outbound flows plus (destination, second) buckets of closed ones still held: what --snat-max-flows "+
			"bounds.", nil, nil)
	snatOpenDesc = prometheus.NewDesc(namespace+"_snat_open_flows",
		"Open outbound flows, every destination's: counted until conntrack reaps their entries, as "+
			"conntrack_entries counts them.", nil, nil)
	snatByWorkloadDesc = prometheus.NewDesc(namespace+"_snat_ports_in_use_by_workload",
		"SNAT ports one workload's flows to one destination hold on this node (open plus held, as "+
			"ports_in_use). kind is the workload's (Deployment, StatefulSet, DaemonSet, CronJob, Job, ReplicaSet, "+
			"Pod, or node: the node's own processes and host-network pods; unknown: an address no pod on this "+
			"node held when the flow started). The busiest (workload, destination) pairs by name "+
			"(--snat-workload-top), the rest summed as workload=\"other\" destination=\"other\"; a workload's "+
			"series disappears once it holds no port.",
		[]string{"namespace", "workload", "kind", "destination"}, nil)
	snatUntrackedDesc = prometheus.NewDesc(namespace+"_snat_untracked_flows_total",
		"Outbound flows left uncounted because --snat-max-flows was reached: the ports in use are then a lower "+
			"bound.", nil, nil)
)

// SNAT exports the outbound SNAT accounting: the last snapshot, produced at scrape time.
type SNAT struct {
	mu      sync.Mutex
	zone    string
	snap    *snat.Snapshot
	verdict status.SNAT
	resyncs *prometheus.CounterVec
}

// NewSNAT registers the SNAT metrics with reg.
func NewSNAT(reg prometheus.Registerer) *SNAT {
	s := &SNAT{resyncs: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "snat_resyncs_total",
		Help: "Dumps of the conntrack table, by reason: start, overflow (events were lost: ENOBUFS), error " +
			"(a socket or dump failed and was re-opened).",
	}, []string{"reason"})}
	for _, r := range snat.Reasons {
		s.resyncs.WithLabelValues(r)
	}
	reg.MustRegister(s.resyncs, snatCollector{s})
	return s
}

// Resynced counts one dump of the conntrack table.
func (s *SNAT) Resynced(reason string) { s.resyncs.WithLabelValues(reason).Inc() }

// SetZone sets the zone label (the Node's topology.kubernetes.io/zone; "" until read).
func (s *SNAT) SetZone(zone string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.zone = zone
}

// Observe stores a snapshot and the verdict on it.
func (s *SNAT) Observe(snap snat.Snapshot, verdict status.SNAT) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap, s.verdict = &snap, verdict
}

type snatCollector struct{ s *SNAT }

func (c snatCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{snatInUseDesc, snatMaxDesc, snatPeakDesc, snatNewDesc, snatEntriesDesc,
		snatCapacityDesc, snatPressureDesc, snatOpenDesc, snatTrackedDesc, snatUntrackedDesc, snatByWorkloadDesc} {
		ch <- d
	}
}

func (c snatCollector) Collect(ch chan<- prometheus.Metric) {
	c.s.mu.Lock()
	snap, verdict, zone := c.s.snap, c.s.verdict, c.s.zone
	c.s.mu.Unlock()
	if snap == nil {
		return // no value beats a made-up zero before the first dump
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for _, u := range snap.Top {
		gauge(snatInUseDesc, float64(u.InUse), u.Destination, zone)
		counter(snatNewDesc, float64(u.New), u.Destination)
	}
	gauge(snatInUseDesc, float64(snap.OtherInUse), OtherDestination, zone)
	counter(snatNewDesc, float64(snap.OtherNew), OtherDestination)
	if snap.Attributed {
		for _, u := range snap.Workloads {
			gauge(snatByWorkloadDesc, float64(u.InUse), u.Workload.Namespace, u.Workload.Name, u.Workload.Kind,
				u.Destination)
		}
		gauge(snatByWorkloadDesc, float64(snap.OtherWorkloadInUse), "", OtherWorkload, "", OtherDestination)
	}
	gauge(snatMaxDesc, float64(snap.Max))
	gauge(snatPeakDesc, float64(snap.Peak), zone)
	if snap.ConntrackEntries >= 0 {
		gauge(snatEntriesDesc, float64(snap.ConntrackEntries))
	}
	if verdict.Capacity > 0 {
		gauge(snatCapacityDesc, float64(verdict.Capacity), verdict.Kind, zone)
		gauge(snatPressureDesc, boolValue(verdict.Pressure))
	}
	gauge(snatOpenDesc, float64(snap.Open))
	gauge(snatTrackedDesc, float64(snap.Tracked))
	counter(snatUntrackedDesc, float64(snap.Untracked))
}
