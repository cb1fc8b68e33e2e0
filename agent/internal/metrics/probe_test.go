package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wirespeed-io/wirespeed/agent/internal/probe"
)

// The histogram keeps a bound just under the 200 ms minimum RTO and spans 10 us..2 s.
func TestProbeBucketsStraddleTheRTOAndSpanTheRange(t *testing.T) {
	if probeBuckets[0] != 1e-5 || probeBuckets[len(probeBuckets)-1] != 1.995 {
		t.Fatalf("buckets %v: want 1e-05 .. 1.995", probeBuckets)
	}
	for _, want := range []float64{0.1995, 0.3981, 0.7943} {
		found := false
		for _, b := range probeBuckets {
			found = found || b == want
		}
		if !found {
			t.Errorf("no bound %g in %v", want, probeBuckets)
		}
	}
}

// Tails are counted by peer, cause and side; a cause or side outside the fixed sets is not a label; a peer
// no longer chosen loses every series.
func TestProbeCountsTailsAndForgetsOldPeers(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	p := NewProbe(reg)
	self := probe.Node{Name: "a", Zone: "z1"}
	b, c := probe.Node{Name: "b", Zone: "z1"}, probe.Node{Name: "c", Zone: "z2"}
	p.Peers(self, []probe.Node{b, c})
	p.RoundTrips(self, b)(250 * time.Millisecond)
	p.RoundTrips(self, c)(time.Millisecond)
	p.Round(self, []probe.Node{b, c}, probe.Report{Peers: []probe.Result{
		{Retransmits: 2, CausesBySide: map[string]map[string]uint64{"peer": {"backlog": 2}, "bogus": {"backlog": 9}}},
		{CausesBySide: map[string]map[string]uint64{"local": {"made-up": 5, "unexplained": 1}}},
	}})
	if got := testutil.ToFloat64(p.tails.WithLabelValues("b", "backlog", "peer")); got != 2 {
		t.Errorf("b backlog peer: %g, want 2", got)
	}
	if got := testutil.ToFloat64(p.tails.WithLabelValues("c", "unexplained", "local")); got != 1 {
		t.Errorf("c unexplained local: %g, want 1", got)
	}
	// Every cause x side of each peer, at 0 until counted; the bogus side and the made-up cause are no series.
	if n, want := testutil.CollectAndCount(p.tails), 2*len(probe.Causes)*len(probe.Sides); n != want {
		t.Fatalf("%d tails series, want %d", n, want)
	}
	if n := testutil.CollectAndCount(p.rtt); n != 2 {
		t.Fatalf("%d rtt series, want 2", n)
	}
	if got := testutil.ToFloat64(p.retransmits.WithLabelValues("b")); got != 2 {
		t.Errorf("retransmits b %g, want 2", got)
	}
	p.Peers(self, []probe.Node{c})
	for name, n := range map[string][2]int{"rtt": {testutil.CollectAndCount(p.rtt), 1},
		"tails":       {testutil.CollectAndCount(p.tails), len(probe.Causes) * len(probe.Sides)},
		"retransmits": {testutil.CollectAndCount(p.retransmits), 1}} {
		if n[0] != n[1] {
			t.Errorf("%s: %d series after peer b left, want %d (c's)", name, n[0], n[1])
		}
	}
}

// A peer's tails and retransmits series exist at 0 from the round it is chosen, before any tail: a series
// born with its first tails would add nothing to increase() over the window it is born in.
func TestProbePeersStartEveryCounterAtZero(t *testing.T) {
	p := NewProbe(prometheus.NewPedanticRegistry())
	self, b := probe.Node{Name: "a"}, probe.Node{Name: "b"}
	p.Peers(self, []probe.Node{b})
	if n := testutil.CollectAndCount(p.tails); n != len(probe.Causes)*len(probe.Sides) {
		t.Fatalf("%d tails series before any round ended, want every cause x side", n)
	}
	if n := testutil.CollectAndCount(p.retransmits); n != 1 {
		t.Fatalf("%d retransmits series, want 1", n)
	}
	if got := testutil.ToFloat64(p.tails.WithLabelValues("b", "backlog", "peer")) +
		testutil.ToFloat64(p.retransmits.WithLabelValues("b")); got != 0 {
		t.Fatalf("a new peer's counters sum to %g, want 0", got)
	}
}
