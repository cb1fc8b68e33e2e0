package diagnose

import (
	"reflect"
	"testing"

	"github.com/wirespeed-io/wirespeed/agent/internal/softnet"
)

// DropTotals sums each cause's counters from the driver table nic_drivers.json (mlx5's rx_out_of_buffer is
// ring overflow, ENA's bw_in_allowance_exceeded an allowance, its linklocal_allowance_exceeded no node setting
// and so no probe cause), the links' missed and FIFO counters, softnet's dropped column over CPUs, and
// conntrack's drop and early_drop. The counters are in-memory values named as such: those NICs cannot exist here.
func TestDropTotalsSumsEachCauseFromFakeCounters(t *testing.T) {
	s := Sample{
		Softnet: []softnet.CPUStat{{CPU: 0, Dropped: 3, TimeSqueeze: 50}, {CPU: 1, Dropped: 4}},
		Links: map[string]LinkSample{
			"eth0": {Link: Link{Name: "eth0", Driver: "mlx5_core", RxMissed: 1, RxFIFO: 2, RxDropped: 99},
				DriverCounters: map[string]uint64{"rx_out_of_buffer": 10}},
			"ens5": {Link: Link{Name: "ens5", Driver: "ena"},
				DriverCounters: map[string]uint64{"bw_in_allowance_exceeded": 5, "linklocal_allowance_exceeded": 70}},
			"veth1": {Link: Link{Name: "veth1", Driver: "veth", RxMissed: 100}},
		},
		Conntrack: &Conntrack{Drop: 6, EarlyDrop: 1, InsertFailed: 40},
	}
	want := map[string]uint64{DropRXRingOverflow: 113, DropBacklog: 7, DropAllowance: 5, DropConntrack: 7}
	if got := DropTotals(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := DropTotals(Sample{}); !reflect.DeepEqual(got, map[string]uint64{DropRXRingOverflow: 0, DropBacklog: 0,
		DropAllowance: 0, DropConntrack: 0}) {
		t.Fatalf("empty sample: %v", got)
	}
}
