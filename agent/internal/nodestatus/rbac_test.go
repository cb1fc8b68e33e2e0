package nodestatus

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// assertOwnNodeOnly checks that every call the Reporter made is granted by rbac.yaml (Nodes by its
// ClusterRole, Events by its Role in the Events' namespace) and, for Nodes, names the agent's own Node.
func assertOwnNodeOnly(t *testing.T, actions []k8stesting.Action) {
	t.Helper()
	granted := grantedByRBAC(t)
	for _, a := range actions {
		if !granted.allows(a) {
			t.Errorf("%q in namespace %q is not granted by rbac.yaml", permission(a), a.GetNamespace())
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

// rbacGrants is what rbac.yaml grants: permissions ("nodes/status patch") everywhere from its ClusterRole
// (bound by a ClusterRoleBinding) and per namespace from its Roles (each bound by a RoleBinding there).
type rbacGrants struct {
	cluster    map[string]bool
	namespaced map[string]map[string]bool // namespace -> permission
}

func (g rbacGrants) allows(a k8stesting.Action) bool {
	return g.cluster[permission(a)] || g.namespaced[a.GetNamespace()][permission(a)]
}

// all lists every grant as "<namespace or *> <permission>".
func (g rbacGrants) all() []string {
	var out []string
	for p := range g.cluster {
		out = append(out, "* "+p)
	}
	for ns, ps := range g.namespaced {
		for p := range ps {
			out = append(out, ns+" "+p)
		}
	}
	return out
}

// rbacDocuments returns rbac.yaml's documents, each decoded strictly by its kind.
func rbacDocuments(t *testing.T) (cluster []rbacv1.ClusterRole, namespaced []rbacv1.Role) {
	t.Helper()
	for _, doc := range yamlDocuments(t, "rbac.yaml") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("rbac.yaml: %v", err)
		}
		switch meta.Kind {
		case "ClusterRole":
			var role rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict(doc, &role); err != nil {
				t.Fatalf("rbac.yaml: %v", err)
			}
			cluster = append(cluster, role)
		case "Role":
			var role rbacv1.Role
			if err := yaml.UnmarshalStrict(doc, &role); err != nil {
				t.Fatalf("rbac.yaml: %v", err)
			}
			namespaced = append(namespaced, role)
		default:
			t.Fatalf("rbac.yaml: unexpected kind %q", meta.Kind)
		}
	}
	return cluster, namespaced
}

// yamlDocuments splits a multi-document YAML file of this package.
func yamlDocuments(t *testing.T, name string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs = append(docs, doc)
	}
}

func grantedByRBAC(t *testing.T) rbacGrants {
	t.Helper()
	g := rbacGrants{cluster: map[string]bool{}, namespaced: map[string]map[string]bool{}}
	add := func(into map[string]bool, rules []rbacv1.PolicyRule) {
		for _, rule := range rules {
			if len(rule.APIGroups) != 1 || len(rule.ResourceNames) != 0 {
				t.Fatalf("rule %+v: expected one API group per rule, no resource names", rule)
			}
			group := ""
			if g := rule.APIGroups[0]; g != "" {
				group = g + "/" // "apps/replicasets get"; the core group's stay "nodes/status patch"
			}
			for _, res := range rule.Resources {
				for _, verb := range rule.Verbs {
					into[group+res+" "+verb] = true
				}
			}
		}
	}
	cluster, namespaced := rbacDocuments(t)
	for _, role := range cluster {
		add(g.cluster, role.Rules)
	}
	for _, role := range namespaced {
		if g.namespaced[role.Namespace] == nil {
			g.namespaced[role.Namespace] = map[string]bool{}
		}
		add(g.namespaced[role.Namespace], role.Rules)
	}
	return g
}

// Events about the Node go to one namespace, so they are granted there only: by a Role in EventsNamespace,
// never by the ClusterRole (which a ClusterRoleBinding grants in every namespace).
func TestEventsAreGrantedOnlyWhereTheyAreWritten(t *testing.T) {
	cluster, namespaced := rbacDocuments(t)
	if len(cluster) != 1 || len(namespaced) != 1 {
		t.Fatalf("rbac.yaml has %d ClusterRoles and %d Roles, want one of each", len(cluster), len(namespaced))
	}
	if ns := namespaced[0].Namespace; ns != EventsNamespace {
		t.Errorf("the Role is in namespace %q, the Events go to %q", ns, EventsNamespace)
	}
	if cluster[0].Name != namespaced[0].Name {
		t.Errorf("the ClusterRole %q and the Role %q should share the agent's name", cluster[0].Name, namespaced[0].Name)
	}
	g := grantedByRBAC(t)
	for p := range g.cluster {
		if !strings.HasPrefix(p, "nodes") && !podWatchGrants[p] && !probeGrants[p] {
			t.Errorf("the ClusterRole grants %q: only Nodes (cluster-scoped) and the pod watch's reads belong there", p)
		}
	}
	for p := range g.namespaced[EventsNamespace] {
		if !strings.HasPrefix(p, "events ") {
			t.Errorf("the Role grants %q: only Events belong there", p)
		}
	}
}

// podWatchGrants are the SNAT attribution's reads, which the Reporter never makes: the pod watch's own test
// (podowner's TestPodWatchUsesExactlyItsGrantsWithFakeAPIServer) proves it uses each and nothing else.
// Reads only: the admission policy (own-node-policy.yaml) judges writes, and none of these is one.
var podWatchGrants = map[string]bool{"pods list": true, "pods watch": true, "apps/replicasets get": true,
	"batch/jobs get": true}

// probeGrants are the continuous probe's reads, which the Reporter never makes: TestNodeListerUsesExactlyItsGrant
// proves the NodeLister uses it and nothing else.
var probeGrants = map[string]bool{"nodes list": true}

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
	for _, grant := range grantedByRBAC(t).all() {
		if _, p, _ := strings.Cut(grant, " "); !used[p] && !podWatchGrants[p] && !probeGrants[p] {
			t.Errorf("rbac.yaml grants %q, which the Reporter never uses", grant)
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
	if got, want := o.err.(attemptError).signature(), "forbidden (check the agent's RBAC and admission policy)"; got != want {
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
