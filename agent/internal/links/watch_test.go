package links_test

import (
	"context"
	"errors"
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

// flakyNetlink wraps the real seam: subscription number `failAt` breaks the way the kernel breaks it.
type flakyNetlink struct {
	real   links.Netlink
	calls  atomic.Int32
	mode   string // "error-callback" | "closed-channel" | "subscribe-fails"
	inject chan struct{}
}

func (f *flakyNetlink) seam() links.Netlink {
	nl := f.real
	nl.LinkSubscribe = func(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error {
		if f.calls.Add(1) > 1 {
			return f.real.LinkSubscribe(ch, done, opts)
		}
		switch f.mode {
		case "subscribe-fails":
			close(ch)
			return syscall.EMFILE
		case "closed-channel":
			// A subscription whose socket dies at once: netlink closes the channel without a callback.
			close(ch)
			return nil
		}
		if err := f.real.LinkSubscribe(ch, done, opts); err != nil {
			return err
		}
		go func() {
			select {
			case <-f.inject:
				// What netlink reports when the socket overflowed and messages were lost.
				opts.ErrorCallback(errors.New("Receive failed: " + syscall.ENOBUFS.Error()))
			case <-done:
			}
		}()
		return nil
	}
	return nl
}

func TestWatcherRecoversFromNetlinkErrors(t *testing.T) {
	for _, mode := range []string{"error-callback", "closed-channel", "subscribe-fails"} {
		t.Run(mode, func(t *testing.T) {
			ns := linkstest.New(t)
			f := &flakyNetlink{real: ns.Netlink(), mode: mode, inject: make(chan struct{})}
			events := watch(t, f.seam())
			if mode == "error-callback" {
				next(t, events, "first relist", is(links.Relist, ""))
				// A link added while the subscription is broken must still be seen after recovery.
				ns.AddVeth(t, "wstr0", "wstr1")
				close(f.inject)
			} else {
				ns.AddVeth(t, "wstr0", "wstr1")
			}
			next(t, events, "relist after re-subscribe", func(ev links.Event) bool {
				return ev.Kind == links.Relist && f.calls.Load() >= 2
			})
			next(t, events, "wstr0 re-listed", func(ev links.Event) bool {
				return ev.Name == "wstr0" && (ev.Kind == links.Listed || ev.Kind == links.Added)
			})
			if got := f.calls.Load(); got != 2 {
				t.Fatalf("%d subscriptions, want 2", got)
			}
		})
	}
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
