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

// With the peer's counters the cause is named on the side whose counter rose most; the same rise on both
// sides (two namespaces of one kernel) is side both; nothing rose on either is unexplained, side unknown.
func TestAttributeSidesNamesTheSideWhoseCounterRose(t *testing.T) {
	snaps := func(vals ...map[string]uint64) *timeline {
		return &timeline{interval: time.Second, snaps: vals}
	}
	local := snaps(
		map[string]uint64{"backlog": 0, "rx_ring_overflow": 0},
		map[string]uint64{"backlog": 0, "rx_ring_overflow": 0}, // 0..1: nothing here
		map[string]uint64{"backlog": 5, "rx_ring_overflow": 0}, // 1..2: backlog +5 here
		map[string]uint64{"backlog": 7, "rx_ring_overflow": 0}, // 2..3: +2 here, +2 there
		map[string]uint64{"backlog": 7, "rx_ring_overflow": 0}, // 3..4: nothing anywhere
	)
	peer := snaps(
		map[string]uint64{"backlog": 0, "rx_ring_overflow": 0},
		map[string]uint64{"backlog": 0, "rx_ring_overflow": 3}, // 0..1: the peer's ring +3
		map[string]uint64{"backlog": 1, "rx_ring_overflow": 3}, // 1..2: the peer's backlog +1 < local +5
		map[string]uint64{"backlog": 3, "rx_ring_overflow": 3},
		map[string]uint64{"backlog": 3, "rx_ring_overflow": 3},
	)
	causes, bySide, intervals := attributeSides(local, peer, map[int]uint64{0: 1, 1: 2, 2: 3, 3: 4})
	wantSides := map[string]map[string]uint64{
		"peer":    {"rx_ring_overflow": 1},
		"local":   {"backlog": 2},
		"both":    {"backlog": 3},
		"unknown": {"unexplained": 4},
	}
	if !reflect.DeepEqual(bySide, wantSides) {
		t.Fatalf("by side %v, want %v", bySide, wantSides)
	}
	if want := map[string]uint64{"rx_ring_overflow": 1, "backlog": 5, "unexplained": 4}; !reflect.DeepEqual(causes, want) {
		t.Fatalf("causes %v, want %v", causes, want)
	}
	if intervals[0].Side != "peer" || intervals[0].PeerDrops["rx_ring_overflow"] != 3 || intervals[1].Drops["backlog"] != 5 {
		t.Fatalf("intervals %+v", intervals)
	}
	// Without the peer's timeline, a local rise is local, and nothing is unknown.
	_, bySide, _ = attributeSides(local, nil, map[int]uint64{1: 1, 0: 1})
	if !reflect.DeepEqual(bySide, map[string]map[string]uint64{"local": {"backlog": 1}, "unknown": {"unexplained": 1}}) {
		t.Fatalf("local only: %v", bySide)
	}
	// Only the peer's counters: the peer's rise is the peer's.
	_, bySide, _ = attributeSides(nil, peer, map[int]uint64{0: 1})
	if !reflect.DeepEqual(bySide, map[string]map[string]uint64{"peer": {"rx_ring_overflow": 1}}) {
		t.Fatalf("peer only: %v", bySide)
	}
}

func TestCauseAndSideBreaksTiesByTheReceivePath(t *testing.T) {
	cases := []struct {
		local, peer map[string]uint64
		cause, side string
	}{
		{map[string]uint64{"backlog": 2}, map[string]uint64{"rx_ring_overflow": 2}, "rx_ring_overflow", "peer"},
		{map[string]uint64{"rx_ring_overflow": 2}, map[string]uint64{"conntrack": 2}, "rx_ring_overflow", "local"},
		{map[string]uint64{"allowance": 1}, nil, "allowance", "local"},
		{nil, map[string]uint64{"conntrack": 1}, "conntrack", "peer"},
		{map[string]uint64{"backlog": 0}, map[string]uint64{}, "unexplained", "unknown"},
	}
	for _, c := range cases {
		if cause, side := causeAndSide(c.local, c.peer); cause != c.cause || side != c.side {
			t.Errorf("local %v peer %v: %s/%s, want %s/%s", c.local, c.peer, cause, side, c.cause, c.side)
		}
	}
}
