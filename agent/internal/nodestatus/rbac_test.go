package nodestatus

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

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
