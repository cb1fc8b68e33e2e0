package podowner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"

	"github.com/wirespeed-io/wirespeed/agent/internal/nodestatus"
)

// fakeAPIServer stands in for the API server (named as a fake; the lab test runs the real one): a pod list
// of this node's two pods, a watch that stays quiet, and the owners they name. It records each request as
// the RBAC permission it needs.
type fakeAPIServer struct {
	mu    sync.Mutex
	perms map[string]bool
	bad   []string
}

const fakePods = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[
 {"metadata":{"name":"web-6c-x","namespace":"shop","uid":"p1","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-6c","uid":"rs-1","controller":true}]},
  "spec":{"nodeName":"node-1"},"status":{"phase":"Running","startTime":"2026-12-02T04:00:00Z","podIPs":[{"ip":"10.244.0.9"}],"hostIPs":[{"ip":"10.224.0.4"}]}},
 {"metadata":{"name":"export-29-y","namespace":"batch","uid":"p2","ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"export-29","uid":"job-1","controller":true}]},
  "spec":{"nodeName":"node-1"},"status":{"phase":"Running","startTime":"2026-12-02T04:00:00Z","podIPs":[{"ip":"10.244.0.10"}]}}]}`

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	perm := ""
	switch {
	case r.URL.Query().Get("sendInitialEvents") == "true":
		// A streaming list (client-go's WatchList, on by default) is answered as a server without it
		// answers, so the reflector falls back to the list then watch every server serves: both grants used.
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,"message":"sendInitialEvents is not supported"}`)
		return
	case r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("watch") == "true":
		perm = "pods watch"
	case r.URL.Path == "/api/v1/pods":
		perm = "pods list"
	case r.URL.Path == "/apis/apps/v1/namespaces/shop/replicasets/web-6c":
		perm = "apps/replicasets get"
	case r.URL.Path == "/apis/batch/v1/namespaces/batch/jobs/export-29":
		perm = "batch/jobs get"
	default:
		f.bad = append(f.bad, r.Method+" "+r.URL.String())
	}
	if strings.HasPrefix(perm, "pods") && r.URL.Query().Get("fieldSelector") != "spec.nodeName=node-1" {
		f.bad = append(f.bad, "not limited to this node: "+r.URL.String())
	}
	if r.Method != http.MethodGet {
		f.bad = append(f.bad, "a write: "+r.Method+" "+r.URL.String())
	}
	f.perms[perm] = true
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch perm {
	case "pods watch":
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case "pods list":
		fmt.Fprint(w, fakePods)
	case "apps/replicasets get":
		fmt.Fprint(w, `{"kind":"ReplicaSet","apiVersion":"apps/v1","metadata":{"name":"web-6c","uid":"rs-1",
			"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d-1","controller":true}]},"spec":{"replicas":3}}`)
	case "batch/jobs get":
		fmt.Fprint(w, `{"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"export-29","uid":"job-1",
			"ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"export","uid":"cj-1","controller":true}]}}`)
	default:
		http.NotFound(w, r)
	}
}

// clusterRoleGrants reads what rbac.yaml's ClusterRole grants, as "apps/replicasets get" or "pods list".
func clusterRoleGrants(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open("../nodestatus/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var role rbacv1.ClusterRole
	if err := utilyaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&role); err != nil || role.Kind != "ClusterRole" {
		t.Fatalf("rbac.yaml's first document: %v (kind %q)", err, role.Kind)
	}
	out := map[string]bool{}
	for _, rule := range role.Rules {
		group := ""
		if rule.APIGroups[0] != "" {
			group = rule.APIGroups[0] + "/"
		}
		for _, res := range rule.Resources {
			for _, verb := range rule.Verbs {
				out[group+res+" "+verb] = true
			}
		}
	}
	return out
}

// The pod watch, through client-go's real informer and REST client, makes only reads the ClusterRole grants,
// names this node in every pod request, uses every grant meant for it, and names both workloads.
func TestPodWatchUsesExactlyItsGrantsWithFakeAPIServer(t *testing.T) {
	api := &fakeAPIServer{perms: map[string]bool{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	rc, err := nodestatus.NewCoreV1Client(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHistory("node-1")
	w := &Watch{Node: "node-1", History: h, Owners: &Owners{Get: NewGetter(rc)}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // before srv.Close (deferred earlier, so run later): the watch's request must end first
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, rc) }()
	web := snat.Workload{Namespace: "shop", Name: "web", Kind: "Deployment"}
	export := snat.Workload{Namespace: "batch", Name: "export", Kind: "CronJob"}
	later := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		api.mu.Lock()
		watching := api.perms["pods watch"]
		api.mu.Unlock()
		if watching && h.Attribute(netip.MustParseAddr("10.244.0.9"), later) == web &&
			h.Attribute(netip.MustParseAddr("10.244.0.10"), later) == export {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watch did not name both workloads: %v %v; %v %v", api.perms, api.bad,
				h.Attribute(netip.MustParseAddr("10.244.0.9"), later), h.Attribute(netip.MustParseAddr("10.244.0.10"), later))
		}
	}
	if got := h.Attribute(netip.MustParseAddr("10.224.0.4"), later); got.Kind != snat.KindNode {
		t.Errorf("the node's address: %v", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	for _, b := range api.bad {
		t.Errorf("request %s", b)
	}
	granted := clusterRoleGrants(t)
	for p := range api.perms {
		if !granted[p] {
			t.Errorf("the pod watch needs %q, which rbac.yaml's ClusterRole does not grant", p)
		}
	}
	for _, p := range []string{"pods list", "pods watch", "apps/replicasets get", "batch/jobs get"} {
		if !api.perms[p] || !granted[p] {
			t.Errorf("%q: used %v, granted %v; the grant exists for the pod watch, which must use it", p, api.perms[p], granted[p])
		}
	}
}
