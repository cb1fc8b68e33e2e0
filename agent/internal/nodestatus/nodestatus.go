// Package nodestatus publishes the agent's reports on its own Node: the tuning-status annotation, the
// NetworkTuningDegraded condition, and Events on transitions.
//
// Reporting must never hold up tuning: Report and Event only store the latest state and wake Run,
// which writes it in the background. When the API server refuses (RBAC), conflicts or is unreachable,
// Run logs once per change of failure, retries with exponential backoff capped at maxBackoff, and on
// each retry sends the newest report, not a backlog of old ones.
package nodestatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/utils/clock"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

const (
	// Component is the Event source and the field manager of every write.
	Component = "wirespeed-agent"

	// Condition reasons (CamelCase, as Kubernetes condition reasons are). The Event reasons for the
	// two transitions are status.Event reasons the core does not send: the Reporter owns them.
	ReasonApplied   = "TuningApplied"
	ReasonDegraded  = "TuningDegraded"
	ReasonDryRun    = "DryRun"
	ReasonRecovered = "TuningRecovered"

	// heartbeatPeriod: an unchanged report rewrites the Node at most this often. The kubelet settled on
	// the same figure for its own unchanged node status (nodeStatusReportFrequency, default 5m, KEP-589
	// "Efficient Node Heartbeats"): every Node write is fanned out to all Node watchers.
	heartbeatPeriod = 5 * time.Minute

	initialBackoff = time.Second
	// maxBackoff caps retries at the heartbeat period: after an outage the node is never staler than
	// one heartbeat plus one retry.
	maxBackoff = 5 * time.Minute
	// backoffJitter spreads retries so a DaemonSet's agents do not all hit a recovering API server
	// in the same second.
	backoffJitter = 0.1

	// callTimeout bounds one API call so a hung connection cannot stall reporting forever.
	callTimeout = 30 * time.Second

	maxMessageBytes   = 1024 // condition and Event messages
	maxPendingEvents  = 32   // Events queued while the API server is unreachable; oldest dropped first
	maxCorrelatedKeys = 64   // Events remembered for count aggregation
)

// Reporter writes reports to one Node: the one named nodeName, and no other.
type Reporter struct {
	api      API
	nodeName string
	clock    clock.PassiveClock
	timers   clock.WithTicker
	log      *slog.Logger

	// Test seams: jitter returns a value in [0,1); afterAttempt sees every attempt's outcome after
	// the retry timer (if any) exists, so a test can step a fake clock without racing Run.
	jitter       func() float64
	afterAttempt func(err error, retryIn time.Duration)

	mu      sync.Mutex
	latest  *pendingReport
	events  []queuedEvent
	nextSeq uint64
	dropped int
	wake    chan struct{}

	// Owned by Run.
	written      writtenState
	correlator   correlator
	failure      string // failure signature of the last attempt; "" when it succeeded
	backoff      time.Duration
	lastNameNano int64
}

type queuedEvent struct {
	seq uint64
	status.Event
}

type pendingReport struct {
	annotation []byte
	key        string
	cond       corev1.NodeCondition // without times
}

// writtenState is what the Node is known to hold.
type writtenState struct {
	annotationKey string
	annotationAt  time.Time

	condRead       bool // the Node's existing condition has been read once
	condKnown      bool // the condition exists on the Node
	condStatus     corev1.ConditionStatus
	condTransition metav1.Time
	condKey        string
	condAt         time.Time
}

// EventsNamespace is where every Event about the Node goes. A Node is cluster-scoped, and the API server
// accepts core/v1 Events about a cluster-scoped object only with no namespace or "default"
// (kubernetes/kubernetes pkg/apis/core/validation/events.go, legacyValidateEvent: "does not match
// event.namespace"); the kubelet posts its Node Events there too, so `kubectl describe node` finds them.
// It is therefore not configurable.
const EventsNamespace = metav1.NamespaceDefault

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
	return &Reporter{
		api:          api,
		nodeName:     nodeName,
		clock:        c,
		timers:       timers,
		log:          log.With("component", "nodestatus", "node", nodeName),
		jitter:       rand.Float64,
		afterAttempt: func(error, time.Duration) {},
		wake:         make(chan struct{}, 1),
		correlator:   correlator{entries: map[string]*sentEvent{}},
	}
}

// Report stores r as the latest report and wakes Run. It never blocks on the API server.
func (r *Reporter) Report(_ context.Context, rep status.Report) {
	p := &pendingReport{
		annotation: encodeAnnotation(rep),
		key:        contentKey(rep),
		cond:       desiredCondition(rep),
	}
	r.mu.Lock()
	r.latest = p
	r.mu.Unlock()
	r.poke()
}

// Event queues e for Run to post and never blocks. TuningDegraded and TuningRecovered are ignored:
// the Reporter posts them itself when the condition changes, so they cannot be posted twice.
func (r *Reporter) Event(_ context.Context, e status.Event) {
	if e.Reason == ReasonDegraded || e.Reason == ReasonRecovered {
		r.log.Debug("event left to the condition transition", "reason", e.Reason)
		return
	}
	r.enqueue(e)
	r.poke()
}

func (r *Reporter) enqueue(e status.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == maxPendingEvents {
		r.events = r.events[1:]
		r.dropped++
	}
	r.nextSeq++
	r.events = append(r.events, queuedEvent{seq: r.nextSeq, Event: e})
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
		for {
			// The attempt reads the latest state, so a wake-up that arrived while waiting is spent.
			select {
			case <-r.wake:
			default:
			}
			err := r.attempt(ctx)
			if ctx.Err() != nil {
				return
			}
			r.noteOutcome(err)
			if err == nil {
				r.backoff = 0
				r.afterAttempt(nil, 0)
				break
			}
			delay := r.nextDelay()
			t := r.timers.NewTimer(delay)
			r.afterAttempt(err, delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
		}
	}
}

func (r *Reporter) nextDelay() time.Duration {
	if r.backoff == 0 {
		r.backoff = initialBackoff
	} else {
		r.backoff = min(2*r.backoff, maxBackoff)
	}
	return min(r.backoff+time.Duration(float64(r.backoff)*backoffJitter*r.jitter()), maxBackoff)
}

// attempt brings the Node up to date with the latest report and posts queued Events. Each part is
// tried even when another fails, so a missing permission for one does not silence the others.
func (r *Reporter) attempt(ctx context.Context) error {
	r.mu.Lock()
	p := r.latest
	r.mu.Unlock()

	var errs []partError
	if p != nil {
		if err := r.syncAnnotation(ctx, p); err != nil {
			errs = append(errs, partError{"patch nodes (annotation " + status.AnnotationKey + ")", err})
		}
		if part, err := r.syncCondition(ctx, p); err != nil {
			errs = append(errs, partError{part, err})
		}
	}
	if err := r.postEvents(ctx); err != nil {
		errs = append(errs, partError{"create/patch events", err})
	}
	if len(errs) == 0 {
		return nil
	}
	return attemptError(errs)
}

func (r *Reporter) syncAnnotation(ctx context.Context, p *pendingReport) error {
	now := r.clock.Now()
	if p.key == r.written.annotationKey && now.Sub(r.written.annotationAt) < heartbeatPeriod {
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{status.AnnotationKey: string(p.annotation)}},
	})
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := r.api.PatchNode(cctx, r.nodeName, types.MergePatchType, patch); err != nil {
		return err
	}
	r.written.annotationKey, r.written.annotationAt = p.key, now
	return nil
}

// syncCondition writes NetworkTuningDegraded. It reads the Node's existing condition once, so a
// restarted agent keeps lastTransitionTime and does not announce a transition that did not happen.
func (r *Reporter) syncCondition(ctx context.Context, p *pendingReport) (string, error) {
	now := r.clock.Now()
	w := &r.written
	key := string(p.cond.Status) + "\x00" + p.cond.Reason + "\x00" + p.cond.Message
	if w.condRead && key == w.condKey && now.Sub(w.condAt) < heartbeatPeriod {
		return "", nil
	}
	if !w.condRead {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		node, err := r.api.GetNode(cctx, r.nodeName)
		cancel()
		if err != nil {
			return "get nodes", err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == status.ConditionType {
				w.condKnown, w.condStatus, w.condTransition = true, c.Status, c.LastTransitionTime
			}
		}
		w.condRead = true
	}

	cond := p.cond
	cond.LastHeartbeatTime = metav1.NewTime(now)
	cond.LastTransitionTime = w.condTransition
	changed := !w.condKnown || w.condStatus != cond.Status
	if changed {
		cond.LastTransitionTime = metav1.NewTime(now)
	}
	patch, err := json.Marshal(map[string]any{
		"status": map[string]any{"conditions": []corev1.NodeCondition{cond}},
	})
	if err != nil {
		return "patch nodes/status", err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	// A strategic merge patch merges conditions by type, so the kubelet's own conditions are untouched.
	if _, err := r.api.PatchNode(cctx, r.nodeName, types.StrategicMergePatchType, patch, "status"); err != nil {
		return "patch nodes/status", err
	}

	if changed {
		switch {
		case cond.Status == corev1.ConditionTrue:
			r.enqueue(status.Event{Reason: ReasonDegraded, Message: cond.Message, Warning: true})
		case w.condKnown && w.condStatus == corev1.ConditionTrue:
			r.enqueue(status.Event{Reason: ReasonRecovered, Message: cond.Message})
		}
	}
	w.condKnown, w.condStatus, w.condTransition = true, cond.Status, cond.LastTransitionTime
	w.condKey, w.condAt = key, now
	return "", nil
}

func desiredCondition(rep status.Report) corev1.NodeCondition {
	c := corev1.NodeCondition{
		Type:    corev1.NodeConditionType(status.ConditionType),
		Status:  corev1.ConditionFalse,
		Message: truncate(fmt.Sprintf("profile %q: %s", rep.Profile, rep.Reason), maxMessageBytes),
	}
	switch rep.State {
	case status.StateDegraded:
		c.Status, c.Reason = corev1.ConditionTrue, ReasonDegraded
	case status.StateDryRun:
		c.Reason = ReasonDryRun
	default:
		c.Reason = ReasonApplied
	}
	return c
}

// postEvents sends queued Events in order, stopping at the first failure so none is reordered.
func (r *Reporter) postEvents(ctx context.Context) error {
	for {
		r.mu.Lock()
		if len(r.events) == 0 {
			dropped := r.dropped
			r.dropped = 0
			r.mu.Unlock()
			if dropped > 0 {
				r.log.Warn("events dropped while the API server could not take them", "dropped", dropped)
			}
			return nil
		}
		e := r.events[0]
		r.mu.Unlock()

		if err := r.post(ctx, e.Event); err != nil {
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				return err
			}
			// The API server will refuse this Event however often it is sent: drop it rather than
			// let it block every Event behind it.
			r.log.Error("event rejected by the API server; dropped", "reason", e.Reason, "err", err)
		}
		r.mu.Lock()
		// enqueue may have dropped the head meanwhile; only remove it if it is still the one sent.
		if len(r.events) > 0 && r.events[0].seq == e.seq {
			r.events = r.events[1:]
		}
		r.mu.Unlock()
	}
}

// post creates e as a core/v1 Event about the Node, or, when an identical Event was posted before,
// bumps its count the way client-go's event recorder does, so a VF re-added hundreds of times an hour
// adds to one Event instead of hundreds.
func (r *Reporter) post(ctx context.Context, e status.Event) error {
	now := metav1.NewTime(r.clock.Now())
	eventType := corev1.EventTypeNormal
	if e.Warning {
		eventType = corev1.EventTypeWarning
	}
	message := truncate(e.Message, maxMessageBytes)
	key := eventType + "\x00" + e.Reason + "\x00" + message

	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if prev := r.correlator.entries[key]; prev != nil {
		patch, err := json.Marshal(map[string]any{"count": prev.count + 1, "lastTimestamp": now})
		if err != nil {
			return err
		}
		_, err = r.api.PatchEvent(cctx, EventsNamespace, prev.name, types.StrategicMergePatchType, patch)
		switch {
		case err == nil:
			prev.count++
			return nil
		case apierrors.IsNotFound(err):
			// Expired (the API server keeps Events for --event-ttl, 1h by default): start a new one.
			r.correlator.forget(key)
		default:
			return err
		}
	}

	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: r.eventName(), Namespace: EventsNamespace},
		// UID = node name, as the kubelet sets it for Node events: `kubectl describe node` looks
		// Node events up by that UID.
		InvolvedObject: corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: r.nodeName,
			UID: types.UID(r.nodeName)},
		Reason:              e.Reason,
		Message:             message,
		Type:                eventType,
		Source:              corev1.EventSource{Component: Component, Host: r.nodeName},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		ReportingController: "wirespeed.io/" + Component,
		ReportingInstance:   r.nodeName,
	}
	created, err := r.api.CreateEvent(cctx, EventsNamespace, ev)
	if err != nil {
		return err
	}
	r.correlator.remember(key, created.Name)
	return nil
}

// eventName follows client-go's recorder (<object>.<hex nanoseconds>), kept strictly increasing so
// two Events in the same clock tick do not collide.
func (r *Reporter) eventName() string {
	n := r.clock.Now().UnixNano()
	if n <= r.lastNameNano {
		n = r.lastNameNano + 1
	}
	r.lastNameNano = n
	return fmt.Sprintf("%s.%x", r.nodeName, n)
}

type sentEvent struct {
	name  string
	count int32
}

// correlator remembers the last maxCorrelatedKeys distinct Events posted.
type correlator struct {
	entries map[string]*sentEvent
	order   []string
}

func (c *correlator) remember(key, name string) {
	if len(c.order) == maxCorrelatedKeys {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.entries[key] = &sentEvent{name: name, count: 1}
	c.order = append(c.order, key)
}

func (c *correlator) forget(key string) {
	delete(c.entries, key)
	for n, k := range c.order {
		if k == key {
			c.order = append(c.order[:n], c.order[n+1:]...)
			break
		}
	}
}

// noteOutcome logs when the kind of failure changes (or clears), not on every retry.
func (r *Reporter) noteOutcome(err error) {
	sig := ""
	var ae attemptError
	if errors.As(err, &ae) {
		sig = ae.signature()
	}
	if sig == r.failure {
		if err != nil {
			r.log.Debug("node status still failing", "error", err)
		}
		return
	}
	prev := r.failure
	r.failure = sig
	if sig == "" {
		r.log.Info("node status reporting recovered", "previous_failure", prev)
		return
	}
	r.log.Warn("node status reporting failing; tuning continues, retrying with backoff",
		"failure", sig, "error", err.Error())
}

type partError struct {
	part string
	err  error
}

// attemptError is every part that failed in one attempt.
type attemptError []partError

func (a attemptError) Error() string {
	msgs := make([]string, len(a))
	for n, p := range a {
		msgs[n] = p.part + ": " + p.err.Error()
	}
	return strings.Join(msgs, "; ")
}

// signature names the kinds of failure, without the parts or the changing details (request ids,
// addresses), so an outage logs once even as more parts (queued Events) start failing with it.
func (a attemptError) signature() string {
	seen := map[string]bool{}
	var s []string
	for _, p := range a {
		if c := classify(p.err); !seen[c] {
			seen[c] = true
			s = append(s, c)
		}
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// classify names the kind of API failure.
func classify(err error) string {
	var netErr net.Error
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden (check the agent's RBAC)"
	case apierrors.IsUnauthorized(err):
		return "unauthorized"
	case apierrors.IsConflict(err):
		return "conflict"
	case apierrors.IsNotFound(err):
		return "not found"
	case apierrors.IsTooManyRequests(err):
		return "throttled"
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err):
		return "server error"
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err),
		errors.As(err, &netErr):
		return "API server unreachable"
	default:
		return "error"
	}
}
