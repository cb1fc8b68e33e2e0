package probe

import (
	"reflect"
	"testing"
	"time"
)

// Each interval's tails go to the drop counter that rose most in it (ties by the receive path's order),
// unexplained when none rose or the counters do not cover the interval; a counter that fell (a wrapped u32,
// a link gone) is no drop.
func TestAttributeNamesTheCounterThatRose(t *testing.T) {
	tl := &timeline{interval: time.Second, snaps: []map[string]uint64{
		{"backlog": 10, "rx_ring_overflow": 5, "allowance": 0, "conntrack": 0},
		{"backlog": 10, "rx_ring_overflow": 5, "allowance": 0, "conntrack": 0}, // 0..1 s: nothing rose
		{"backlog": 14, "rx_ring_overflow": 6, "allowance": 0, "conntrack": 0}, // 1..2 s: backlog +4, ring +1
		{"backlog": 15, "rx_ring_overflow": 7, "allowance": 0, "conntrack": 0}, // 2..3 s: a tie
		{"backlog": 1, "rx_ring_overflow": 7, "allowance": 0, "conntrack": 3},  // 3..4 s: backlog fell
	}}
	causes, intervals := attribute(tl, map[int]uint64{0: 1, 1: 2, 2: 1, 3: 5, 9: 1})
	want := map[string]uint64{"unexplained": 2, "backlog": 2, "rx_ring_overflow": 1, "conntrack": 5}
	if !reflect.DeepEqual(causes, want) {
		t.Fatalf("causes %v, want %v", causes, want)
	}
	if len(intervals) != 5 || intervals[1].StartSeconds != 1 || intervals[1].Drops["backlog"] != 4 ||
		intervals[4].Cause != "unexplained" || intervals[4].Drops != nil {
		t.Fatalf("intervals %+v", intervals)
	}
	if c, _ := attribute(nil, map[int]uint64{0: 3}); !reflect.DeepEqual(c, map[string]uint64{"unexplained": 3}) {
		t.Fatalf("without counters: %v", c)
	}
}
