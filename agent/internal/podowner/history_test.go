package podowner

import (
	"fmt"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

var t0 = time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

var (
	api    = snat.Workload{Namespace: "checkout", Name: "payments-api", Kind: "Deployment"}
	export = snat.Workload{Namespace: "batch", Name: "export", Kind: "CronJob"}
	db     = snat.Workload{Namespace: "data", Name: "pg", Kind: "StatefulSet"}
	ip     = netip.MustParseAddr("10.244.1.7")
)

// step is one change the pod watch makes to the history.
type step struct {
	hold    bool // Hold, else Release
	uid     types.UID
	w       snat.Workload
	sec     int
	address netip.Addr
}

func TestAttributionFollowsWhoHeldTheAddressWhenTheFlowStarted(t *testing.T) {
	cases := []struct {
		name      string
		steps     []step
		firstSeen int
		want      snat.Workload
	}{
		{"the holder now", []step{{hold: true, uid: "a", w: api, sec: 0}}, 5, api},
		{"a flow first seen as its pod started is the pod's", []step{{hold: true, uid: "a", w: api, sec: 5}}, 5, api},
		{"a flow before any known holder is unknown", []step{{hold: true, uid: "a", w: api, sec: 10}}, 5,
			snat.UnknownWorkload},
		{"an address nobody holds is unknown", nil, 5, snat.UnknownWorkload},
		{"reused: a flow started before the new pod is the old pod's", []step{
			{hold: true, uid: "a", w: api, sec: 0}, {uid: "a", sec: 20}, {hold: true, uid: "b", w: export, sec: 30},
		}, 15, api},
		{"reused: a flow started after the new pod is the new pod's", []step{
			{hold: true, uid: "a", w: api, sec: 0}, {uid: "a", sec: 20}, {hold: true, uid: "b", w: export, sec: 30},
		}, 31, export},
		{"reused while the old pod's end was not seen yet: the new pod's start ends it", []step{
			{hold: true, uid: "a", w: api, sec: 0}, {hold: true, uid: "b", w: export, sec: 30}, {uid: "a", sec: 40},
		}, 35, export},
		{"freed and not yet reused by a pod the watch has seen: unknown", []step{
			{hold: true, uid: "a", w: api, sec: 0}, {uid: "a", sec: 20},
		}, 25, snat.UnknownWorkload},
		{"the same pod again only updates its workload (its owner was read since)", []step{
			{hold: true, uid: "a", w: snat.Workload{Namespace: "checkout", Name: "payments-api-7d9f", Kind: "ReplicaSet"}, sec: 0},
			{hold: true, uid: "a", w: api, sec: 9},
		}, 3, api},
		{"only the last holders are kept: older flows are unknown", []step{
			{hold: true, uid: "a", w: api, sec: 0}, {hold: true, uid: "b", w: export, sec: 10},
			{hold: true, uid: "c", w: db, sec: 20}, {hold: true, uid: "d", w: api, sec: 30},
			{hold: true, uid: "e", w: export, sec: 40},
		}, 5, snat.UnknownWorkload},
		{"the oldest kept holder still answers", []step{
			{hold: true, uid: "a", w: api, sec: 0}, {hold: true, uid: "b", w: export, sec: 10},
			{hold: true, uid: "c", w: db, sec: 20}, {hold: true, uid: "d", w: api, sec: 30},
			{hold: true, uid: "e", w: db, sec: 40},
		}, 15, export},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHistory("node-1")
			for _, s := range tc.steps {
				if s.hold {
					h.Hold(ip, s.uid, s.w, at(s.sec))
				} else {
					h.Release(ip, s.uid, at(s.sec))
				}
			}
			if got := h.Attribute(ip, at(tc.firstSeen)); got != tc.want {
				t.Fatalf("flow first seen at %ds: %v, want %v", tc.firstSeen, got, tc.want)
			}
		})
	}
}

func TestTheNodesAddressesAreTheNodes(t *testing.T) {
	h := NewHistory("aks-pool-1")
	h.SetNodeAddress(netip.MustParseAddr("10.224.0.4"))
	want := snat.Workload{Name: "aks-pool-1", Kind: snat.KindNode}
	for _, a := range []string{"10.224.0.4", "::ffff:10.224.0.4"} {
		if got := h.Attribute(netip.MustParseAddr(a), t0); got != want {
			t.Errorf("%s: %v, want %v", a, got, want)
		}
	}
	if got := want.String(); got != "aks-pool-1 (node)" {
		t.Errorf("String: %q", got)
	}
}

// Past MaxAddresses the address whose last holder ended longest ago goes; addresses held now stay.
func TestHistoryIsBoundedAndForgetsTheLongestFreedAddressFirst(t *testing.T) {
	h := NewHistory("node-1")
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	for i := range MaxAddresses {
		h.Hold(addr(i), types.UID(addr(i).String()), api, at(0))
	}
	h.Release(addr(7), types.UID(addr(7).String()), at(50))
	h.Release(addr(3), types.UID(addr(3).String()), at(60))
	h.Hold(addr(MaxAddresses), "new", export, at(70))
	if n := h.Addresses(); n != MaxAddresses {
		t.Fatalf("%d addresses, want the bound %d", n, MaxAddresses)
	}
	if got := h.Attribute(addr(7), at(10)); got != snat.UnknownWorkload {
		t.Errorf("the address freed longest ago was kept: %v", got)
	}
	if got := h.Attribute(addr(3), at(10)); got != api {
		t.Errorf("the address freed later was forgotten: %v", got)
	}
	if got := h.Attribute(addr(MaxAddresses), at(71)); got != export {
		t.Errorf("the new address: %v", got)
	}
}

func TestHistorySaysWhichAddressesChangedSinceAGeneration(t *testing.T) {
	h := NewHistory("node-1")
	other := netip.MustParseAddr("10.244.1.8")
	h.Hold(ip, "a", api, at(0))
	since := h.Generation()
	h.Hold(ip, "a", api, at(0)) // the resync's same answer: no change
	h.Release(ip, "a", at(10))
	h.Hold(other, "b", export, at(11))
	h.SetNodeAddress(netip.MustParseAddr("::ffff:10.224.0.4"))
	got, ok := h.ChangedSince(since)
	want := []netip.Addr{ip, other, netip.MustParseAddr("10.224.0.4")}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("changed since %d: %v %v, want %v", since, got, ok, want)
	}
	if got, ok := h.ChangedSince(h.Generation()); !ok || len(got) != 0 {
		t.Fatalf("nothing changed since now: %v %v", got, ok)
	}
	for i := range changeLog {
		h.Hold(ip, types.UID(fmt.Sprint("p", i)), api, at(20+i))
	}
	if _, ok := h.ChangedSince(since); ok {
		t.Fatalf("more changes than it remembers, yet it listed them")
	}
}
