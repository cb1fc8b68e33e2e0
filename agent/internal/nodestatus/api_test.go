package nodestatus

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

type request struct {
	method, path, query, contentType string
	body                             []byte
}

// fakeAPIServer is an HTTP server answering the few core/v1 calls the Reporter makes, so NewRESTAPI's
// requests can be checked on the wire. No real API server can run in this test (a later issue runs
// the Reporter against one); the fake clientset tests cover the Reporter's logic.
type fakeAPIServer struct {
	mu       sync.Mutex
	requests []request
	forbid   bool
	srv      *httptest.Server
}

func newFakeAPIServer(t *testing.T) *fakeAPIServer {
	f := &fakeAPIServer{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPIServer) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	f.mu.Lock()
	f.requests = append(f.requests, request{req.Method, req.URL.Path, req.URL.RawQuery,
		req.Header.Get("Content-Type"), body})
	forbid := f.forbid
	f.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	if forbid {
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden,
			Message: `nodes "` + nodeName + `" is forbidden: User "system:serviceaccount:wirespeed-system:wirespeed-agent" cannot patch resource "nodes"`,
		})
		return
	}
	switch {
	case strings.HasPrefix(req.URL.Path, "/api/v1/nodes/"):
		_ = json.NewEncoder(w).Encode(corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: nodeName}})
	case strings.Contains(req.URL.Path, "/events"):
		var e corev1.Event
		if req.Method == http.MethodPost {
			_ = json.Unmarshal(body, &e)
		} else {
			e.Name = req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
		}
		e.TypeMeta = metav1.TypeMeta{Kind: "Event", APIVersion: "v1"}
		_ = json.NewEncoder(w).Encode(e)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (f *fakeAPIServer) take() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.requests
	f.requests = nil
	return r
}

// TestRESTAPIWithFakeAPIServer runs a Reporter through NewRESTAPI and checks each HTTP request: method, path,
// patch content type, field manager and body.
func TestRESTAPIWithFakeAPIServer(t *testing.T) {
	f := newFakeAPIServer(t)
	api, err := NewRESTAPI(&rest.Config{Host: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(t0)
	r := NewReporterWithAPI(api, nodeName, clk, nil)
	r.backoff.jitter = func() float64 { return 0 }
	outcomes := make(chan error, 8)
	r.afterAttempt = func(err error, _ time.Duration) { outcomes <- err }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	wait := func() error {
		select {
		case err := <-outcomes:
			return err
		case <-time.After(outcomeWait):
			t.Fatal("Run made no attempt")
			return nil
		}
	}

	r.Report(ctx, degraded())
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	const fm = "fieldManager=wirespeed-agent"
	want := []request{
		{method: "PATCH", path: "/api/v1/nodes/" + nodeName, query: fm, contentType: "application/merge-patch+json"},
		{method: "GET", path: "/api/v1/nodes/" + nodeName},
		{method: "PATCH", path: "/api/v1/nodes/" + nodeName + "/status", query: fm,
			contentType: "application/strategic-merge-patch+json"},
		{method: "POST", path: "/api/v1/namespaces/" + eventsNS + "/events", query: fm, contentType: "application/json"},
	}
	got := f.take()
	checkRequests(t, got, want)

	var annotationPatch struct {
		Metadata struct{ Annotations map[string]string }
	}
	if err := json.Unmarshal(got[0].body, &annotationPatch); err != nil {
		t.Fatal(err)
	}
	var rep status.Report
	if err := json.Unmarshal([]byte(annotationPatch.Metadata.Annotations[status.AnnotationKey]), &rep); err != nil ||
		rep.State != status.StateDegraded {
		t.Fatalf("annotation patch %s: %v", got[0].body, err)
	}
	var condPatch struct {
		Status struct{ Conditions []corev1.NodeCondition }
	}
	if err := json.Unmarshal(got[2].body, &condPatch); err != nil {
		t.Fatal(err)
	}
	if c := condPatch.Status.Conditions; len(c) != 1 || c[0].Type != status.ConditionType ||
		c[0].Status != corev1.ConditionTrue || !c[0].LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("condition patch %s", got[2].body)
	}
	var ev corev1.Event
	if err := json.Unmarshal(got[3].body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.APIVersion != "v1" || ev.Kind != "Event" || ev.Reason != ReasonDegraded || ev.InvolvedObject.Name != nodeName {
		t.Fatalf("event body %s", got[3].body)
	}

	// A repeated Event is a strategic merge patch of the first one.
	for range 2 {
		r.Event(ctx, status.Event{Reason: "InterfaceRetuned", Message: "enP1s1 re-added"})
		if err := wait(); err != nil {
			t.Fatal(err)
		}
	}
	got = f.take()
	checkRequests(t, got, []request{
		{method: "POST", path: "/api/v1/namespaces/" + eventsNS + "/events", query: fm, contentType: "application/json"},
		{method: "PATCH", path: "/api/v1/namespaces/" + eventsNS + "/events/" + r.events.correlator.entries["Normal\x00InterfaceRetuned\x00enP1s1 re-added"].name,
			query: fm, contentType: "application/strategic-merge-patch+json"},
	})
	if b := string(got[1].body); b != `{"count":2,"lastTimestamp":"2026-11-22T13:00:00Z"}` {
		t.Fatalf("event patch %s", b)
	}

	// An RBAC refusal comes back as a typed API error.
	f.mu.Lock()
	f.forbid = true
	f.mu.Unlock()
	clk.Step(heartbeatPeriod)
	r.Report(ctx, degraded())
	err = wait()
	var ae attemptError
	if !errors.As(err, &ae) || ae.signature() != "forbidden (check the agent's RBAC and admission policy)" {
		t.Fatalf("error %v, want a forbidden attempt error", err)
	}
}

func checkRequests(t *testing.T, got, want []request) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g := got[i]
		if g.method != want[i].method || g.path != want[i].path || g.query != want[i].query ||
			(want[i].contentType != "" && g.contentType != want[i].contentType) {
			t.Errorf("request %d = %s %s?%s (%s), want %s %s?%s (%s)", i, g.method, g.path, g.query, g.contentType,
				want[i].method, want[i].path, want[i].query, want[i].contentType)
		}
	}
}
