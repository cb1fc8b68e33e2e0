package nodestatus

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{name: "forbidden", err: apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errors.New("no")),
			want: "forbidden (check the agent's RBAC and admission policy)"},
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
