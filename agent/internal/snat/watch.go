package snat

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Resync reasons: why the table was dumped (again).
const (
	ReasonStart    = "start"    // the first dump
	ReasonOverflow = "overflow" // events were lost (ENOBUFS)
	ReasonError    = "error"    // a socket or a dump failed; everything was re-opened
)

// reasonSweep is the dumper's own: a dump for the flows no DESTROY will end (Table.Unevented).
const reasonSweep = "sweep"

// Reasons lists every resync reason, for metrics that must exist before the first one.
var Reasons = []string{ReasonStart, ReasonOverflow, ReasonError}

// Source is where a Watcher reads the conntrack table: ctnetlink.Conntrack, the kernel's.
type Source interface {
	Subscribe() (EventStream, error)
	Dump(ctx context.Context, fn func(Flow)) error
}

// ErrOverflow: the kernel dropped events because the socket's receive buffer was full (ENOBUFS). Counts
// are then stale until a dump re-reads the table.
var ErrOverflow = errors.New("conntrack events lost: receive buffer overflowed (ENOBUFS)")

// EventStream delivers NEW and DESTROY events; Next returns ErrOverflow when some were lost.
type EventStream interface {
	Next(ctx context.Context, fn func(f Flow, destroyed bool)) error
	Close() error
}

// Watcher keeps a Table equal to the kernel's conntrack table: it subscribes to events, dumps the table,
// applies every event, and dumps again whenever events were lost. A failed socket or dump starts over with
// a new subscription, after a backoff (1 s doubling to 1 min).
type Watcher struct {
	Table  *Table
	Source Source
	Log    *slog.Logger
	// Resynced, if set, is called with the reason each time the table is dumped.
	Resynced func(reason string)
	// Ticked, if set, receives each Tick's Snapshot, about once a second.
	Ticked func(Snapshot)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// SweepEvery is how long after a dump another one sweeps the flows only a dump reported while any are
	// open (Table.Unevented); 0 is DefaultSweepEvery.
	SweepEvery time.Duration
}

// DefaultSweepEvery: a dump of 50,000 entries costs tens of milliseconds of CPU, so sweeping every 30 s
// costs well under the 1 % of a core the accounting is allowed, and counts a flow that ended before the
// agent started (or before a resync) as open for at most this long past its entry's end, not forever.
const DefaultSweepEvery = 30 * time.Second

func (w *Watcher) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	if w.Log == nil {
		w.Log = slog.Default()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.tick(ctx)
	}()
	defer wg.Wait()
	reason, delay := ReasonStart, time.Second
	for {
		started := w.now()
		err := w.session(ctx, reason)
		if ctx.Err() != nil {
			return
		}
		if w.now().Sub(started) > time.Minute {
			delay = time.Second // it had been working: start over quickly
		}
		w.Log.Warn("conntrack watch restarting", "err", err, "in", delay.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		reason, delay = ReasonError, min(2*delay, time.Minute)
	}
}

func (w *Watcher) tick(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		snap := w.Table.Tick(w.now())
		if w.Ticked != nil {
			w.Ticked(snap)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// session is one subscription: a dump now, another after every overflow, until something fails.
func (w *Watcher) session(ctx context.Context, reason string) error {
	events, err := w.Source.Subscribe()
	if err != nil {
		return err
	}
	defer func() { _ = events.Close() }()
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dumps := make(chan string, 1)
	dumps <- reason
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.dumper(sctx, dumps, cancel)
	}()
	defer wg.Wait()
	apply := func(f Flow, destroyed bool) {
		if destroyed {
			w.Table.Destroy(f, w.now())
		} else {
			w.Table.New(f, w.now())
		}
	}
	for {
		err := events.Next(sctx, apply)
		switch {
		case errors.Is(err, ErrOverflow):
			// One pending request covers any number of overflows; one arriving during a dump queues
			// another, since the running dump may already have passed entries whose events were lost.
			select {
			case dumps <- ReasonOverflow:
			default:
			}
		case err != nil:
			if cause := context.Cause(sctx); sctx.Err() != nil && ctx.Err() == nil {
				return cause
			}
			cancel(err)
			return err
		}
	}
}

// dumper runs the requested dumps; a failure ends the session through cancel.
func (w *Watcher) dumper(ctx context.Context, dumps <-chan string, cancel context.CancelCauseFunc) {
	every := w.SweepEvery
	if every <= 0 {
		every = DefaultSweepEvery
	}
	var sweep <-chan time.Time
	for {
		var reason string
		select {
		case <-ctx.Done():
			return
		case reason = <-dumps:
		case <-sweep:
			reason = reasonSweep
		}
		// A sweep is no resync: no event was lost, it only finds the entries that end without one.
		if w.Resynced != nil && reason != reasonSweep {
			w.Resynced(reason)
		}
		// Flows found now were started while events were lost (a sweep's new ones raced its events).
		missed := reason != ReasonStart && reason != reasonSweep
		if reason == ReasonStart || reason == ReasonError {
			w.Table.BeginDump() // the session's first: it subscribed just now
		} else {
			w.Table.BeginRedump()
		}
		err := w.Source.Dump(ctx, func(f Flow) { w.Table.Dumped(f, w.now(), missed) })
		if reason == reasonSweep {
			w.Table.EndSweep(w.now(), err == nil)
		} else {
			w.Table.EndDump(w.now(), err == nil)
		}
		if err != nil {
			cancel(err)
			return
		}
		w.Log.Debug("conntrack dumped", "reason", reason)
		sweep = nil
		if w.Table.Unevented() > 0 {
			sweep = time.After(every)
		}
	}
}
