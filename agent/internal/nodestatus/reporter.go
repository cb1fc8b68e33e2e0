// Package nodestatus publishes the agent's reports on its own Node: the tuning-status annotation, the
// NetworkTuningDegraded and SNATPortPressure conditions, and Events on their transitions.
//
// Reporting must never hold up tuning: Report and Event only store the latest state and wake Run,
// which writes it in the background. When the API server refuses (RBAC), conflicts or is unreachable,
// Run logs once per change of failure, retries with exponential backoff capped at maxBackoff, and on
// each retry sends the newest report, not a backlog of old ones.
//
// One file per part: reporter.go (the three calls the agent makes and the retry loop), annotation.go,
// condition.go, events.go (queue and posting) and correlate.go (repeated Events), backoff.go, failure.go
// (kinds of API failure and when they are logged), api.go (the calls made, and the real client).
package nodestatus

import (
	"context"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

const (
	// Component is the Event source and the field manager of every write.
	Component = "wirespeed-agent"

	// heartbeatPeriod: an unchanged report rewrites the Node at most this often. The kubelet settled on
	// the same figure for its own unchanged node status (nodeStatusReportFrequency, default 5m, KEP-589
	// "Efficient Node Heartbeats"): every Node write is fanned out to all Node watchers.
	heartbeatPeriod = 5 * time.Minute

	// callTimeout bounds one API call so a hung connection cannot stall reporting forever.
	callTimeout = 30 * time.Second

	maxMessageBytes = 1024 // condition and Event messages
)

// Reporter writes reports to one Node: the one named nodeName, and no other. The agent calls three
// methods: Report and Event (never blocking) and Run (the writer).
type Reporter struct {
	node  ownNode
	clock clock.PassiveClock
	// timers drives the retry timers; the fake clock of the tests steps them.
	timers clock.WithTicker
	log    *slog.Logger

	// afterAttempt is a test seam: it sees every attempt's outcome after the retry timer (if any)
	// exists, so a test can step a fake clock without racing Run.
	afterAttempt func(err error, retryIn time.Duration)

	mu     sync.Mutex
	latest *status.Report
	snat   *status.SNAT // nil until SNAT is called; Capacity 0: no outbound section, no condition
	queue  eventQueue
	wake   chan struct{}

	// Owned by Run.
	annotation annotationWriter
	condition  conditionWriter
	snatCond   conditionWriter
	events     eventWriter
	backoff    backoff
	failures   failureLog
}

type pendingReport struct {
	annotation []byte
	key        string
	cond       corev1.NodeCondition // without times
}

// NewReporterWithAPI returns a Reporter for the Node nodeName, writing Events into EventsNamespace.
// c also drives the retry timers when it implements clock.WithTicker (the real clock and
// k8s.io/utils/clock/testing's fake clock both do).
func NewReporterWithAPI(api API, nodeName string, c clock.PassiveClock, log *slog.Logger) *Reporter {
	if log == nil {
		log = slog.Default()
	}
	timers, ok := c.(clock.WithTicker)
	if !ok {
		timers = clock.RealClock{}
	}
	log = log.With("component", "nodestatus", "node", nodeName)
	node := ownNode{api: api, name: nodeName}
	return &Reporter{
		node:         node,
		clock:        c,
		timers:       timers,
		log:          log,
		afterAttempt: func(error, time.Duration) {},
		wake:         make(chan struct{}, 1),
		condition:    conditionWriter{condType: status.ConditionType, raised: ReasonDegraded, cleared: ReasonRecovered},
		snatCond: conditionWriter{condType: status.SNATConditionType, raised: ReasonSNATPressure,
			cleared: ReasonSNATRelieved, messageLags: true},
		events:   newEventWriter(node, c, log),
		backoff:  newBackoff(),
		failures: failureLog{log: log},
	}
}

// Report stores r as the latest report and wakes Run. It never blocks on the API server.
func (r *Reporter) Report(_ context.Context, rep status.Report) {
	r.mu.Lock()
	r.latest = &rep
	r.mu.Unlock()
	r.poke()
}

// SNAT stores the latest outbound SNAT accounting; it rides on the annotation's next write. Only a change
// of SNATPortPressure wakes Run at once: the numbers move every second, the Node should not.
func (r *Reporter) SNAT(_ context.Context, s status.SNAT) {
	r.mu.Lock()
	changed := r.snat == nil || r.snat.Pressure != s.Pressure || (r.snat.Capacity > 0) != (s.Capacity > 0)
	r.snat = &s
	r.mu.Unlock()
	if changed {
		r.poke()
	}
}

// pending is what the Node should show now: the latest report with the latest SNAT accounting.
func (r *Reporter) pending() (*pendingReport, *corev1.NodeCondition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var snatCond *corev1.NodeCondition
	if r.snat != nil && r.snat.Capacity > 0 { // only with an outbound section
		c := desiredSNATCondition(*r.snat)
		snatCond = &c
	}
	if r.latest == nil {
		return nil, snatCond
	}
	rep := *r.latest
	if r.snat != nil {
		s := *r.snat
		rep.SNAT = &s
	}
	return &pendingReport{annotation: encodeAnnotation(rep), key: contentKey(rep), cond: desiredCondition(rep)},
		snatCond
}

// Event queues e for Run to post and never blocks. The transition Events of the conditions are ignored:
// the Reporter posts them itself when a condition changes, so they cannot be posted twice.
func (r *Reporter) Event(_ context.Context, e status.Event) {
	switch e.Reason {
	case ReasonDegraded, ReasonRecovered, ReasonSNATPressure, ReasonSNATRelieved:
		r.log.Debug("event left to the condition transition", "reason", e.Reason)
		return
	}
	r.queue.push(e)
	r.poke()
}

func (r *Reporter) poke() {
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is already pending; Run reads the latest state when it runs
	}
}

// Run writes reports and Events until ctx is done.
func (r *Reporter) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		if !r.retryUntilWritten(ctx) {
			return
		}
	}
}

// retryUntilWritten attempts until one succeeds, backing off after each failure. It returns false when
// ctx ended first.
func (r *Reporter) retryUntilWritten(ctx context.Context) bool {
	for {
		// The attempt reads the latest state, so a wake-up that arrived while waiting is spent.
		select {
		case <-r.wake:
		default:
		}
		err := r.attempt(ctx)
		if ctx.Err() != nil {
			return false
		}
		r.failures.note(err)
		if err == nil {
			r.backoff.reset()
			r.afterAttempt(nil, 0)
			return true
		}
		delay := r.backoff.next()
		t := r.timers.NewTimer(delay)
		r.afterAttempt(err, delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C():
		}
	}
}

// attempt brings the Node up to date with the latest report and posts queued Events. Each part is
// tried even when another fails, so a missing permission for one does not silence the others.
func (r *Reporter) attempt(ctx context.Context) error {
	p, snatCond := r.pending()
	var errs attemptError
	if p != nil {
		if err := r.annotation.sync(ctx, r.node, r.clock.Now(), p); err != nil {
			errs = append(errs, partError{"patch nodes (annotation " + status.AnnotationKey + ")", err})
		}
		errs = r.syncCondition(ctx, &r.condition, p.cond, errs)
	}
	if snatCond != nil {
		errs = r.syncCondition(ctx, &r.snatCond, *snatCond, errs)
	}
	if err := r.events.flush(ctx, &r.queue); err != nil {
		errs = append(errs, partError{"create/patch events", err})
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// syncCondition brings one condition up to date, queueing its transition Event.
func (r *Reporter) syncCondition(ctx context.Context, w *conditionWriter, want corev1.NodeCondition,
	errs attemptError) attemptError {
	transition, part, err := w.sync(ctx, r.node, r.clock.Now(), want)
	if err != nil {
		if w.condType != status.ConditionType {
			part += " (" + w.condType + ")"
		}
		errs = append(errs, partError{part, err})
	}
	if transition != nil {
		r.queue.push(*transition)
	}
	return errs
}
