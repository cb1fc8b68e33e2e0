package probe

import (
	"testing"
	"time"
)

// A stream's sending instants are start + phase + k x interval: the first at or after t, never before it and
// never more than an interval after it, so a stream that overran its slot waits for its next one (no burst)
// and every stream of a run stays on the run's common grid.
func TestSlotAtOrAfter(t *testing.T) {
	start := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	interval := 500 * time.Millisecond
	s := stream{start: start, phase: 3 * (interval / paceSlots)}
	first := start.Add(s.phase)
	for _, tc := range []struct {
		at   time.Duration // after start
		want time.Time
	}{
		{0, first},
		{s.phase, first},
		{s.phase + time.Nanosecond, first.Add(interval)},
		{s.phase + interval, first.Add(interval)},
		{s.phase + 2*interval - time.Nanosecond, first.Add(2 * interval)},
		{s.phase + 7*interval + 3*time.Millisecond, first.Add(8 * interval)},
	} {
		at := start.Add(tc.at)
		got := s.slotAtOrAfter(at, interval)
		if !got.Equal(tc.want) {
			t.Errorf("slotAtOrAfter(start+%s) = start+%s, want start+%s", tc.at, got.Sub(start), tc.want.Sub(start))
		}
		if got.Before(at) || got.Sub(at) > interval {
			t.Errorf("slotAtOrAfter(start+%s) = start+%s: not within an interval after it", tc.at, got.Sub(start))
		}
		if off := got.Sub(start) % (interval / paceSlots); off != 0 {
			t.Errorf("slotAtOrAfter(start+%s) = start+%s: off the run's grid by %s", tc.at, got.Sub(start), off)
		}
	}
}
