package snat

import (
	"net/netip"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// fakeAttributor stands in for the pod watch's History (named as a fake): each address has one holder
// from a given time on; before it, or for an address it does not know, the flow is unknown.
type fakeAttributor map[netip.Addr]struct {
	w    Workload
	from time.Time
}

func (f fakeAttributor) Attribute(a netip.Addr, firstSeen time.Time) Workload {
	h, ok := f[a]
	if !ok || firstSeen.Before(h.from) {
		return UnknownWorkload
	}
	return h.w
}

var (
	payments = Workload{Namespace: "checkout", Name: "payments-api", Kind: "Deployment"}
	export   = Workload{Namespace: "batch", Name: "export", Kind: "CronJob"}
)

func from(src string, id uint32, sport uint16, peer string) Flow {
	f := flow(id, sport, peer, ProtoTCP)
	f.OrigSrc = netip.MustParseAddr(src)
	return f
}

func byWorkload(s Snapshot) map[string]int {
	out := map[string]int{}
	for _, u := range s.Workloads {
		out[u.Workload.String()+" "+u.Destination] = u.InUse
	}
	if s.OtherWorkloadInUse > 0 {
		out["other"] = s.OtherWorkloadInUse
	}
	return out
}

func TestPortsAreAttributedToWorkloadsWithFakeAttributor(t *testing.T) {
	attr := fakeAttributor{
		netip.MustParseAddr("10.244.1.10"): {payments, t0},
		netip.MustParseAddr("10.244.1.11"): {export, t0},
	}
	tab := NewTable(Config{Classifier: NewClassifier(nil, false), TCPHold: 10 * time.Second, UDPHold: 10 * time.Second,
		Top: 5, PeakWindow: time.Hour, MaxTracked: 1000, Attributor: attr, WorkloadTop: 2}, t0)
	for i := range 3 {
		tab.New(from("10.244.1.10", uint32(i), uint16(1000+i), "52.1.2.3:443"), at(1))
	}
	tab.New(from("10.244.1.11", 10, 2000, "52.1.2.3:443"), at(1))
	tab.New(from("10.244.1.11", 11, 2001, "52.9.9.9:443"), at(1))
	// A pod the watch does not know yet: unknown while it is not known, its own once it is.
	tab.New(from("10.244.1.12", 20, 3000, "52.1.2.3:443"), at(1))
	s := tab.Tick(at(2))
	// Ties go by destination, then namespace: the unknown pod (no namespace) before batch/export.
	want := map[string]int{"checkout/payments-api (Deployment) 52.1.2.3:443/tcp": 3,
		"unknown (no pod on this node held the address) 52.1.2.3:443/tcp": 1, "other": 2}
	if got := byWorkload(s); !reflect.DeepEqual(got, want) || !s.Attributed {
		t.Fatalf("%v, want %v", got, want)
	}
	if got := names(s.MaxWorkloads); !reflect.DeepEqual(got, []string{"checkout/payments-api (Deployment) 3",
		"unknown (no pod on this node held the address) 1", "batch/export (CronJob) 1"}) {
		t.Fatalf("the busiest destination's workloads: %v", got)
	}
	attr[netip.MustParseAddr("10.244.1.12")] = struct {
		w    Workload
		from time.Time
	}{export, t0}
	// Closed flows keep their workload for the hold: payments closes two at 3 s, held until 13 s.
	tab.Destroy(from("10.244.1.10", 0, 1000, "52.1.2.3:443"), at(3))
	tab.Destroy(from("10.244.1.10", 1, 1001, "52.1.2.3:443"), at(3))
	s = tab.Tick(at(4))
	want = map[string]int{"checkout/payments-api (Deployment) 52.1.2.3:443/tcp": 3,
		"batch/export (CronJob) 52.1.2.3:443/tcp": 2, "other": 1}
	if got := byWorkload(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the close: %v, want %v", got, want)
	}
	// Past the hold payments holds only its open flow; a workload with no port left has no series.
	tab.Destroy(from("10.244.1.11", 11, 2001, "52.9.9.9:443"), at(5))
	s = tab.Tick(at(16))
	want = map[string]int{"batch/export (CronJob) 52.1.2.3:443/tcp": 2, "checkout/payments-api (Deployment) 52.1.2.3:443/tcp": 1}
	if got := byWorkload(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the hold: %v, want %v", got, want)
	}
	// Only the two pairs with open flows are left, holding nothing; payments' held pair was forgotten.
	for _, st := range tab.groups {
		if st.held != 0 {
			t.Fatalf("held ports left after the hold: %+v", st)
		}
	}
	if len(tab.groupAt) != 2 || tab.heldBy.pairs != 0 || s.Tracked != 3 || len(tab.wids) != 2 {
		t.Fatalf("workload state left after the hold: %d groups, %d pairs, tracked %d, %d workloads",
			len(tab.groupAt), tab.heldBy.pairs, s.Tracked, len(tab.wids))
	}
}

func names(us []WorkloadUse) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Workload.String()+" "+strconv.Itoa(u.InUse))
	}
	return out
}

func TestWithoutAnAttributorNothingIsAttributed(t *testing.T) {
	tab := newTable(t, 10*time.Second, 5)
	tab.New(flow(1, 1000, "52.1.2.3:443", ProtoTCP), at(1))
	if s := tab.Tick(at(2)); s.Attributed || s.Workloads != nil || s.MaxWorkloads != nil {
		t.Fatalf("%+v", s)
	}
}
