package probe

import (
	"context"
	"slices"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/diagnose"
)

// DropCounters reads the node's drop counters, cumulative, by cause (diagnose.DropTotals: rx_ring_overflow,
// backlog, allowance, conntrack). The probe reads them every interval and names the cause of each interval's
// tails by the counter that rose.
type DropCounters func() (map[string]uint64, error)

// causeOrder breaks ties between counters that rose by as much: the NIC's ring first (the earliest drop
// on the receive path), then the backlog behind it, then the cloud's allowance and conntrack.
var causeOrder = []string{diagnose.DropRXRingOverflow, diagnose.DropBacklog, diagnose.DropAllowance, diagnose.DropConntrack}

// TailInterval is one interval in which tails began: how many, the drop counters' deltas over it, and the
// cause named (the counter that rose most, or unexplained).
type TailInterval struct {
	StartSeconds float64           `json:"start_seconds"`
	Tails        uint64            `json:"tails"`
	Drops        map[string]uint64 `json:"drops"`
	// PeerDrops are the peer's counters' deltas over the interval, as it answered them (per peer only).
	PeerDrops map[string]uint64 `json:"peer_drops,omitempty"`
	Cause     string            `json:"cause"`
	Side      string            `json:"side"`
}

// The side a tail's cause is on: this node's counters rose (local), the peer's (peer), both by as much
// (both: two namespaces of one kernel, whose softnet_stat is global, look like that), or none (unknown).
const (
	SideLocal   = "local"
	SidePeer    = "peer"
	SideBoth    = "both"
	SideUnknown = "unknown"
)

// Sides are every side a tail is attributed to, for bounded metric labels.
var Sides = []string{SideLocal, SidePeer, SideBoth, SideUnknown}

// Causes are every cause a tail is attributed to, for bounded metric labels.
var Causes = append(append([]string{}, causeOrder...), CauseUnexplained)

// timeline holds the counters read at the start of the run and every interval after it, then once more when
// every stream has finished: interval k runs from snaps[k] to snaps[k+1].
type timeline struct {
	interval time.Duration
	snaps    []map[string]uint64
	err      error
}

// sample reads the counters at start + k x interval until stop is closed, then once more.
func sample(ctx context.Context, cfg Config, start time.Time, stop <-chan struct{}) *timeline {
	tl := &timeline{interval: cfg.Interval}
	read := func() bool {
		m, err := cfg.Counters()
		if err != nil {
			tl.err = err
			return false
		}
		tl.snaps = append(tl.snaps, m)
		return true
	}
	if !read() {
		return tl
	}
	for k := 1; ; k++ {
		select {
		case <-cfg.Clock.After(start.Add(time.Duration(k) * cfg.Interval).Sub(cfg.Clock.Now())):
			if !read() {
				return tl
			}
		case <-stop:
			read()
			return tl
		case <-ctx.Done():
			return tl
		}
	}
}

// deltas over interval k; ok is false when the timeline does not cover it (counters unreadable).
func (tl *timeline) deltas(k int) (map[string]uint64, bool) {
	if tl == nil || k < 0 || k+1 >= len(tl.snaps) {
		return nil, false
	}
	before, after := tl.snaps[k], tl.snaps[k+1]
	d := map[string]uint64{}
	for name, a := range after {
		if b, ok := before[name]; ok && a > b { // a fall (a wrapped u32, a link gone) is no drop
			d[name] = a - b
		}
	}
	return d, true
}

// cause names the cause of drops d: the counter that rose most, ties by causeOrder.
func cause(d map[string]uint64) string {
	best, n := CauseUnexplained, uint64(0)
	for _, c := range causeOrder {
		if d[c] > n {
			best, n = c, d[c]
		}
	}
	return best
}

// causeAndSide names the cause of an interval's tails from this node's drops dl and the peer's dp (nil when
// not known): the counter that rose most on either side, ties between causes by causeOrder; the same cause
// rising by as much on both sides is side both.
func causeAndSide(dl, dp map[string]uint64) (string, string) {
	lc, pc := cause(dl), cause(dp)
	ln, pn := dl[lc], dp[pc]
	switch {
	case ln == 0 && pn == 0:
		return CauseUnexplained, SideUnknown
	case ln > pn:
		return lc, SideLocal
	case pn > ln:
		return pc, SidePeer
	case lc == pc:
		return lc, SideBoth
	case slices.Index(causeOrder, lc) < slices.Index(causeOrder, pc):
		return lc, SideLocal
	default:
		return pc, SidePeer
	}
}

// attribute turns tails per interval into causes and the list of intervals with tails, from this node's
// counters alone.
func attribute(tl *timeline, tailsAt map[int]uint64) (map[string]uint64, []TailInterval) {
	causes, _, out := attributeSides(tl, nil, tailsAt)
	return causes, out
}

// attributeSides turns tails per interval into causes, causes by side (side, then cause, to tails) and the
// intervals with tails, from this node's timeline local and the peer's timeline peer (either may be nil).
func attributeSides(local, peer *timeline, tailsAt map[int]uint64) (map[string]uint64, map[string]map[string]uint64, []TailInterval) {
	causes := map[string]uint64{}
	bySide := map[string]map[string]uint64{}
	var out []TailInterval
	for k := range sortedKeys(tailsAt) {
		n := tailsAt[k]
		ti := TailInterval{Tails: n}
		switch {
		case local != nil:
			ti.StartSeconds = (time.Duration(k) * local.interval).Seconds()
		case peer != nil:
			ti.StartSeconds = (time.Duration(k) * peer.interval).Seconds()
		}
		ti.Drops, _ = local.deltas(k)
		ti.PeerDrops, _ = peer.deltas(k)
		ti.Cause, ti.Side = causeAndSide(ti.Drops, ti.PeerDrops)
		causes[ti.Cause] += n
		if bySide[ti.Side] == nil {
			bySide[ti.Side] = map[string]uint64{}
		}
		bySide[ti.Side][ti.Cause] += n
		out = append(out, ti)
	}
	return causes, bySide, out
}

func sortedKeys(m map[int]uint64) func(yield func(int) bool) {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Values(keys)
}
