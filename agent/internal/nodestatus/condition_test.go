package nodestatus

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// TestConditionTransitionsWithFakeClientset walks one agent through applied, degraded, a heartbeat,
// and recovery, checking the annotation, every condition field and the Events after each report.
func TestConditionTransitionsWithFakeClientset(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.start()

	const (
		appliedMsg  = `profile "throughput": all settings applied`
		degradedMsg = `profile "throughput": enP1s1: rx ring 8192 rejected: invalid argument`
	)
	for _, step := range []struct {
		name           string
		advance        time.Duration
		report         func() status.Report
		wantStatus     corev1.ConditionStatus
		wantReason     string
		wantMessage    string
		wantTransition time.Time
		wantHeartbeat  time.Time
		wantEvents     []string
	}{
		{name: "first report, applied: condition False, nothing to announce",
			report: applied, wantStatus: corev1.ConditionFalse, wantReason: ReasonApplied, wantMessage: appliedMsg,
			wantTransition: t0, wantHeartbeat: t0},
		{name: "degraded: condition True, Warning event",
			advance: time.Minute, report: degraded,
			wantStatus: corev1.ConditionTrue, wantReason: ReasonDegraded, wantMessage: degradedMsg,
			wantTransition: t0.Add(time.Minute), wantHeartbeat: t0.Add(time.Minute),
			wantEvents: []string{"Warning TuningDegraded x1: " + degradedMsg}},
		{name: "still degraded after the heartbeat period: heartbeat moves, transition stays",
			advance: heartbeatPeriod, report: degraded,
			wantStatus: corev1.ConditionTrue, wantReason: ReasonDegraded, wantMessage: degradedMsg,
			wantTransition: t0.Add(time.Minute), wantHeartbeat: t0.Add(time.Minute + heartbeatPeriod),
			wantEvents: []string{"Warning TuningDegraded x1: " + degradedMsg}},
		{name: "recovered: condition False, Normal event",
			advance: time.Minute, report: applied,
			wantStatus: corev1.ConditionFalse, wantReason: ReasonApplied, wantMessage: appliedMsg,
			wantTransition: t0.Add(2*time.Minute + heartbeatPeriod), wantHeartbeat: t0.Add(2*time.Minute + heartbeatPeriod),
			wantEvents: []string{"Warning TuningDegraded x1: " + degradedMsg, "Normal TuningRecovered x1: " + appliedMsg}},
	} {
		t.Run(step.name, func(t *testing.T) {
			h.t = t
			h.clk.Step(step.advance)
			rep := step.report()
			rep.Time = h.clk.Now()
			h.r.Report(context.Background(), rep)
			h.mustSucceed()

			c := h.condition()
			if c.Status != step.wantStatus || c.Reason != step.wantReason || c.Message != step.wantMessage {
				t.Errorf("condition = %s %s %q, want %s %s %q", c.Status, c.Reason, c.Message,
					step.wantStatus, step.wantReason, step.wantMessage)
			}
			if !c.LastTransitionTime.Time.Equal(step.wantTransition) {
				t.Errorf("lastTransitionTime = %s, want %s", c.LastTransitionTime, step.wantTransition)
			}
			if !c.LastHeartbeatTime.Time.Equal(step.wantHeartbeat) {
				t.Errorf("lastHeartbeatTime = %s, want %s", c.LastHeartbeatTime, step.wantHeartbeat)
			}
			if got := h.annotation(); got.State != rep.State || !got.Time.Equal(rep.Time) ||
				got.Interfaces[0].RX.Current != rep.Interfaces[0].RX.Current {
				t.Errorf("annotation = %+v, want the report of this step", got)
			}
			if got := h.events(); !slices.Equal(got, step.wantEvents) {
				t.Errorf("events\n got %q\nwant %q", got, step.wantEvents)
			}
		})
	}
	h.t = t

	// The kubelet's condition and annotations are untouched, and nothing but the agent's own Node was
	// read or written.
	n := h.node()
	if n.Annotations["node.alpha.kubernetes.io/ttl"] != "0" {
		t.Errorf("foreign annotation lost: %v", n.Annotations)
	}
	kubelet := kubeletNode().Status.Conditions[0]
	found := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			found = c.Status == kubelet.Status && c.Reason == kubelet.Reason &&
				c.LastHeartbeatTime.Equal(&kubelet.LastHeartbeatTime) && c.LastTransitionTime.Equal(&kubelet.LastTransitionTime)
		}
	}
	if len(n.Status.Conditions) != 2 || !found {
		t.Errorf("kubelet condition changed: %+v", n.Status.Conditions)
	}
	assertOwnNodeOnly(t, h.cs.Actions())
}

// A restarted agent finds its own condition on the Node: it keeps lastTransitionTime and does not
// announce a transition that happened before it started.
func TestRestartKeepsTransitionWithFakeClientset(t *testing.T) {
	node := kubeletNode()
	before := metav1.NewTime(t0.Add(-3 * time.Hour))
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{
		Type: status.ConditionType, Status: corev1.ConditionTrue, Reason: ReasonDegraded,
		LastHeartbeatTime: before, LastTransitionTime: before,
	})
	h := newHarness(t, node)
	h.start()

	h.r.Report(context.Background(), degraded())
	h.mustSucceed()
	if c := h.condition(); !c.LastTransitionTime.Equal(&before) || !c.LastHeartbeatTime.Time.Equal(t0) {
		t.Fatalf("condition times = transition %s heartbeat %s, want %s and %s",
			c.LastTransitionTime, c.LastHeartbeatTime, before, t0)
	}
	if got := h.events(); len(got) != 0 {
		t.Fatalf("events after a restart with no transition: %q", got)
	}

	h.clk.Step(time.Minute)
	h.r.Report(context.Background(), applied())
	h.mustSucceed()
	want := []string{`Normal TuningRecovered x1: profile "throughput": all settings applied`}
	if got := h.events(); !slices.Equal(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
}

// A reconcile every minute with nothing new must not rewrite the Node every minute.
func TestUnchangedReportWaitsForHeartbeatWithFakeClientset(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.start()

	h.r.Report(context.Background(), applied())
	h.mustSucceed()
	first := h.writes() // annotation + condition
	if first != 2 {
		t.Fatalf("first report made %d writes, want 2", first)
	}
	for minute := 1; minute < 5; minute++ {
		h.clk.Step(time.Minute)
		rep := applied()
		rep.Time = h.clk.Now() // only the time differs
		h.r.Report(context.Background(), rep)
		h.mustSucceed()
	}
	if got := h.writes(); got != first {
		t.Fatalf("unchanged reports within the heartbeat period made %d writes", got-first)
	}
	h.clk.Step(time.Minute) // 5 minutes after the first write
	rep := applied()
	rep.Time = h.clk.Now()
	h.r.Report(context.Background(), rep)
	h.mustSucceed()
	if got := h.writes(); got != first+2 {
		t.Fatalf("heartbeat made %d writes, want 2", got-first)
	}
	if got := h.annotation(); !got.Time.Equal(rep.Time) {
		t.Fatalf("annotation time = %s, want %s", got.Time, rep.Time)
	}
}
