package nodestatus

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// TestFailuresRetryWithBackoffWithFakeClientset: whatever the API server does, Report and Event
// return at once, Run logs the failure once, backs off 1s, 2s, 4s, and once the failure clears it
// writes the newest report (not the one that first failed) and the Events queued meanwhile.
func TestFailuresRetryWithBackoffWithFakeClientset(t *testing.T) {
	nodes := schema.GroupResource{Resource: "nodes"}
	for _, tc := range []struct {
		name      string
		err       error
		wantClass string
	}{
		{name: "forbidden by RBAC", err: apierrors.NewForbidden(nodes, nodeName,
			errors.New(`User "system:serviceaccount:wirespeed-system:wirespeed-agent" cannot patch resource "nodes"`)),
			wantClass: "forbidden (check the agent's RBAC and admission policy)"},
		{name: "conflict", err: apierrors.NewConflict(nodes, nodeName, errors.New("the object has been modified")),
			wantClass: "conflict"},
		{name: "API server down", err: connectionRefused(), wantClass: "API server unreachable"},
		{name: "API server timeout", err: apierrors.NewTimeoutError("request timed out", 1), wantClass: "timeout"},
		{name: "API server overloaded", err: apierrors.NewServiceUnavailable("etcd leader changed"),
			wantClass: "server error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, kubeletNode())
			var failing atomic.Bool
			failing.Store(true)
			h.cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
				if failing.Load() {
					return true, nil, tc.err
				}
				return false, nil, nil
			})
			h.start()
			ctx := context.Background()

			h.r.Report(ctx, degraded())
			o := h.next()
			if o.err == nil || o.retryIn != time.Second {
				t.Fatalf("first attempt: err %v, retry in %s; want an error and 1s", o.err, o.retryIn)
			}
			if got := o.err.(attemptError).signature(); !strings.Contains(got, tc.wantClass) {
				t.Fatalf("failure %q does not name %q", got, tc.wantClass)
			}
			// Newer state arrives during the outage; none of it may block.
			h.r.Event(ctx, status.Event{Reason: "InterfaceRetuned", Message: "enP1s1 re-added: rx ring 1024 -> 8192"})
			h.r.Report(ctx, applied())

			for _, wantRetry := range []time.Duration{2 * time.Second, 4 * time.Second} {
				h.clk.Step(o.retryIn)
				o = h.next()
				if o.err == nil || o.retryIn != wantRetry {
					t.Fatalf("retry: err %v, next in %s; want an error and %s", o.err, o.retryIn, wantRetry)
				}
			}
			failing.Store(false)
			h.clk.Step(o.retryIn)
			h.mustSucceed()

			if got := h.annotation(); got.State != status.StateApplied {
				t.Fatalf("annotation state %s, want the newest report (applied)", got.State)
			}
			if c := h.condition(); c.Status != corev1.ConditionFalse {
				t.Fatalf("condition %s, want False from the newest report", c.Status)
			}
			want := []string{"Normal InterfaceRetuned x1: enP1s1 re-added: rx ring 1024 -> 8192"}
			if got := h.events(); !slices.Equal(got, want) {
				t.Fatalf("events\n got %q\nwant %q", got, want)
			}
			if n := h.logs.count("node status reporting failing"); n != 1 {
				t.Fatalf("failure logged %d times over 3 failed attempts, want once:\n%s", n, h.logs.b.String())
			}
			if n := h.logs.count("node status reporting recovered"); n != 1 {
				t.Fatalf("recovery logged %d times, want once", n)
			}
			assertOwnNodeOnly(t, h.cs.Actions())
		})
	}
}

func TestBackoffCapWithFakeClientset(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, connectionRefused()
	})
	h.start()
	h.r.Report(context.Background(), applied())

	var got []time.Duration
	for range 12 {
		o := h.next()
		got = append(got, o.retryIn)
		h.clk.Step(o.retryIn)
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300}
	for i := range want {
		want[i] *= time.Second
	}
	if !slices.Equal(got, want) {
		t.Fatalf("retry delays %v, want %v", got, want)
	}
}

func TestBackoffJitterStaysUnderCap(t *testing.T) {
	r := NewReporter(fake.NewClientset().CoreV1(), nodeName, clocktesting.NewFakeClock(t0), nil)
	r.backoff.jitter = func() float64 { return 0.999 }
	for _, want := range []time.Duration{1099900 * time.Microsecond, 2199800 * time.Microsecond} {
		if got := r.backoff.next().Round(time.Microsecond); got != want {
			t.Fatalf("delay %s, want %s", got, want)
		}
	}
	for range 20 {
		if d := r.backoff.next(); d > maxBackoff {
			t.Fatalf("delay %s above the cap %s", d, maxBackoff)
		}
	}
}

// Run returns when its context ends, also in the middle of a backoff; goleak (TestMain) checks that
// nothing is left running.
func TestRunStopsDuringBackoffWithFakeClientset(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, connectionRefused()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.r.Run(ctx)
	}()
	h.r.Report(ctx, applied())
	if o := h.next(); o.err == nil {
		t.Fatal("expected a failed attempt")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(outcomeWait):
		t.Fatal("Run did not return after its context was cancelled")
	}
}
