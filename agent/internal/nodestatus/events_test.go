package nodestatus

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

func TestEventsWithFakeClientset(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.start()
	ctx := context.Background()
	retuned := status.Event{Reason: "InterfaceRetuned", Message: "enP1s1 (mlx5_core) re-added: rx ring 1024 -> 8192"}

	h.r.Event(ctx, retuned)
	h.mustSucceed()
	list := h.listEvents()
	if len(list.Items) != 1 {
		t.Fatalf("events = %d, want 1", len(list.Items))
	}
	e := list.Items[0]
	wantRef := corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: nodeName, UID: nodeName}
	if e.InvolvedObject != wantRef || e.Source.Component != "wirespeed-agent" || e.Source.Host != nodeName ||
		e.Type != corev1.EventTypeNormal || e.Reason != retuned.Reason || e.Message != retuned.Message ||
		e.Count != 1 || !e.FirstTimestamp.Time.Equal(t0) || !e.LastTimestamp.Time.Equal(t0) {
		t.Fatalf("event = %+v", e)
	}

	for _, step := range []struct {
		name    string
		advance time.Duration
		event   status.Event
		prepare func()
		want    []string
	}{
		{name: "the same event again bumps the count", advance: time.Minute, event: retuned,
			want: []string{"Normal InterfaceRetuned x2: " + retuned.Message}},
		{name: "a different message is a new event", advance: time.Minute,
			event: status.Event{Reason: "InterfaceRetuned", Message: "enP2s1 (mlx5_core) re-added: rx ring 1024 -> 8192"},
			want: []string{"Normal InterfaceRetuned x2: " + retuned.Message,
				"Normal InterfaceRetuned x1: enP2s1 (mlx5_core) re-added: rx ring 1024 -> 8192"}},
		{name: "transition reasons from the core are left to the condition", event: status.Event{
			Reason: ReasonDegraded, Message: "core says degraded", Warning: true},
			want: []string{"Normal InterfaceRetuned x2: " + retuned.Message,
				"Normal InterfaceRetuned x1: enP2s1 (mlx5_core) re-added: rx ring 1024 -> 8192"}},
		{name: "an expired event is created anew", advance: time.Hour, event: retuned,
			prepare: func() {
				if err := h.cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("events"), eventsNS, e.Name); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"Normal InterfaceRetuned x1: enP2s1 (mlx5_core) re-added: rx ring 1024 -> 8192",
				"Normal InterfaceRetuned x1: " + retuned.Message}},
	} {
		t.Run(step.name, func(t *testing.T) {
			h.t = t
			if step.prepare != nil {
				step.prepare()
			}
			h.clk.Step(step.advance)
			h.r.Event(ctx, step.event)
			if step.event.Reason != ReasonDegraded {
				h.mustSucceed()
			}
			if got := h.events(); !slices.Equal(got, step.want) {
				t.Fatalf("events\n got %q\nwant %q", got, step.want)
			}
		})
	}
	h.t = t
	assertOwnNodeOnly(t, h.cs.Actions())
}

// Report and Event are called from the reconcile loop: with no Run (or a stuck one) they must still
// return, and the Event backlog must stay bounded.
func TestReportAndEventNeverBlockWithFakeClientset(t *testing.T) {
	r := NewReporter(fake.NewClientset().CoreV1(), nodeName, clocktesting.NewFakeClock(t0), nil)
	for i := range 1000 {
		r.Report(context.Background(), applied())
		r.Event(context.Background(), status.Event{Reason: "InterfaceRetuned", Message: strconv.Itoa(i)})
	}
	r.queue.mu.Lock()
	defer r.queue.mu.Unlock()
	if len(r.queue.events) != maxPendingEvents || r.queue.dropped != 1000-maxPendingEvents {
		t.Fatalf("queued %d, dropped %d", len(r.queue.events), r.queue.dropped)
	}
	if last := r.queue.events[len(r.queue.events)-1].Message; last != "999" {
		t.Fatalf("newest event %q was not kept", last)
	}
}

// An Event the API server rejects as invalid is dropped, not retried forever ahead of the others.
func TestInvalidEventIsDroppedWithFakeClientset(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.cs.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if e := a.(k8stesting.CreateAction).GetObject().(*corev1.Event); e.Reason == "Bad" {
			return true, nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Event").GroupKind(), e.Name, nil)
		}
		return false, nil, nil
	})
	h.r.Event(context.Background(), status.Event{Reason: "Bad", Message: "rejected"})
	h.r.Event(context.Background(), status.Event{Reason: "InterfaceRetuned", Message: "enP1s1 re-added"})
	h.start()
	h.mustSucceed()
	want := []string{"Normal InterfaceRetuned x1: enP1s1 re-added"}
	if got := h.events(); !slices.Equal(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	if n := h.logs.count("event rejected by the API server; dropped"); n != 1 {
		t.Fatalf("rejection logged %d times, want once", n)
	}
}
