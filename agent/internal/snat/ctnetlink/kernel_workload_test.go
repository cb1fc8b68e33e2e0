package ctnetlink

import (
	"context"
	"net"
	"net/netip"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// holdsAttributor stands in for the pod watch (named as a fake: the holders are given, not watched; the
// history's own decision is podowner.History's, tested there): per address, holders with their [from, to),
// decided as podowner.History decides (the hold that started last at or before the flow's first sight).
type holdsAttributor struct {
	mu    sync.Mutex
	holds map[netip.Addr][]fakeHold
}

type fakeHold struct {
	w        snat.Workload
	from, to time.Time
}

func (h *holdsAttributor) Attribute(a netip.Addr, firstSeen time.Time) snat.Workload {
	h.mu.Lock()
	defer h.mu.Unlock()
	hs := h.holds[a]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].from.After(firstSeen) {
			continue
		}
		if !hs[i].to.IsZero() && !hs[i].to.After(firstSeen) {
			return snat.UnknownWorkload
		}
		return hs[i].w
	}
	return snat.UnknownWorkload
}

// Real kernel flows from three "pod" addresses to two external destinations, counted by the real Watcher
// and Table: the per-workload numbers are exact, and a reused address is split between its two holders by
// when each flow started.
func TestKernelFlowsPerWorkloadWithFakeAttributor(t *testing.T) {
	l := newLab(t)
	const ext2 = "192.0.2.11"
	for _, a := range []string{"10.244.1.11/32", "10.244.1.12/32", ext2 + "/32"} {
		run(t, "ip", "netns", "exec", l.name, "ip", "addr", "add", a, "dev", "lo")
	}
	for _, dst := range []string{extAddr, ext2} {
		var ln net.Listener
		l.in(t, func() {
			var err error
			if ln, err = net.Listen("tcp", dst+":443"); err != nil {
				t.Fatal(err)
			}
		})
		t.Cleanup(func() { _ = ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { _, _ = c.Read(make([]byte, 1)); _ = c.Close() }()
			}
		}()
	}
	worker := snat.Workload{Namespace: "batch", Name: "report", Kind: "Job"}
	newcomer := snat.Workload{Namespace: "data", Name: "pg", Kind: "StatefulSet"}
	attr := &holdsAttributor{holds: map[netip.Addr][]fakeHold{
		netip.MustParseAddr("10.244.1.10"): {{w: payments, from: time.Now().Add(-time.Minute)}},
		netip.MustParseAddr("10.244.1.11"): {{w: export, from: time.Now().Add(-time.Minute)}},
		netip.MustParseAddr("10.244.1.12"): {{w: worker, from: time.Now().Add(-time.Minute)}},
	}}
	tab := snat.NewTable(snat.Config{Classifier: snat.NewClassifier(nil, false), TCPHold: time.Minute, UDPHold: time.Minute, Top: 5,
		PeakWindow: time.Hour, MaxTracked: 1000, Attributor: attr, WorkloadTop: 10}, time.Now())
	var mu sync.Mutex
	var last snat.Snapshot
	w := &snat.Watcher{Table: tab, Source: l.conntrack(1 << 20), Ticked: func(s snat.Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		last = s
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	time.Sleep(300 * time.Millisecond) // subscribed and dumped: the flows below arrive as NEW events

	var conns []net.Conn
	dial := func(src, dst string, n int) {
		l.in(t, func() {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
			for range n {
				c, err := d.Dial("tcp", dst+":443")
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
			}
		})
	}
	dial("10.244.1.10", extAddr, 3) // payments: 3 to the shared destination
	dial("10.244.1.11", extAddr, 2) // export: 2 to the shared one, 1 to its own
	dial("10.244.1.11", ext2, 1)
	dial("10.244.1.12", extAddr, 1) // the address's first holder
	// The reuse below must come after the accounting has seen the first holder's flow (a flow belongs to the pod
	// holding its address when the agent first counts it): on a loaded machine the event can lag a fixed sleep.
	firstSeen := worker.String() + " " + extAddr + ":443/tcp"
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		seen := byWorkload(last)[firstSeen] == 1
		mu.Unlock()
		if seen {
			break
		}
	}
	// The address is reused: its first holder ends, a new pod starts on it; its next flow is the new pod's,
	// the open one stays the first holder's.
	reuseAt := time.Now()
	attr.mu.Lock()
	hs := attr.holds[netip.MustParseAddr("10.244.1.12")]
	hs[0].to = reuseAt
	attr.holds[netip.MustParseAddr("10.244.1.12")] = append(hs, fakeHold{w: newcomer, from: reuseAt})
	attr.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	dial("10.244.1.12", extAddr, 2)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()

	d1, d2 := extAddr+":443/tcp", ext2+":443/tcp"
	want := map[string]int{
		payments.String() + " " + d1: 3, export.String() + " " + d1: 2, export.String() + " " + d2: 1,
		worker.String() + " " + d1: 1, newcomer.String() + " " + d1: 2,
	}
	var got map[string]int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		mu.Lock()
		got = byWorkload(last)
		mu.Unlock()
		if reflect.DeepEqual(got, want) {
			break
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("per workload %v, want %v", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if names := names(last.MaxWorkloads); !reflect.DeepEqual(names, []string{payments.String() + " 3",
		export.String() + " 2", newcomer.String() + " 2"}) || last.MaxDestination != d1 || last.Max != 8 {
		t.Fatalf("busiest %s (%d): %v", last.MaxDestination, last.Max, names)
	}
}
