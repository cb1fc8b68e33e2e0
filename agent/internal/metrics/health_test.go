package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestHealthz(t *testing.T) {
	start := time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		reconciled []time.Duration // offsets from start passed to Reconciled
		now        time.Duration   // offset from start when probed
		wantCode   int
		wantBody   string
	}{
		{name: "just started, nothing reconciled yet", now: time.Minute, wantCode: 200,
			wantBody: "ok: last reconcile 1m0s ago\n"},
		{name: "never reconciled past maxAge", now: 3*time.Minute + time.Second, wantCode: 503,
			wantBody: "no reconcile for 3m1s, longer than the allowed 3m0s\n"},
		{name: "recent reconcile", reconciled: []time.Duration{5 * time.Minute}, now: 6 * time.Minute,
			wantCode: 200, wantBody: "ok: last reconcile 1m0s ago\n"},
		{name: "exactly maxAge is still healthy", reconciled: []time.Duration{time.Minute}, now: 4 * time.Minute,
			wantCode: 200, wantBody: "ok: last reconcile 3m0s ago\n"},
		{name: "stale reconcile", reconciled: []time.Duration{time.Minute}, now: 10 * time.Minute,
			wantCode: 503, wantBody: "no reconcile for 9m0s, longer than the allowed 3m0s\n"},
		{name: "an older time reported late does not move the clock back",
			reconciled: []time.Duration{8 * time.Minute, time.Minute}, now: 10 * time.Minute,
			wantCode: 200, wantBody: "ok: last reconcile 2m0s ago\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			h := NewHealthWithClock(3*time.Minute, clk)
			for _, d := range tc.reconciled {
				h.Reconciled(start.Add(d))
			}
			clk.SetTime(start.Add(tc.now))
			rec := httptest.NewRecorder()
			h.Healthz(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != tc.wantCode || rec.Body.String() != tc.wantBody {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}

func TestReadyz(t *testing.T) {
	h := NewHealthWithClock(time.Minute, clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
	probe := func() (int, string) {
		rec := httptest.NewRecorder()
		h.Readyz(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	if code, body := probe(); code != 503 || body != "first reconcile not finished" {
		t.Fatalf("before Ready: %d %q", code, body)
	}
	h.Ready()
	if code, body := probe(); code != 200 || body != "ok" {
		t.Fatalf("after Ready: %d %q", code, body)
	}
}
