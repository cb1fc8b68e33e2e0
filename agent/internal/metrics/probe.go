package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed-io/wirespeed/agent/internal/probe"
)

// probeBuckets are the RTT histogram's bounds: two per decade of probe.Bounds (10 us, 31.6 us, ... 1 s) and
// the four just under each retransmission timeout (199.5 ms, 398 ms, 794 ms, 1.995 s), 15 in all. The full
// 54 of the one-shot report would be 55 series per peer per node; these keep a 5,000-node fleet at 8 peers
// to 16 x 8 x 5,000 series, and still split a round trip that waited out an RTO from one that did not.
var probeBuckets = func() []float64 {
	var b []float64
	for k, v := range probe.Bounds {
		if k%5 == 0 || k == 43 || k == 46 || k == 49 || k == len(probe.Bounds)-1 {
			b = append(b, v)
		}
	}
	return b
}()

// Zone relations of a probe pair.
const (
	ZonesSame  = "same"
	ZonesCross = "cross"
)

// Probe exports the continuous probe: round trips as they end, tails and retransmissions per round. Series
// exist only for the round's peers (at most probe.MaxFleetPeers): a peer no longer chosen loses its series.
type Probe struct {
	mu          sync.Mutex
	rtt         *prometheus.HistogramVec
	tails       *prometheus.CounterVec
	retransmits *prometheus.CounterVec
	peers       []string
}

// NewProbe registers the probe's families on reg.
func NewProbe(reg prometheus.Registerer) *Probe {
	p := &Probe{
		rtt: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "probe_rtt_seconds",
			Help: "Round trips of the continuous probe's synchronous 1-byte TCP request/response streams to one peer " +
				"node (peer_zone its topology.kubernetes.io/zone; zones same or cross). A round trip above 0.1995 s " +
				"has waited out a TCP retransmission timeout (Linux's minimum RTO is 200 ms).",
			Buckets: probeBuckets,
		}, []string{"peer_node", "peer_zone", "zones"}),
		tails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "probe_tails_total",
			Help: "Probe round trips over the tail threshold (--probe-tail-threshold, 150 ms), by the cause named " +
				"from the drop counters that rose in their interval (rx_ring_overflow, backlog, allowance, conntrack, " +
				"unexplained) and the side they rose on (local: this node, peer: the peer node, both, unknown); " +
				"counted when the round (--probe-round) ends.",
		}, []string{"peer_node", "cause", "side"}),
		retransmits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "probe_retransmits_total",
			Help: "Segments the probe's own sockets to one peer retransmitted (TCP_INFO tcpi_total_retrans, " +
				"handshakes included), counted when the round ends.",
		}, []string{"peer_node"}),
	}
	reg.MustRegister(p.rtt, p.tails, p.retransmits)
	return p
}

func zones(self, peer probe.Node) string {
	if self.Zone == peer.Zone {
		return ZonesSame
	}
	return ZonesCross
}

// Peers removes the series of every peer not among peers, and gives each peer chosen every tails series
// (cause x side) and its retransmits series at 0 before its first round ends. A counter born with its first
// tails would be lost to any window it is born in: increase() counts from a series' first sample, so a
// series first scraped at 12 gains 0 (prometheus.io/docs/practices/instrumentation/#avoid-missing-metrics:
// export 0 for series you know may exist). `wirespeed prove` sums these over its windows
// (tests/sizing/test_prove_probe_lab.py). That is 20 tails series per peer, 160 at 8 peers.
func (p *Probe) Peers(_ probe.Node, peers []probe.Node) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var now []string
	for _, n := range peers {
		now = append(now, n.Name)
		for _, cause := range probe.Causes {
			for _, side := range probe.Sides {
				p.tails.WithLabelValues(n.Name, cause, side)
			}
		}
		p.retransmits.WithLabelValues(n.Name)
	}
	for _, old := range p.peers {
		if !slices.Contains(now, old) {
			l := prometheus.Labels{"peer_node": old}
			p.rtt.DeletePartialMatch(l)
			p.tails.DeletePartialMatch(l)
			p.retransmits.DeletePartialMatch(l)
		}
	}
	p.peers = now
}

// RoundTrips observes the round trips to peer: the histogram's series is looked up once (a label hash and
// the family's lock), not once per round trip. Peers, which removes series, runs before a round takes them.
func (p *Probe) RoundTrips(self, peer probe.Node) func(time.Duration) {
	o := p.rtt.WithLabelValues(peer.Name, peer.Zone, zones(self, peer))
	return func(rtt time.Duration) { o.Observe(rtt.Seconds()) }
}

// Round counts one round's tails by cause and side, and its retransmissions, per peer.
func (p *Probe) Round(_ probe.Node, peers []probe.Node, rep probe.Report) {
	for i, r := range rep.Peers {
		if i >= len(peers) {
			break
		}
		name := peers[i].Name
		for side, causes := range r.CausesBySide {
			if !slices.Contains(probe.Sides, side) {
				continue
			}
			for cause, n := range causes {
				if slices.Contains(probe.Causes, cause) {
					p.tails.WithLabelValues(name, cause, side).Add(float64(n))
				}
			}
		}
		p.retransmits.WithLabelValues(name).Add(float64(r.Retransmits))
	}
}
