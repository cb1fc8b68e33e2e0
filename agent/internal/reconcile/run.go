package reconcile

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// Hooks publish what the loop does; any may be nil.
type Hooks struct {
	Observe func(status.Report) // after every reconcile
	// Event receives InterfaceRetuned. Degraded/recovered transitions are not events of the loop: the
	// node status reporter derives them from the Node condition, which survives agent restarts.
	Event     func(status.Event)
	LinkEvent func(kind string) // links.Added | links.Removed | links.Changed, one per netlink event
}

// Options tune the loop.
type Options struct {
	// Resync is the period of the full reconcile that catches changes made by others (ethtool by hand,
	// another agent). Default 60 s.
	Resync time.Duration
	// Debounce is the settle window of one link instance (name and ifindex): its first event is applied
	// at once, further events inside the window (carrier flaps, the echo of our own writes) are coalesced
	// into one apply at its end. A re-added link is a new instance and is applied at once too: Azure host
	// servicing has re-added a VF ~900 times an hour (MicrosoftDocs/azure-docs#100444) and each one comes
	// back at driver defaults, so each costs exactly one apply, as it would with a udev rule, never a loop.
	// Default 100 ms, the batching interval of Cilium's devices controller.
	Debounce time.Duration
	Hooks
}

// instance identifies one incarnation of a link. A VF removed and re-added (Azure host servicing) comes
// back with a new ifindex, so it is a new instance and is tuned at once rather than waiting out the
// previous instance's settle window: a re-add must be as fast as a udev rule. Events for one instance
// (its own MTU write echoes back as a change) are still coalesced.
type instance struct {
	name  string
	index int
}

// fullKey is the throttle key of a full reconcile (link names cannot be empty).
var fullKey = instance{}

// Run reconciles everything, then keeps the node tuned: link events from w, a periodic resync, until ctx
// is done. It does not roll anything back on exit (see agent/README.md).
func (r *Reconciler) Run(ctx context.Context, w *links.Watcher, opts Options) error {
	if opts.Resync <= 0 {
		opts.Resync = 60 * time.Second
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 100 * time.Millisecond
	}
	wctx, stopWatcher := context.WithCancel(ctx)
	events := make(chan links.Event, 1024)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = w.Run(wctx, events) // returns only when wctx is done
	}()
	defer func() {
		stopWatcher()
		wg.Wait()
	}()

	l := &loop{r: r, opts: opts, th: newThrottle(opts.Debounce)}
	l.full()
	resync := time.NewTicker(opts.Resync)
	defer resync.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	for {
		var settleC <-chan time.Time
		if at, ok := l.th.next(); ok {
			settle.Reset(time.Until(at))
			settleC = settle.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-resync.C:
			l.trigger(fullKey)
		case ev := <-events:
			l.handle(ev)
		case <-settleC:
			for _, key := range l.th.due(time.Now()) {
				l.run(key)
			}
		}
		if settleC != nil && !settle.Stop() {
			select {
			case <-settle.C:
			default:
			}
		}
	}
}

type loop struct {
	r       *Reconciler
	opts    Options
	th      *throttle
	started bool // the first full reconcile is done
}

func (l *loop) handle(ev links.Event) {
	switch ev.Kind {
	case links.Relist:
		l.trigger(fullKey)
		return
	case links.Added, links.Changed, links.Removed:
		if l.opts.LinkEvent != nil {
			l.opts.LinkEvent(ev.Kind)
		}
	}
	switch ev.Kind {
	case links.Removed:
		l.th.forget(instance{ev.Name, ev.Index})
		l.r.Forget(ev.Name)
		l.publish(l.r.Report())
	case links.Added, links.Changed:
		if links.NameExcluded(l.r.cfg.Profile.Interfaces, ev.Name) {
			return
		}
		l.trigger(instance{ev.Name, ev.Index})
	case links.Listed:
		// The Relist that opened this dump already triggered a full reconcile, which lists every link.
	}
}

func (l *loop) trigger(key instance) {
	if l.th.trigger(key, time.Now()) {
		l.run(key)
	}
}

func (l *loop) run(key instance) {
	if key == fullKey {
		l.full()
		return
	}
	rep, out := l.r.Link(key.name)
	l.retuned(rep, out)
	l.publish(rep)
}

func (l *loop) full() {
	rep, out := l.r.All()
	if l.started {
		l.retuned(rep, out)
	}
	l.started = true // links found by the first reconcile were there before the agent, not added
	l.publish(rep)
}

// retuned posts InterfaceRetuned for links that appeared untuned (a re-added VF at driver defaults),
// whichever reconcile (event-driven or full) got to them first.
func (l *loop) retuned(rep status.Report, out Outcome) {
	if l.opts.Event == nil {
		return
	}
	for _, name := range out.Tuned {
		for _, i := range rep.Interfaces {
			if i.Name == name {
				l.opts.Event(status.Event{
					Reason:  "InterfaceRetuned",
					Message: fmt.Sprintf("%s (%s, %s) appeared untuned; %s", name, i.Driver, i.Role, describe(i)),
				})
			}
		}
	}
}

func (l *loop) publish(rep status.Report) {
	if l.opts.Observe != nil {
		l.opts.Observe(rep)
	}
}

func describe(i status.Interface) string {
	var parts []string
	if i.RX != nil && i.RX.Desired != 0 {
		parts = append(parts, fmt.Sprintf("rx ring %d", i.RX.Current))
	}
	if i.TX != nil && i.TX.Desired != 0 {
		parts = append(parts, fmt.Sprintf("tx ring %d", i.TX.Current))
	}
	if i.MTU != nil {
		parts = append(parts, fmt.Sprintf("mtu %d", i.MTU.Current))
	}
	if len(parts) == 0 {
		return "profile re-applied"
	}
	s := "re-applied " + parts[0]
	for _, p := range parts[1:] {
		s += ", " + p
	}
	return s
}

// throttle runs a key at once when it has not run within the window, otherwise once at the window's end.
type throttle struct {
	window time.Duration
	last   map[instance]time.Time
	dirty  map[instance]bool
}

func newThrottle(window time.Duration) *throttle {
	return &throttle{window: window, last: map[instance]time.Time{}, dirty: map[instance]bool{}}
}

// forget drops a removed instance: nothing is pending for a link that is gone.
func (t *throttle) forget(key instance) {
	delete(t.last, key)
	delete(t.dirty, key)
}

// trigger reports whether key should run now; if not, it is run by due at the end of its window.
func (t *throttle) trigger(key instance, now time.Time) bool {
	if last, ok := t.last[key]; ok && now.Sub(last) < t.window {
		t.dirty[key] = true
		return false
	}
	t.last[key] = now
	return true
}

// next is when the earliest pending key falls due.
func (t *throttle) next() (time.Time, bool) {
	var at time.Time
	for key := range t.dirty {
		d := t.last[key].Add(t.window)
		if at.IsZero() || d.Before(at) {
			at = d
		}
	}
	return at, !at.IsZero()
}

// due returns the pending keys whose window has passed, marking them run now, and forgets keys idle
// for a whole window so the map does not grow with every link name ever seen.
func (t *throttle) due(now time.Time) []instance {
	var keys []instance
	for key := range t.dirty {
		if !now.Before(t.last[key].Add(t.window)) {
			keys = append(keys, key)
			delete(t.dirty, key)
			t.last[key] = now
		}
	}
	for key, last := range t.last {
		if !t.dirty[key] && now.Sub(last) >= t.window && !slices.Contains(keys, key) {
			delete(t.last, key)
		}
	}
	return keys
}
