package snat

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"
)

// The accounting's own cost per conntrack entry, without the kernel: what a dump of N entries and a steady
// stream of NEW/DESTROY events cost the Table (bench/agent/RESULTS.md records them beside the whole agent's
// measured CPU and RSS under real conntrack load). Flows go to 50 destinations, like the bench's load.

func benchFlows(n int) []Flow {
	out := make([]Flow, n)
	for i := range out {
		peer := netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(1 + i%50)}), 443)
		out[i] = Flow{ID: uint32(i + 1), Proto: ProtoTCP, OrigSrc: netip.MustParseAddr("10.244.1.10"),
			OrigSrcPort: uint16(1024 + i%60000), OrigDstPort: 443, Peer: peer}
	}
	return out
}

func benchTable(maxTracked int) *Table {
	return NewTable(Config{Classifier: NewClassifier(nil, false), TCPHold: 240 * time.Second, UDPHold: 240 * time.Second, Top: 20,
		PeakWindow: 24 * time.Hour, MaxTracked: maxTracked}, t0)
}

// BenchmarkDump: one dump of N entries into an empty table (the agent's start) and, in the same op, a second
// dump reconciling them (an overflow's re-dump). Reports ns and bytes per entry, and the heap the table keeps.
func BenchmarkDump(b *testing.B) {
	for _, n := range []int{10_000, 50_000, 200_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			flows := benchFlows(n)
			var kept uint64
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var before, after runtime.MemStats
				b.StopTimer() // the GCs measuring the heap are not the table's cost
				runtime.GC()
				runtime.ReadMemStats(&before)
				b.StartTimer()
				t := benchTable(2 * n)
				for round := 0; round < 2; round++ {
					t.BeginDump()
					for _, f := range flows {
						t.Dumped(f, t0, round > 0)
					}
					t.EndDump(t0, true)
				}
				t.Tick(t0)
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				kept = after.HeapAlloc - before.HeapAlloc
				runtime.KeepAlive(t)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/entry")
			b.ReportMetric(float64(kept)/float64(n), "heap-B/entry")
		})
	}
}

// BenchmarkEvents: a NEW and, later, its DESTROY per op, with 50,000 flows open and one Tick a second of
// simulated time (2,000 new flows a second, the load), so held ports fill and leave the wheel.
func BenchmarkEvents(b *testing.B) {
	const open, rate = 50_000, 2_000
	flows := benchFlows(open)
	t := benchTable(1 << 20)
	for _, f := range flows {
		t.New(f, t0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now := t0.Add(time.Duration(i) * time.Second / rate)
		f := flows[i%open]
		t.Destroy(f, now)
		f.ID += uint32(open) // the next flow on that slot: a new conntrack id
		flows[i%open] = f
		t.New(f, now)
		if i%rate == 0 {
			t.Tick(now)
		}
	}
}
