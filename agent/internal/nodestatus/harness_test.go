package nodestatus

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

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
	h.r.backoff.jitter = func() float64 { return 0 }
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

func connectionRefused() error {
	return &url.Error{Op: "Patch", URL: "https://10.0.0.1:443/api/v1/nodes/" + nodeName, Err: &net.OpError{
		Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
}
