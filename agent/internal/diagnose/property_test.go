package diagnose

import (
	"math/rand/v2"
	"testing"
)

// Properties over random nodes (fixed seed, so a failure reproduces): whatever moves, lost packets rank
// before signals and each group by falling rate; every finding counted something; a node where nothing
// moved has no finding.
func TestRankingProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 2026))
	for i := range 500 {
		s := newScripted()
		s.conntrack = &Conntrack{Count: 1, Max: 64}
		f := NewFakeNICs(s)
		f.Add("eth1", &FakeNIC{Driver: "mana", RxRing: 512, RxMax: 8192})
		f.Add("ens5", &FakeNIC{Driver: "ena", RxRing: 1024, RxMax: 16384})
		bump := func() uint64 {
			if r.IntN(2) == 0 {
				return 0
			}
			return uint64(r.IntN(100000))
		}
		moved := false
		res := diagnoseAround(t, f, func() {
			for _, d := range []*uint32{&s.softnet[0].Dropped, &s.softnet[1].TimeSqueeze} {
				n := bump()
				*d += uint32(n)
				moved = moved || n > 0
			}
			for _, d := range []*uint64{&s.protocols.UDPRcvbufErrors, &s.protocols.ListenOverflows,
				&s.protocols.TCPBacklogDrop, &s.conntrack.Drop} {
				n := bump()
				*d += n
				moved = moved || n > 0
			}
			for _, c := range []struct{ link, counter string }{
				{"eth1", "hc_rx_discards_no_wqe"}, {"ens5", "pps_allowance_exceeded"}, {"ens5", "linklocal_allowance_exceeded"},
			} {
				n := bump()
				f.Bump(c.link, c.counter, n)
				moved = moved || n > 0
			}
		})
		if !moved && len(res.Findings) != 0 {
			t.Fatalf("case %d: nothing moved, findings %+v", i, res.Findings)
		}
		if moved && len(res.Findings) == 0 {
			t.Fatalf("case %d: counters moved, no finding", i)
		}
		for j, x := range res.Findings {
			if x.Delta == 0 {
				t.Fatalf("case %d: finding %+v counted nothing", i, x)
			}
			if j == 0 {
				continue
			}
			prev := res.Findings[j-1]
			if !prev.Drops && x.Drops {
				t.Fatalf("case %d: drop %s ranked after signal %s", i, x.Cause, prev.Cause)
			}
			if prev.Drops == x.Drops && prev.PerSecond < x.PerSecond {
				t.Fatalf("case %d: %s (%v/s) ranked before %s (%v/s)", i, prev.Cause, prev.PerSecond, x.Cause, x.PerSecond)
			}
		}
	}
}
