package links

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
// (ENOBUFS when the socket overflows in a storm drops messages silently), so after an error the Watcher
// subscribes again and asks for a fresh dump: the state is re-listed from scratch, as Cilium does.
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
	errc := make(chan error, 1)
	opts := netlink.LinkSubscribeOptions{
		ListExisting:      true,
		ReceiveBufferSize: w.ReceiveBuffer,
		ErrorCallback: func(err error) {
			// A failed receive (ENOBUFS: messages were lost) or an interrupted dump leaves our picture
			// incomplete: start over. Anything else (one undecodable message, a stray sender) costs
			// only that message, and restarting on it could loop on a link netlink cannot decode.
			if !errors.Is(err, netlink.ErrDumpInterrupted) && !strings.HasPrefix(err.Error(), "Receive failed") {
				w.log().Warn("netlink link subscription", "err", err)
				return
			}
			select {
			case errc <- err:
			default:
			}
		},
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
		case err := <-errc:
			return err
		case u, ok := <-ch:
			if !ok {
				select {
				case err := <-errc:
					return err
				default:
					return ErrSubscriptionClosed
				}
			}
			if !send(ctx, events, translate(u, known)) {
				return nil
			}
		}
	}
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
