package snat

import "time"

// Snapshot is the accounting at one Tick.
type Snapshot struct {
	Time time.Time
	// Top are the busiest destinations (at most Config.Top, each with a port in use), busiest first.
	Top []Use
	// OtherInUse sums every other destination's ports in use; OtherNew counts new connections made to a
	// destination while it was not in Top.
	OtherInUse int
	OtherNew   uint64
	// Max is the largest number of ports one destination uses now, MaxDestination which one.
	Max            int
	MaxDestination string
	// Peak is the largest Max seen within Config.PeakWindow.
	Peak int
	// Open counts the open flows, every destination's: an entry is open until its DESTROY event, which the
	// kernel sends when it reaps the entry, not when its timeout ends (its garbage collector reaps expired
	// entries in batches, tens of seconds apart under load), so Open follows ConntrackEntries (which counts
	// them until reaped too), not the live entries a dump lists.
	Open int
	// Tracked is what Config.MaxTracked bounds; Untracked counts flows left uncounted because it was reached.
	Tracked      int
	Untracked    uint64
	Destinations int
	// ConntrackEntries is the size of the whole conntrack table (nf_conntrack_count), -1 when unknown; the
	// Watcher's caller fills it in.
	ConntrackEntries int
	// Attributed: an Attributor is set, so the fields below are filled. Workloads are the busiest
	// (workload, destination) pairs (at most Config.WorkloadTop), busiest first; OtherWorkloadInUse sums the
	// rest; MaxWorkloads are the busiest workloads of MaxDestination (at most 3), for the pressure message.
	Attributed         bool
	Workloads          []WorkloadUse
	OtherWorkloadInUse int
	MaxWorkloads       []WorkloadUse
}

// Use is one named destination.
type Use struct {
	Destination string
	InUse       int    // open flows plus flows ended less than their protocol's hold ago
	Open        int    // open flows alone
	New         uint64 // new connections since it was last named (the counter series' value)
}

// wheel holds closed flows' ports until their time is up, one slot per second: a slot counts the flows per
// destination whose hold ends in that second. Memory grows with (destination, second) pairs, not with flows.
type wheel struct {
	span  int64 // the longest hold, in whole seconds
	slots []slot
	pairs int   // (destination, second) pairs held: what counts against Config.MaxTracked
	done  int64 // every second up to this one has been expired
}

type slot struct {
	at     int64
	counts map[int32]int32
}

// seconds is d in whole seconds, rounded up: a port is held a little longer rather than a little shorter.
func seconds(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }

// newWheel holds ports for at most hold (the longest of the protocols' holds).
func newWheel(hold time.Duration) wheel {
	span := seconds(hold)
	// Every live slot is in (now, now+span], so span+1 slots never collide.
	return wheel{span: span, slots: make([]slot, span+1)}
}

func (w *wheel) slot(at int64) *slot { return &w.slots[at%int64(len(w.slots))] }

func (w *wheel) has(at int64, idx int32) bool {
	s := w.slot(at)
	return s.at == at && s.counts[idx] > 0
}

// add holds one port of destination idx until second at (after now: the caller expired up to now).
func (w *wheel) add(at int64, idx int32) {
	s := w.slot(at)
	if s.at != at || s.counts == nil {
		s.at, s.counts = at, map[int32]int32{}
	}
	if s.counts[idx] == 0 {
		w.pairs++
	}
	s.counts[idx]++
}

// expire releases every slot whose second is at most now.
func (w *wheel) expire(now int64, release func(idx, n int32)) {
	if now <= w.done {
		return
	}
	from := w.done + 1
	if now-from >= int64(len(w.slots)) { // asleep for longer than the hold: every slot is due
		from = now - int64(len(w.slots)) + 1
	}
	for at := from; at <= now; at++ {
		s := w.slot(at)
		if s.counts == nil || s.at > now {
			continue
		}
		for idx, n := range s.counts {
			release(idx, n)
		}
		w.pairs -= len(s.counts)
		s.counts = nil
	}
	w.done = now
}

// window keeps the largest value seen per time bucket, peakBuckets of them across the peak window, so the
// peak is exact to within one bucket's width (6 minutes of a 24-hour window).
type window struct {
	width  int64
	starts []int64
	maxes  []int
}

const peakBuckets = 240

func newWindow(span time.Duration) window {
	width := int64(span/time.Second) / peakBuckets
	if width < 1 {
		width = 1
	}
	n := (int64(span/time.Second) + width - 1) / width
	if n < 1 {
		n = 1
	}
	w := window{width: width, starts: make([]int64, n), maxes: make([]int, n)}
	for i := range w.starts {
		w.starts[i] = -1
	}
	return w
}

func (w *window) note(now int64, v int) {
	b := now / w.width
	i := b % int64(len(w.starts))
	if w.starts[i] != b {
		w.starts[i], w.maxes[i] = b, 0
	}
	if v > w.maxes[i] {
		w.maxes[i] = v
	}
}

func (w *window) max(now int64) int {
	b := now / w.width
	oldest := b - int64(len(w.starts)) + 1
	best := 0
	for i, start := range w.starts {
		if start >= oldest && start <= b && w.maxes[i] > best {
			best = w.maxes[i]
		}
	}
	return best
}
