package podowner

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

func tableFlow(id uint32, src netip.Addr) snat.Flow {
	return snat.Flow{ID: id, Proto: snat.ProtoTCP, OrigSrc: src, OrigSrcPort: uint16(1000 + id), OrigDstPort: 443,
		Peer: netip.MustParseAddrPort("52.1.2.3:443")}
}

func perWorkload(s snat.Snapshot) map[snat.Workload]int {
	out := map[snat.Workload]int{}
	for _, u := range s.Workloads {
		out[u.Workload] = u.InUse
	}
	return out
}

// The SNAT table keeps each open flow's workload until the History changes (snat.Versioned); both of the
// History's documented rules still hold through it: an address reused by a new pod leaves the flows that
// started before the new pod to the old one, and a pod the watch learns of late is named at the next Tick.
func TestTheTableFollowsTheHistorysChanges(t *testing.T) {
	h := NewHistory("node-1")
	tab := snat.NewTable(snat.Config{Classifier: snat.NewClassifier(nil, false), TCPHold: 30 * time.Second,
		UDPHold: 30 * time.Second, Top: 5, PeakWindow: time.Hour, MaxTracked: 1000, Attributor: h, WorkloadTop: 10}, t0)
	other := netip.MustParseAddr("10.244.1.8")
	h.Hold(ip, "a", api, at(0))
	tab.New(tableFlow(1, ip), at(10))
	if got := perWorkload(tab.Tick(at(11))); !reflect.DeepEqual(got, map[snat.Workload]int{api: 1}) {
		t.Fatalf("the holder's flow: %v", got)
	}
	gen := h.Generation()
	h.Hold(ip, "a", api, at(0)) // the watch's resync: nothing changed, nothing to ask again
	if h.Generation() != gen {
		t.Fatalf("an unchanged hold changed the generation")
	}
	// Pod a ends, pod b gets its address: flow 1 began under a, flow 2 under b.
	h.Release(ip, "a", at(20))
	h.Hold(ip, "b", export, at(30))
	tab.New(tableFlow(2, ip), at(31))
	if got := perWorkload(tab.Tick(at(32))); !reflect.DeepEqual(got, map[snat.Workload]int{api: 1, export: 1}) {
		t.Fatalf("after the address was reused: %v", got)
	}
	// A flow from a pod the watch has not seen yet: unknown until the watch learns of it, then its own.
	tab.New(tableFlow(3, other), at(40))
	want := map[snat.Workload]int{api: 1, export: 1, snat.UnknownWorkload: 1}
	if got := perWorkload(tab.Tick(at(41))); !reflect.DeepEqual(got, want) {
		t.Fatalf("before the watch learnt of the pod: %v", got)
	}
	h.Hold(other, "c", db, at(35))
	want = map[snat.Workload]int{api: 1, export: 1, db: 1}
	if got := perWorkload(tab.Tick(at(42))); !reflect.DeepEqual(got, want) {
		t.Fatalf("at the Tick after the watch learnt of the pod: %v", got)
	}
	// Flow 1 closes: its port stays the old pod's for the hold.
	tab.Destroy(tableFlow(1, ip), at(43))
	if got := perWorkload(tab.Tick(at(44))); !reflect.DeepEqual(got, want) {
		t.Fatalf("flow 1 held after its close: %v", got)
	}
	if got := perWorkload(tab.Tick(at(74))); !reflect.DeepEqual(got, map[snat.Workload]int{export: 1, db: 1}) {
		t.Fatalf("after flow 1's hold: %v", got)
	}
}
