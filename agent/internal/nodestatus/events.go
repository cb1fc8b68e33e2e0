package nodestatus

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// EventsNamespace is where every Event about the Node goes. A Node is cluster-scoped, and the API server
// accepts core/v1 Events about a cluster-scoped object only with no namespace or "default"
// (kubernetes/kubernetes pkg/apis/core/validation/events.go, legacyValidateEvent: "does not match
// event.namespace"); the kubelet posts its Node Events there too, so `kubectl describe node` finds them.
// It is therefore not configurable.
const EventsNamespace = metav1.NamespaceDefault

// maxPendingEvents bounds the Events queued while the API server is unreachable; the oldest go first.
const maxPendingEvents = 32

// eventQueue holds the Events not yet posted. Event and the condition transitions push; Run posts from
// the head.
type eventQueue struct {
	mu      sync.Mutex
	events  []queuedEvent
	nextSeq uint64
	dropped int
}

type queuedEvent struct {
	seq uint64
	status.Event
}

func (q *eventQueue) push(e status.Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.events) == maxPendingEvents {
		q.events = q.events[1:]
		q.dropped++
	}
	q.nextSeq++
	q.events = append(q.events, queuedEvent{seq: q.nextSeq, Event: e})
}

// head returns the oldest Event; when there is none, how many were dropped since the last time it said.
func (q *eventQueue) head() (e queuedEvent, ok bool, dropped int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.events) == 0 {
		dropped, q.dropped = q.dropped, 0
		return queuedEvent{}, false, dropped
	}
	return q.events[0], true, 0
}

// remove takes e off the head, unless push has dropped it meanwhile.
func (q *eventQueue) remove(e queuedEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.events) > 0 && q.events[0].seq == e.seq {
		q.events = q.events[1:]
	}
}

// eventWriter posts Events about the Node, adding repeats to the Event posted before (correlate.go).
type eventWriter struct {
	node       ownNode
	clock      clock.PassiveClock
	log        *slog.Logger
	correlator correlator
	// lastNameNano keeps Event names strictly increasing.
	lastNameNano int64
}

func newEventWriter(node ownNode, c clock.PassiveClock, log *slog.Logger) eventWriter {
	return eventWriter{node: node, clock: c, log: log, correlator: correlator{entries: map[string]*sentEvent{}}}
}

// flush posts q's Events in order, stopping at the first failure so none is reordered.
func (w *eventWriter) flush(ctx context.Context, q *eventQueue) error {
	for {
		e, ok, dropped := q.head()
		if !ok {
			if dropped > 0 {
				w.log.Warn("events dropped while the API server could not take them", "dropped", dropped)
			}
			return nil
		}
		if err := w.post(ctx, e.Event); err != nil {
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				return err
			}
			// The API server will refuse this Event however often it is sent: drop it rather than
			// let it block every Event behind it.
			w.log.Error("event rejected by the API server; dropped", "reason", e.Reason, "err", err)
		}
		q.remove(e)
	}
}

// post creates e as a core/v1 Event about the Node, or, when an identical Event was posted before,
// bumps its count the way client-go's event recorder does, so a VF re-added hundreds of times an hour
// adds to one Event instead of hundreds. One callTimeout bounds both calls.
func (w *eventWriter) post(ctx context.Context, e status.Event) error {
	now := metav1.NewTime(w.clock.Now())
	eventType := corev1.EventTypeNormal
	if e.Warning {
		eventType = corev1.EventTypeWarning
	}
	message := truncate(e.Message, maxMessageBytes)
	key := eventType + "\x00" + e.Reason + "\x00" + message

	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if prev := w.correlator.entries[key]; prev != nil {
		bumped, err := w.bump(cctx, prev, now)
		if bumped || err != nil {
			return err
		}
		// Expired (the API server keeps Events for --event-ttl, 1h by default): start a new one.
		w.correlator.forget(key)
	}
	created, err := w.node.api.CreateEvent(cctx, EventsNamespace, w.newEvent(e, eventType, message, now))
	if err != nil {
		return err
	}
	w.correlator.remember(key, created.Name)
	return nil
}

// bump adds one to the count of the Event posted before; false without an error when it has expired.
func (w *eventWriter) bump(ctx context.Context, prev *sentEvent, now metav1.Time) (bool, error) {
	patch, err := json.Marshal(map[string]any{"count": prev.count + 1, "lastTimestamp": now})
	if err != nil {
		return false, err
	}
	_, err = w.node.api.PatchEvent(ctx, EventsNamespace, prev.name, types.StrategicMergePatchType, patch)
	switch {
	case err == nil:
		prev.count++
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, err
	}
}

func (w *eventWriter) newEvent(e status.Event, eventType, message string, now metav1.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: w.eventName(), Namespace: EventsNamespace},
		// UID = node name, as the kubelet sets it for Node events: `kubectl describe node` looks
		// Node events up by that UID.
		InvolvedObject: corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: w.node.name,
			UID: types.UID(w.node.name)},
		Reason:              e.Reason,
		Message:             message,
		Type:                eventType,
		Source:              corev1.EventSource{Component: Component, Host: w.node.name},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		ReportingController: "wirespeed.io/" + Component,
		ReportingInstance:   w.node.name,
	}
}

// eventName follows client-go's recorder (<object>.<hex nanoseconds>), kept strictly increasing so
// two Events in the same clock tick do not collide.
func (w *eventWriter) eventName() string {
	n := w.clock.Now().UnixNano()
	if n <= w.lastNameNano {
		n = w.lastNameNano + 1
	}
	w.lastNameNano = n
	return fmt.Sprintf("%s.%x", w.node.name, n)
}
