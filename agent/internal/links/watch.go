package links

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Event kinds a Watcher emits.
const (
	Added   = "added"   // RTM_NEWLINK for an index not seen before
	Changed = "changed" // RTM_NEWLINK for a known index (flags, MTU, carrier, rename)
	Removed = "removed" // RTM_DELLINK
	Listed  = "listed"  // part of the dump that opens every subscription: state, not news
	Relist  = "relist"  // a (re)subscription started: what was missed must be reconciled from scratch
)

// Event is one link change.
type Event struct {
	Kind  string
	Name  string
	Index int
}

// Watcher turns netlink link notifications into Events. netlink closes its channel on any receive error
// (ENOBUFS when the socket overflows in a storm drops messages silently), so when the channel closes or
// the opening dump was interrupted the Watcher subscribes again and asks for a fresh dump: the state is
// re-listed from scratch, as Cilium's devices controller restarts on a netlink failure.
type Watcher struct {
	NL  Netlink
	Log *slog.Logger
	// Backoff between failed subscriptions: Initial doubling up to Max. Zero values use 50 ms and 5 s.
	Initial, Max time.Duration
	// ReceiveBuffer sizes the subscription socket (capped by net.core.rmem_max); 0 keeps the default.
	ReceiveBuffer int
}

// Run emits Events until ctx is done. It returns only then, with nil.
func (w *Watcher) Run(ctx context.Context, events chan<- Event) error {
	initial, maxWait := w.Initial, w.Max
	if initial <= 0 {
		initial = 50 * time.Millisecond
	}
	if maxWait <= 0 {
		maxWait = 5 * time.Second
	}
	known := map[int]string{}
	wait := initial
	for {
		started := time.Now()
		err := w.session(ctx, events, known)
		if ctx.Err() != nil {
			return nil
		}
		// A subscription that lived a while was healthy: the next failure starts the backoff afresh.
		if time.Since(started) > 10*maxWait {
			wait = initial
		}
		w.log().Warn("netlink link subscription ended; re-subscribing and re-listing", "err", err, "backoff", wait.String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, maxWait)
	}
}

func (w *Watcher) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

func (w *Watcher) session(ctx context.Context, events chan<- Event, known map[int]string) error {
	ch := make(chan netlink.LinkUpdate, 256)
	done := make(chan struct{})
	errs := &subscriptionErrors{done: done, log: w.log(), restart: make(chan error, 1)}
	opts := netlink.LinkSubscribeOptions{
		ListExisting:      true,
		ReceiveBufferSize: w.ReceiveBuffer,
		ErrorCallback:     errs.report,
	}
	if err := w.NL.LinkSubscribe(ch, done, opts); err != nil {
		close(done)
		return fmt.Errorf("subscribe: %w", err)
	}
	defer func() {
		close(done)
		// The receiving goroutine closes ch once done has closed its socket; drain so it never blocks on a
		// send nobody reads (a goroutine leak).
		for range ch {
		}
	}()
	if !send(ctx, events, Event{Kind: Relist}) {
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errs.restart:
			return err
		case u, ok := <-ch:
			if !ok {
				return errs.closed()
			}
			if !send(ctx, events, translate(u, known)) {
				return nil
			}
		}
	}
}

// subscriptionErrors sorts what vishvananda/netlink reports through a subscription's error callback, by
// what the library does next rather than by its wording.
//
// A failed receive (ENOBUFS: the socket overflowed and notifications were lost) is reported and then the
// library closes the update channel; the close ends the session and the error is its cause. The library
// formats the errno into text ("Receive failed: %v", netlink v1.3.1 link_linux.go), so errors.Is cannot
// find ENOBUFS in it, and nothing here needs to. An interrupted dump (netlink.ErrDumpInterrupted) leaves
// the channel open but the listing incomplete: it ends the session too. Any other error costs the one
// message the library skipped (undecodable, or from a sender other than the kernel): it is logged, since
// restarting on it could loop on a link netlink cannot decode.
type subscriptionErrors struct {
	done    <-chan struct{}
	log     *slog.Logger
	restart chan error

	mu   sync.Mutex
	last error
}

func (s *subscriptionErrors) report(err error) {
	select {
	case <-s.done:
		return // the session is ending: closing its socket fails the receive in progress
	default:
	}
	s.mu.Lock()
	s.last = err
	s.mu.Unlock()
	if errors.Is(err, netlink.ErrDumpInterrupted) {
		select {
		case s.restart <- err:
		default:
		}
		return
	}
	s.log.Warn("netlink link subscription", "err", err)
}

// closed is why the update channel closed: the failed receive reported just before, or
// ErrSubscriptionClosed when the library reported nothing.
func (s *subscriptionErrors) closed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil {
		return s.last
	}
	return ErrSubscriptionClosed
}

func translate(u netlink.LinkUpdate, known map[int]string) Event {
	a := u.Link.Attrs()
	ev := Event{Name: a.Name, Index: a.Index}
	switch {
	case u.Header.Type == unix.RTM_DELLINK:
		ev.Kind = Removed
		delete(known, a.Index)
	case u.Header.Flags&unix.NLM_F_MULTI != 0: // a dump reply, not a notification
		ev.Kind = Listed
		known[a.Index] = a.Name
	default:
		if _, ok := known[a.Index]; ok {
			ev.Kind = Changed
		} else {
			ev.Kind = Added
		}
		known[a.Index] = a.Name
	}
	return ev
}

func send(ctx context.Context, events chan<- Event, ev Event) bool {
	select {
	case events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
