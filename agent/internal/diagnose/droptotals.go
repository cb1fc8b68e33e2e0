package diagnose

import (
	"github.com/wirespeed-io/wirespeed/agent/internal/rings"
	"github.com/wirespeed-io/wirespeed/agent/internal/softnet"
)

// The node-setting causes a probe tail is attributed to (issue 30): the drops behind each, as diagnose
// names them (rx_ring_overflow, backlog_drops, instance_allowance, conntrack_full).
const (
	DropRXRingOverflow = "rx_ring_overflow"
	DropBacklog        = "backlog"
	DropAllowance      = "allowance"
	DropConntrack      = "conntrack"
)

// DropTotals sums a sample's drop counters by cause, as Diagnose reads them: the links' rx_missed_errors and
// rx_fifo_errors and the curated ring counters of their drivers; softnet backlog drops; the drivers'
// allowance counters; conntrack drop and early_drop. The sums are cumulative: a caller subtracts two.
// softnet's per-CPU u32 counters are summed as read, so a CPU's wrap (2^32 drops) shows as a fall, which a
// caller treats as no drop.
func DropTotals(s Sample) map[string]uint64 {
	t := map[string]uint64{
		DropRXRingOverflow: 0,
		DropBacklog:        softnet.Sum(s.Softnet).Dropped,
		DropAllowance:      0,
		DropConntrack:      0,
	}
	for _, l := range s.Links {
		t[DropRXRingOverflow] += l.RxMissed + l.RxFIFO
		d, ok := rings.Drivers[l.Driver]
		if !ok {
			continue
		}
		for _, c := range d.Counters {
			switch c.Cause {
			case rings.CauseRXRingOverflow:
				t[DropRXRingOverflow] += l.DriverCounters[c.Name]
			case rings.CauseInstanceAllowance:
				t[DropAllowance] += l.DriverCounters[c.Name]
			}
		}
	}
	if s.Conntrack != nil {
		t[DropConntrack] += s.Conntrack.Drop + s.Conntrack.EarlyDrop
	}
	return t
}
