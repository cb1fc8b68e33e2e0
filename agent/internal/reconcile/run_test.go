package reconcile

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// agent runs the reconcile loop against a namespace until the test ends, recording what it publishes.
type agent struct {
	mu         sync.Mutex
	report     status.Report
	reports    int
	events     []status.Event
	linkEvents map[string]int
	mtuSets    map[string]int
}

func startAgent(t *testing.T, ns *linkstest.NS, nl links.Netlink, root string, opts Options) *agent {
	t.Helper()
	a := &agent{linkEvents: map[string]int{}, mtuSets: map[string]int{}}
	setMTU := nl.LinkSetMTU
	nl.LinkSetMTU = func(l netlink.Link, mtu int) error {
		a.mu.Lock()
		a.mtuSets[l.Attrs().Name]++
		a.mu.Unlock()
		return setMTU(l, mtu)
	}
	d := ns.Discoverer()
	d.NL = nl
	r := New(Config{Profile: mustProfile(t, labProfile), Links: d, Ethtool: ns.Ethtool, ProcSysRoot: root})
	opts.Observe = func(rep status.Report) {
		a.mu.Lock()
		a.report = rep
		a.reports++
		a.mu.Unlock()
	}
	opts.Event = func(ev status.Event) {
		a.mu.Lock()
		a.events = append(a.events, ev)
		a.mu.Unlock()
	}
	opts.LinkEvent = func(kind string) {
		a.mu.Lock()
		a.linkEvents[kind]++
		a.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &links.Watcher{NL: nl, Initial: time.Millisecond, Max: 10 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, w, opts) }()
	t.Cleanup(func() {
		cancel() // what SIGTERM does in main
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	})
	waitFor(t, "first reconcile", func() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.reports > 0 })
	return a
}

// waitFor polls a condition; the guard only turns a hang into a failure, it does not time anything.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	guard := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(guard) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (a *agent) iface(name string) (status.Interface, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, i := range a.report.Interfaces {
		if i.Name == name {
			return i, true
		}
	}
	return status.Interface{}, false
}

func TestRunTunesAddedLinks(t *testing.T) {
	ns := linkstest.New(t)
	ns.AddVeth(t, "wste0", "wste1")
	root := procSys(t, map[string]string{"net.core.netdev_max_backlog": "1000"})
	a := startAgent(t, ns, ns.Netlink(), root, Options{})
	if got := ns.MTU(t, "wste0"); got != 1400 {
		t.Fatalf("existing link MTU %d, want 1400", got)
	}

	// A matching link added while the agent runs is tuned without a restart: the VF re-add scenario.
	ns.AddVeth(t, "wstn0", "wstn1")
	waitFor(t, "wstn0 tuned", func() bool { i, ok := a.iface("wstn0"); return ok && i.MTU != nil && i.MTU.Current == 1400 })
	if got := ns.MTU(t, "wstn0"); got != 1400 {
		t.Fatalf("kernel says wstn0 MTU %d, want 1400", got)
	}
	waitFor(t, "InterfaceRetuned event", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, ev := range a.events {
			if ev.Reason == "InterfaceRetuned" && !ev.Warning {
				return true
			}
		}
		return false
	})

	// Someone else changes the MTU: the change event brings it back.
	ns.SetMTU(t, "wstn0", 1500)
	waitFor(t, "wstn0 re-tuned", func() bool { return ns.MTU(t, "wstn0") == 1400 })

	ns.Delete(t, "wstn0")
	waitFor(t, "wstn0 gone from the report", func() bool { _, ok := a.iface("wstn0"); return !ok })
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.linkEvents[links.Added] == 0 || a.linkEvents[links.Removed] == 0 || a.linkEvents[links.Changed] == 0 {
		t.Fatalf("link events %v", a.linkEvents)
	}
	if a.report.State != status.StateApplied {
		t.Fatalf("state %s: %s", a.report.State, a.report.Reason)
	}
}

func TestRunResyncRestoresSysctlChangedByOthers(t *testing.T) {
	ns := linkstest.New(t)
	root := procSys(t, map[string]string{"net.core.netdev_max_backlog": "1000"})
	file := filepath.Join(root, "net/core/netdev_max_backlog")
	startAgent(t, ns, ns.Netlink(), root, Options{Resync: 5 * time.Millisecond})
	if err := os.WriteFile(file, []byte("1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "resync to restore the sysctl", func() bool { b, _ := os.ReadFile(file); return string(b) == "32768\n" })
}

func TestRunRecoversFromNetlinkError(t *testing.T) {
	ns := linkstest.New(t)
	inject := make(chan struct{})
	var subs atomic.Int32
	// The first subscription fails the way netlink fails one under a storm: ENOBUFS, channel closed.
	nl := linkstest.BreakFirstSubscription(ns.Netlink(), inject, linkstest.ReceiveFailed(syscall.ENOBUFS), &subs)
	// A long resync proves the re-list after re-subscribing, not the periodic reconcile, finds the link.
	a := startAgent(t, ns, nl, procSys(t, map[string]string{"net.core.netdev_max_backlog": "1000"}), Options{Resync: time.Hour})
	close(inject)
	waitFor(t, "re-subscription", func() bool { return subs.Load() >= 2 })
	ns.AddVeth(t, "wstg0", "wstg1")
	waitFor(t, "link added after the error tuned", func() bool { i, ok := a.iface("wstg0"); return ok && i.MTU != nil && i.MTU.Current == 1400 })
	if got := ns.MTU(t, "wstg0"); got != 1400 {
		t.Fatalf("MTU %d", got)
	}
}

// A link removed and re-added a hundred times: every instance that still exists when the agent looks is
// tuned at once (a re-add must not wait out the previous instance's settle window, or the agent is slower
// than a udev rule), and no instance is written twice however many events it produces.
func TestRunTunesEachReAddedInstanceOnce(t *testing.T) {
	ns := linkstest.New(t)
	// A settle window longer than the test: anything coalesced would never run, so a tuned re-add proves
	// it was applied at once.
	a := startAgent(t, ns, ns.Netlink(), procSys(t, map[string]string{"net.core.netdev_max_backlog": "1000"}), Options{Debounce: time.Hour, Resync: time.Hour})
	const readds = 100
	for i := 0; i < readds; i++ {
		ns.AddVeth(t, "wstf0", "wstf1")
		ns.Delete(t, "wstf0")
	}
	ns.AddVeth(t, "wstf0", "wstf1")
	// Events are handled in order: once a link added after the storm is tuned, the storm has been handled.
	ns.AddVeth(t, "wstz0", "wstz1")
	waitFor(t, "sentinel link tuned", func() bool { i, ok := a.iface("wstz0"); return ok && i.MTU != nil && i.MTU.Current == 1400 })
	if got := ns.MTU(t, "wstf0"); got != 1400 {
		t.Fatalf("the surviving re-added instance has MTU %d, want 1400 without waiting for the window", got)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mtuSets["wstz0"] != 1 {
		t.Fatalf("sentinel written %d times", a.mtuSets["wstz0"])
	}
	if a.linkEvents[links.Added] < readds {
		t.Fatalf("only %d add events seen", a.linkEvents[links.Added])
	}
	if got := a.mtuSets["wstf0"]; got > readds+1 {
		t.Fatalf("%d MTU writes to wstf0 for %d instances: some instance was written twice", got, readds+1)
	}
}

// udev renames a VF right after it appears (eth1 -> enP30832s1): the report follows the new name.
func TestRunFollowsRename(t *testing.T) {
	ns := linkstest.New(t)
	a := startAgent(t, ns, ns.Netlink(), procSys(t, map[string]string{"net.core.netdev_max_backlog": "1000"}), Options{})
	ns.AddVeth(t, "wsttmp0", "wsttmp1")
	waitFor(t, "wsttmp0 tuned", func() bool { i, ok := a.iface("wsttmp0"); return ok && i.MTU != nil && i.MTU.Current == 1400 })
	l, err := ns.NL.LinkByName("wsttmp0")
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.NL.LinkSetDown(l); err != nil {
		t.Fatal(err)
	}
	if err := ns.NL.LinkSetName(l, "wstren0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "report shows the new name only", func() bool {
		_, oldThere := a.iface("wsttmp0")
		i, ok := a.iface("wstren0")
		return ok && !oldThere && i.MTU != nil && i.MTU.Current == 1400
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	retuned := 0
	for _, ev := range a.events {
		if ev.Reason == "InterfaceRetuned" {
			retuned++
		}
	}
	if retuned != 2 { // wsttmp0 and its peer wsttmp1, once each
		t.Fatalf("%d InterfaceRetuned events, want 2: %+v", retuned, a.events)
	}
}
