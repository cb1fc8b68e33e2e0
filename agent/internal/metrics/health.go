package metrics

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Health answers the kubelet's probes.
//
// /healthz (liveness) means the reconcile loop is alive: a reconcile finished within maxAge. Before the
// first one, the agent's start counts as the last reconcile, so a slow first reconcile is not killed
// before it could have finished. A degraded reconcile still counts: restarting the agent cannot fix a
// NIC that refuses a ring size, and the Node condition already says so.
//
// /readyz means the first reconcile finished, so the node's settings have been applied (or reported)
// at least once since the agent started.
type Health struct {
	maxAge time.Duration
	clock  clock.PassiveClock

	mu    sync.Mutex
	last  time.Time
	ready bool
}

// NewHealth returns a Health whose /healthz fails once no reconcile finished for longer than maxAge.
func NewHealth(maxAge time.Duration) *Health {
	return NewHealthWithClock(maxAge, clock.RealClock{})
}

// NewHealthWithClock is NewHealth reading time from c.
func NewHealthWithClock(maxAge time.Duration, c clock.PassiveClock) *Health {
	return &Health{maxAge: maxAge, clock: c, last: c.Now()}
}

// Reconciled records that a reconcile finished at t.
func (h *Health) Reconciled(t time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t.After(h.last) {
		h.last = t
	}
}

// Ready marks the first reconcile as finished.
func (h *Health) Ready() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ready = true
}

// Healthz serves the liveness probe.
func (h *Health) Healthz(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	age := h.clock.Since(h.last)
	h.mu.Unlock()
	if age > h.maxAge {
		respond(w, http.StatusServiceUnavailable,
			fmt.Sprintf("no reconcile for %s, longer than the allowed %s", age.Round(time.Millisecond), h.maxAge))
		return
	}
	respond(w, http.StatusOK, fmt.Sprintf("ok: last reconcile %s ago", age.Round(time.Millisecond)))
}

// Readyz serves the readiness probe.
func (h *Health) Readyz(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	ready := h.ready
	h.mu.Unlock()
	if !ready {
		respond(w, http.StatusServiceUnavailable, "first reconcile not finished")
		return
	}
	respond(w, http.StatusOK, "ok")
}

func respond(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, body)
}
