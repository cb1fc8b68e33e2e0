package links_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
)

// watch runs a Watcher until the test ends; the returned channel carries its events.
func watch(t *testing.T, nl links.Netlink) <-chan links.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan links.Event, 64)
	w := &links.Watcher{NL: nl, Initial: time.Millisecond, Max: 10 * time.Millisecond}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := w.Run(ctx, events); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return events
}

// next waits for the first event matching ok, failing the test (not timing it) if none comes.
func next(t *testing.T, events <-chan links.Event, what string, ok func(links.Event) bool) links.Event {
	t.Helper()
	guard := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ok(ev) {
				return ev
			}
		case <-guard:
			t.Fatalf("no %s event", what)
		}
	}
}

func is(kind, name string) func(links.Event) bool {
	return func(ev links.Event) bool { return ev.Kind == kind && (name == "" || ev.Name == name) }
}

func TestWatcherReportsLinkLifecycle(t *testing.T) {
	ns := linkstest.New(t)
	events := watch(t, ns.Netlink())
	next(t, events, "relist", is(links.Relist, ""))
	next(t, events, "listed lo", is(links.Listed, "lo"))

	ns.AddVeth(t, "wstw0", "wstw1")
	added := next(t, events, "added wstw0", is(links.Added, "wstw0"))
	ns.SetMTU(t, "wstw0", 1400)
	changed := next(t, events, "changed wstw0", is(links.Changed, "wstw0"))
	if changed.Index != added.Index {
		t.Fatalf("changed index %d, added index %d", changed.Index, added.Index)
	}
	ns.Delete(t, "wstw0")
	next(t, events, "removed wstw0", is(links.Removed, "wstw0"))
}

// subscribeFails makes the first subscription fail outright (the socket could not be opened).
func subscribeFails(real links.Netlink, subs *atomic.Int32) links.Netlink {
	nl := real
	nl.LinkSubscribe = func(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error {
		if subs.Add(1) > 1 {
			return real.LinkSubscribe(ch, done, opts)
		}
		close(ch)
		return syscall.EMFILE
	}
	return nl
}

// Every way a subscription breaks ends in a new subscription and a re-list that finds a link added while
// it was broken.
func TestWatcherRecoversFromNetlinkErrors(t *testing.T) {
	for _, tc := range []struct {
		name            string
		failure         linkstest.Failure
		cannotSubscribe bool
	}{
		{name: "receive failed (ENOBUFS)", failure: linkstest.ReceiveFailed(syscall.ENOBUFS)},
		{name: "dump interrupted", failure: linkstest.DumpInterrupted},
		{name: "channel closed without an error", failure: linkstest.Failure{Close: true}},
		{name: "subscribe fails", cannotSubscribe: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := linkstest.New(t)
			var subs atomic.Int32
			if tc.cannotSubscribe {
				events := watch(t, subscribeFails(ns.Netlink(), &subs))
				ns.AddVeth(t, "wstr0", "wstr1")
				expectRelisted(t, events, &subs, "wstr0")
				return
			}
			inject := make(chan struct{})
			events := watch(t, linkstest.BreakFirstSubscription(ns.Netlink(), inject, tc.failure, &subs))
			next(t, events, "first relist", is(links.Relist, ""))
			// A link added while the subscription is broken must still be seen after recovery.
			ns.AddVeth(t, "wstr0", "wstr1")
			close(inject)
			expectRelisted(t, events, &subs, "wstr0")
		})
	}
}

// expectRelisted waits for the second subscription's re-list to report link, and checks there were
// exactly two subscriptions.
func expectRelisted(t *testing.T, events <-chan links.Event, subs *atomic.Int32, link string) {
	t.Helper()
	next(t, events, "relist after re-subscribe", func(ev links.Event) bool {
		return ev.Kind == links.Relist && subs.Load() >= 2
	})
	next(t, events, link+" re-listed", func(ev links.Event) bool {
		return ev.Name == link && (ev.Kind == links.Listed || ev.Kind == links.Added)
	})
	if got := subs.Load(); got != 2 {
		t.Fatalf("%d subscriptions, want 2", got)
	}
}

// A real overflow, no injection: the watcher's consumer stalls while a link changes a thousand times
// into a socket buffer of a few KiB. The kernel drops the notifications it cannot queue and fails the
// next receive with ENOBUFS; the watcher must subscribe again and re-list.
func TestWatcherRelistsAfterSocketOverflow(t *testing.T) {
	ns := linkstest.New(t)
	var subs atomic.Int32
	var mu sync.Mutex
	var reported []error
	nl := ns.Netlink()
	real := nl.LinkSubscribe
	nl.LinkSubscribe = func(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error {
		callback := opts.ErrorCallback
		opts.ErrorCallback = func(err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
			callback(err)
		}
		err := real(ch, done, opts)
		subs.Add(1)
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan links.Event) // read only after the storm: the watcher stalls on its first send
	w := &links.Watcher{NL: nl, Initial: time.Millisecond, Max: 10 * time.Millisecond, ReceiveBuffer: 4096}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = w.Run(ctx, events)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	for guard := time.Now(); subs.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Since(guard) > 10*time.Second {
			t.Fatal("the watcher never subscribed")
		}
	}

	ns.AddVeth(t, "wsto0", "wsto1")
	for i := range 1000 { // each MTU change is one RTM_NEWLINK notification
		ns.SetMTU(t, "wsto0", 1280+i%200)
	}
	next(t, events, "relist after the overflow", func(ev links.Event) bool {
		return ev.Kind == links.Relist && subs.Load() >= 2
	})
	next(t, events, "wsto0 re-listed", is(links.Listed, "wsto0"))
	mu.Lock()
	defer mu.Unlock()
	for _, err := range reported {
		// The library hands over the errno only as text (see subscriptionErrors).
		if strings.Contains(err.Error(), syscall.ENOBUFS.Error()) {
			return
		}
	}
	t.Fatalf("the kernel never reported ENOBUFS; errors reported: %v", reported)
}

// One undecodable message must not restart the subscription (it would loop on a link netlink cannot parse).
func TestWatcherIgnoresSingleMessageErrors(t *testing.T) {
	ns := linkstest.New(t)
	var subs atomic.Int32
	nl := ns.Netlink()
	real := nl.LinkSubscribe
	nl.LinkSubscribe = func(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error {
		subs.Add(1)
		if err := real(ch, done, opts); err != nil {
			return err
		}
		opts.ErrorCallback(errors.New("failed to deserialize link"))
		return nil
	}
	events := watch(t, nl)
	next(t, events, "relist", is(links.Relist, ""))
	ns.AddVeth(t, "wsti0", "wsti1")
	next(t, events, "wsti0 seen", func(ev links.Event) bool {
		return ev.Name == "wsti0" && (ev.Kind == links.Added || ev.Kind == links.Listed)
	})
	if got := subs.Load(); got != 1 {
		t.Fatalf("%d subscriptions, want 1", got)
	}
}
