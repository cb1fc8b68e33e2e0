package nodestatus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	nodeName  = "aks-net-12345-vmss000000"
	otherNode = "aks-net-12345-vmss000001"
	eventsNS  = "default" // the only namespace the API server accepts Node Events in
)

var t0 = time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)

// outcomeWait bounds how long a test waits for Run to report an attempt, so a bug fails the test
// instead of hanging it. It is not a speed assertion: every attempt against the fake clientset
// finishes in microseconds.
const outcomeWait = time.Minute

type outcome struct {
	err     error
	retryIn time.Duration
}

// harness runs a Reporter against client-go's fake clientset (FakeClientset: no API server can run in
// this test) and a fake clock that drives its retry timers.
type harness struct {
	t        *testing.T
	cs       *fake.Clientset
	clk      *clocktesting.FakeClock
	r        *Reporter
	outcomes chan outcome
	logs     *syncBuffer
}

func newHarness(t *testing.T, node *corev1.Node) *harness {
	t.Helper()
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: otherNode}}
	h := &harness{
		t:        t,
		cs:       fake.NewClientset(node, other),
		clk:      clocktesting.NewFakeClock(t0),
		outcomes: make(chan outcome, 64),
		logs:     &syncBuffer{},
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h.r = NewReporter(h.cs.CoreV1(), nodeName, h.clk, log)
	h.r.jitter = func() float64 { return 0 }
	h.r.afterAttempt = func(err error, retryIn time.Duration) { h.outcomes <- outcome{err, retryIn} }
	return h
}

func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.r.Run(ctx)
	}()
	h.t.Cleanup(func() {
		cancel()
		<-done
	})
}

// next waits for Run's next attempt.
func (h *harness) next() outcome {
	h.t.Helper()
	select {
	case o := <-h.outcomes:
		return o
	case <-time.After(outcomeWait):
		h.t.Fatal("Run made no attempt")
		return outcome{}
	}
}

func (h *harness) mustSucceed() {
	h.t.Helper()
	if o := h.next(); o.err != nil {
		h.t.Fatalf("attempt failed: %v", o.err)
	}
}

func (h *harness) node() *corev1.Node {
	h.t.Helper()
	n, err := h.cs.Tracker().Get(corev1.SchemeGroupVersion.WithResource("nodes"), "", nodeName)
	if err != nil {
		h.t.Fatal(err)
	}
	return n.(*corev1.Node)
}

func (h *harness) condition() corev1.NodeCondition {
	h.t.Helper()
	for _, c := range h.node().Status.Conditions {
		if c.Type == status.ConditionType {
			return c
		}
	}
	h.t.Fatalf("no %s condition on the node", status.ConditionType)
	return corev1.NodeCondition{}
}

func (h *harness) annotation() status.Report {
	h.t.Helper()
	raw, ok := h.node().Annotations[status.AnnotationKey]
	if !ok {
		h.t.Fatalf("no %s annotation on the node", status.AnnotationKey)
	}
	var r status.Report
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		h.t.Fatalf("annotation %q: %v", raw, err)
	}
	return r
}

// events returns the Events in eventsNS as "Type Reason xCount: Message", sorted by name (creation).
func (h *harness) events() []string {
	h.t.Helper()
	list := h.listEvents()
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Type+" "+e.Reason+" x"+strconv.Itoa(int(e.Count))+": "+e.Message)
	}
	return out
}

// listEvents reads the tracker directly, so the test's own reads are not among the Reporter's actions.
func (h *harness) listEvents() *corev1.EventList {
	h.t.Helper()
	obj, err := h.cs.Tracker().List(corev1.SchemeGroupVersion.WithResource("events"),
		corev1.SchemeGroupVersion.WithKind("Event"), eventsNS)
	if err != nil {
		h.t.Fatal(err)
	}
	return obj.(*corev1.EventList)
}

// writes counts patch/create/update calls, i.e. writes to the API server.
func (h *harness) writes() int {
	n := 0
	for _, a := range h.cs.Actions() {
		switch a.GetVerb() {
		case "patch", "create", "update":
			n++
		}
	}
	return n
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), substr)
}

func kubeletNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.NewTime(t0), LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour)),
		}}},
	}
}

func applied() status.Report {
	return status.Report{
		Profile: "throughput", State: status.StateApplied, Reason: "all settings applied",
		Interfaces: []status.Interface{{Name: "enP1s1", Index: 7, Driver: "mlx5_core", Role: "sriov-vf",
			Selected: true, Reason: "enslaved to eth0", RX: &status.Ring{Desired: 8192, Current: 8192, Max: 8192}}},
		Sysctls: map[string]status.Value{"net.core.netdev_max_backlog": {Desired: 32768, Current: 32768}},
		Time:    t0,
	}
}

func degraded() status.Report {
	r := applied()
	r.State = status.StateDegraded
	r.Reason = "enP1s1: rx ring 8192 rejected: invalid argument"
	r.Interfaces[0].RX.Current = 1024
	r.Interfaces[0].Error = "rx ring 8192 rejected: invalid argument"
	r.Errors = []string{"enP1s1: rx ring 8192 rejected: invalid argument"}
	return r
}

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

// assertOwnNodeOnly checks that every call the Reporter made is granted by rbac.yaml and, for Nodes,
// names the agent's own Node; Events go to the namespace it was given.
func assertOwnNodeOnly(t *testing.T, actions []k8stesting.Action) {
	t.Helper()
	granted := grantedByRBAC(t)
	for _, a := range actions {
		if !granted[permission(a)] {
			t.Errorf("%q is not granted by rbac.yaml", permission(a))
		}
		switch a.GetResource().Resource {
		case "nodes":
			named, ok := a.(interface{ GetName() string })
			if !ok || named.GetName() != nodeName {
				t.Errorf("%s on nodes not limited to %s: %#v", a.GetVerb(), nodeName, a)
			}
		case "events":
			if a.GetNamespace() != eventsNS {
				t.Errorf("event written in namespace %q, want %q", a.GetNamespace(), eventsNS)
			}
		}
	}
}

// permission is an action as an RBAC rule names it: "nodes/status patch".
func permission(a k8stesting.Action) string {
	res := a.GetResource().Resource
	if sub := a.GetSubresource(); sub != "" {
		res += "/" + sub
	}
	return res + " " + a.GetVerb()
}

func grantedByRBAC(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile("rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		t.Fatalf("rbac.yaml: %v", err)
	}
	granted := map[string]bool{}
	for _, rule := range role.Rules {
		if len(rule.APIGroups) != 1 || rule.APIGroups[0] != "" || len(rule.ResourceNames) != 0 {
			t.Fatalf("rule %+v: expected a core-group rule", rule)
		}
		for _, res := range rule.Resources {
			for _, verb := range rule.Verbs {
				granted[res+" "+verb] = true
			}
		}
	}
	return granted
}

// TestRBACIsMinimalWithFakeClientset: a run through every path (first report with a transition, a
// repeated Event) uses each permission in rbac.yaml, so the role grants nothing the agent does not need.
func TestRBACIsMinimalWithFakeClientset(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.start()
	h.r.Report(context.Background(), degraded())
	h.mustSucceed()
	for range 2 {
		h.r.Event(context.Background(), status.Event{Reason: "InterfaceRetuned", Message: "enP1s1 re-added"})
		h.mustSucceed()
	}
	assertOwnNodeOnly(t, h.cs.Actions())

	used := map[string]bool{}
	for _, a := range h.cs.Actions() {
		used[permission(a)] = true
	}
	for p := range grantedByRBAC(t) {
		if !used[p] {
			t.Errorf("rbac.yaml grants %q, which the Reporter never uses", p)
		}
	}
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

func connectionRefused() error {
	return &url.Error{Op: "Patch", URL: "https://10.0.0.1:443/api/v1/nodes/" + nodeName, Err: &net.OpError{
		Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
}

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
			wantClass: "forbidden (check the agent's RBAC)"},
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

// One missing permission must not stop the parts that are allowed.
func TestPartialRBACWithFakeClientset(t *testing.T) {
	h := newHarness(t, kubeletNode())
	var denyStatus atomic.Bool
	denyStatus.Store(true)
	h.cs.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && denyStatus.Load() {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes/status"}, nodeName,
				errors.New("RBAC: nodes/status patch not granted"))
		}
		return false, nil, nil
	})
	h.start()

	h.r.Report(context.Background(), degraded())
	o := h.next()
	if o.err == nil {
		t.Fatal("attempt succeeded without nodes/status permission")
	}
	if got, want := o.err.(attemptError).signature(), "forbidden (check the agent's RBAC)"; got != want {
		t.Fatalf("failure %q, want %q", got, want)
	}
	if msg := o.err.Error(); !strings.HasPrefix(msg, "patch nodes/status: ") || strings.Contains(msg, ";") {
		t.Fatalf("error %q should name only the nodes/status patch", msg)
	}
	if got := h.annotation(); got.State != status.StateDegraded {
		t.Fatalf("annotation state %s, want degraded: it is allowed even though the condition is not", got.State)
	}

	denyStatus.Store(false)
	h.clk.Step(o.retryIn)
	h.mustSucceed()
	if c := h.condition(); c.Status != corev1.ConditionTrue {
		t.Fatalf("condition %s after the permission was granted, want True", c.Status)
	}
	if got := h.events(); len(got) != 1 || !strings.HasPrefix(got[0], "Warning TuningDegraded x1") {
		t.Fatalf("events %q, want one TuningDegraded", got)
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
	r.jitter = func() float64 { return 0.999 }
	for _, want := range []time.Duration{1099900 * time.Microsecond, 2199800 * time.Microsecond} {
		if got := r.nextDelay().Round(time.Microsecond); got != want {
			t.Fatalf("delay %s, want %s", got, want)
		}
	}
	for range 20 {
		if d := r.nextDelay(); d > maxBackoff {
			t.Fatalf("delay %s above the cap %s", d, maxBackoff)
		}
	}
}

// Report and Event are called from the reconcile loop: with no Run (or a stuck one) they must still
// return, and the Event backlog must stay bounded.
func TestReportAndEventNeverBlockWithFakeClientset(t *testing.T) {
	r := NewReporter(fake.NewClientset().CoreV1(), nodeName, clocktesting.NewFakeClock(t0), nil)
	for i := range 1000 {
		r.Report(context.Background(), applied())
		r.Event(context.Background(), status.Event{Reason: "InterfaceRetuned", Message: strconv.Itoa(i)})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) != maxPendingEvents || r.dropped != 1000-maxPendingEvents {
		t.Fatalf("queued %d, dropped %d", len(r.events), r.dropped)
	}
	if last := r.events[len(r.events)-1].Message; last != "999" {
		t.Fatalf("newest event %q was not kept", last)
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

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{name: "forbidden", err: apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errors.New("no")),
			want: "forbidden (check the agent's RBAC)"},
		{name: "unauthorized", err: apierrors.NewUnauthorized("token expired"), want: "unauthorized"},
		{name: "node missing", err: apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, nodeName),
			want: "not found"},
		{name: "throttled", err: apierrors.NewTooManyRequests("slow down", 1), want: "throttled"},
		{name: "client deadline", err: context.DeadlineExceeded, want: "timeout"},
		{name: "connection refused", err: connectionRefused(), want: "API server unreachable"},
		{name: "internal error", err: apierrors.NewInternalError(errors.New("boom")), want: "server error"},
		{name: "anything else", err: errors.New("odd"), want: "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.err); got != tc.want {
				t.Fatalf("classify(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
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
