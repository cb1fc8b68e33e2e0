package nodestatus

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The NodeLister makes one call, a GET of the Node list from the API server's cache (resourceVersion=0): the
// "nodes list" the ClusterRole grants for the probe, nothing else.
func TestNodeListerUsesExactlyItsGrant(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		list := corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}, Items: []corev1.Node{{
			ObjectMeta: metav1.ObjectMeta{Name: "aks-net-1", Labels: map[string]string{ZoneLabel: "westeurope-2",
				"kubernetes.azure.com/agentpool": "net"}},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "aks-net-1"},
				{Type: corev1.NodeInternalIP, Address: "10.224.0.5"}}},
		}}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
	}))
	defer srv.Close()
	l, err := NewNodeLister(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := l.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || Pool(&nodes[0]) != "net" || InternalIP(&nodes[0]) != "10.224.0.5" {
		t.Fatalf("nodes %+v", nodes)
	}
	if len(calls) != 1 || calls[0] != "GET /api/v1/nodes?resourceVersion=0" {
		t.Fatalf("calls %q: want one GET /api/v1/nodes?resourceVersion=0 (the nodes list grant)", calls)
	}
	if !grantedByRBAC(t).cluster["nodes list"] {
		t.Fatal(`rbac.yaml does not grant "nodes list"`)
	}
}

func TestPoolPrefersTheFirstLabel(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"karpenter.sh/nodepool": "k",
		"eks.amazonaws.com/nodegroup": "ng"}}}
	if got := Pool(n); got != "ng" {
		t.Fatalf("pool %q, want ng (EKS's label before Karpenter's)", got)
	}
	if got := Pool(&corev1.Node{}); got != "" {
		t.Fatalf("no label: %q", got)
	}
}
