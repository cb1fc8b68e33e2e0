package nodestatus

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// partError is one part of an attempt (the annotation, the condition, the Events) that failed.
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
		return "forbidden (check the agent's RBAC and admission policy)"
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

// failureLog logs when the kind of failure changes (or clears), not on every retry.
type failureLog struct {
	log  *slog.Logger
	last string // signature of the last attempt's failure; "" when it succeeded
}

func (f *failureLog) note(err error) {
	sig := ""
	var ae attemptError
	if errors.As(err, &ae) {
		sig = ae.signature()
	}
	if sig == f.last {
		if err != nil {
			f.log.Debug("node status still failing", "error", err)
		}
		return
	}
	prev := f.last
	f.last = sig
	if sig == "" {
		f.log.Info("node status reporting recovered", "previous_failure", prev)
		return
	}
	f.log.Warn("node status reporting failing; tuning continues, retrying with backoff",
		"failure", sig, "error", err.Error())
}
