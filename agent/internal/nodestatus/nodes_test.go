package nodestatus

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// serveNodeList serves body as the Node list and records each request's method, path, query and Accept.
func serveNodeList(t *testing.T, body []byte) (*NodeLister, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" Accept: "+r.Header.Get("Accept"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	l, err := NewNodeLister(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return l, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), calls...) }
}

// The NodeLister makes one call, a GET of the Node list from the API server's cache (resourceVersion=0) in
// JSON: the "nodes list" the ClusterRole grants for the probe, nothing else.
func TestNodeListerUsesExactlyItsGrant(t *testing.T) {
	list := corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}, Items: []corev1.Node{{
		ObjectMeta: metav1.ObjectMeta{Name: "aks-net-1", Labels: map[string]string{ZoneLabel: "westeurope-2",
			"kubernetes.azure.com/agentpool": "net"}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "aks-net-1"},
			{Type: corev1.NodeInternalIP, Address: "10.224.0.5"}}},
	}}}
	body, _ := json.Marshal(list)
	l, calls := serveNodeList(t, body)
	nodes, err := l.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := NodeInfo{Name: "aks-net-1", Zone: "westeurope-2", Pool: "net", InternalIP: "10.224.0.5"}
	if len(nodes) != 1 || nodes[0] != want {
		t.Fatalf("nodes %+v, want [%+v]", nodes, want)
	}
	if c := calls(); len(c) != 1 || c[0] != "GET /api/v1/nodes?resourceVersion=0 Accept: application/json" {
		t.Fatalf("calls %q: want one GET /api/v1/nodes?resourceVersion=0 in JSON (the nodes list grant)", c)
	}
	if !grantedByRBAC(t).cluster["nodes list"] {
		t.Fatal(`rbac.yaml does not grant "nodes list"`)
	}
}

// A fleet's list, every Node as a kubelet reports it (fleetNode: ~9 KiB each, pools by each of PoolLabels,
// some Nodes without an InternalIP), comes back as exactly each Node's name, zone, pool and InternalIP, in order.
func TestNodeListerReadsAFleetList(t *testing.T) {
	const count = 300
	l, _ := serveNodeList(t, fleetNodeList(t, count))
	nodes, err := l.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != count {
		t.Fatalf("%d nodes, want %d", len(nodes), count)
	}
	withoutIP := 0
	for i, n := range nodes {
		if n != wantInfo(i) {
			t.Errorf("node %d: %+v, want %+v", i, n, wantInfo(i))
		}
		if n.InternalIP == "" {
			withoutIP++
		}
	}
	if withoutIP != 3 { // fleetNode drops the InternalIP of Nodes 96, 193 and 290
		t.Errorf("%d nodes without an InternalIP, want 3", withoutIP)
	}
}

// A list over the cap is refused with the cap named, not read on nor reported as a truncated list.
func TestNodeListerRefusesAListOverItsCap(t *testing.T) {
	body := fleetNodeList(t, 200) // ~1.8 MiB
	l, _ := serveNodeList(t, body)
	l.maxBytes = 1 << 20
	_, err := l.List(context.Background())
	if !refusedOverCap(err, "1 MiB") {
		t.Fatalf("err %v, want the 1 MiB cap's refusal", err)
	}
	l.maxBytes = int64(len(body)) // exactly at the cap is read
	if nodes, err := l.List(context.Background()); err != nil || len(nodes) != 200 {
		t.Fatalf("a list of exactly the cap: %d nodes, err %v", len(nodes), err)
	}
}

// refusedOverCap is whether err is the cap's refusal, in the item where the cap was reached.
func refusedOverCap(err error, limit string) bool {
	return err != nil && strings.HasPrefix(err.Error(), "node list: item ") &&
		strings.HasSuffix(err.Error(), ": larger than "+limit+" (nodestatus.MaxNodeListBytes), refused")
}

// The production cap itself: a list of more than MaxNodeListBytes, streamed by the server so the test never
// holds it, is refused with the cap in the message.
func TestNodeListerRefusesAListOverMaxNodeListBytes(t *testing.T) {
	node, _ := json.Marshal(fleetNode(0))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[`)
		for sent := 0; sent <= MaxNodeListBytes; sent += len(node) + 1 {
			if _, err := w.Write(append(node, ',')); err != nil {
				return // the client hung up: the refusal
			}
		}
		_, _ = w.Write(append(node, "]}"...))
	}))
	defer srv.Close()
	l, err := NewNodeLister(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.List(context.Background())
	if !refusedOverCap(err, "128 MiB") {
		t.Fatalf("err %v, want the 128 MiB cap's refusal", err)
	}
}

// Whatever is wrong with the body, List fails and says so; it never returns the Nodes before the fault as the list.
func TestNodeListerRejectsAMalformedList(t *testing.T) {
	whole := string(fleetNodeList(t, 2))
	for _, tc := range []struct{ name, body, want string }{
		{"cut in a node", whole[:strings.Index(whole, `,{"kind":"Node"`)+100], "node list: item 1: unexpected EOF"},
		{"cut after a node", whole[:strings.Index(whole, `,{"kind":"Node"`)+1], "node list: unexpected EOF"},
		{"empty", "", "node list: unexpected EOF"},
		{"not an object", `[]`, `node list: want "{", got [`},
		{"items not an array", `{"kind":"NodeList","items":{}}`, `node list: want "[", got {`},
		{"no items", `{"kind":"NodeList","apiVersion":"v1","metadata":{}}`, "node list: no items in the response"},
		{"a node not an object", `{"items":["x"]}`, "node list: item 0: json: cannot unmarshal string into Go value of type nodestatus.listedNode"},
		{"a bad address", `{"items":[{"status":{"addresses":{}}}]}`, "node list: item 0: json: cannot unmarshal object into Go struct field .status.addresses of type []v1.NodeAddress"},
		{"syntax", `{"items":[{"metadata":{"name":"a",}}]}`, "node list: item 0: invalid character '}' looking for beginning of object key string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := serveNodeList(t, []byte(tc.body))
			nodes, err := l.List(context.Background())
			if err == nil || err.Error() != tc.want {
				t.Fatalf("nodes %+v, err %v: want %q", nodes, err, tc.want)
			}
		})
	}
}

// An empty cluster's list is no Nodes, not an error.
func TestNodeListerReadsAnEmptyList(t *testing.T) {
	l, _ := serveNodeList(t, []byte(`{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`))
	nodes, err := l.List(context.Background())
	if err != nil || nodes == nil || len(nodes) != 0 {
		t.Fatalf("nodes %#v, err %v: want none", nodes, err)
	}
}

// The API server's refusal reaches the caller as the API error it is (Forbidden when the grant is missing).
func TestNodeListerReturnsTheAPIError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden,
			Message: `nodes is forbidden: User "x" cannot list resource "nodes"`})
	}))
	defer srv.Close()
	l, err := NewNodeLister(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.List(context.Background()); !apierrors.IsForbidden(err) {
		t.Fatalf("err %v: want Forbidden", err)
	}
}

// Labels and fields the lister does not need are skipped, whatever they hold; a Node's labels never leak into
// the next's (each is decoded into a fresh struct).
func TestNodeListerKeepsEachNodesOwnLabels(t *testing.T) {
	body := `{"items":[
		{"metadata":{"name":"a","labels":{"topology.kubernetes.io/zone":"z1","karpenter.sh/nodepool":"k"},"annotations":{"x":"y"}},
		 "spec":{"taints":[{"key":"k","effect":"NoSchedule"}]},"status":{"images":[{"names":["i"]}],"addresses":[{"type":"InternalIP","address":"10.0.0.1"}]}},
		{"metadata":{"name":"b","labels":{"other":"x"}},"status":{"addresses":[{"type":"ExternalIP","address":"1.2.3.4"}]}}]}`
	l, _ := serveNodeList(t, []byte(body))
	nodes, err := l.List(context.Background())
	want := []NodeInfo{{Name: "a", Zone: "z1", Pool: "k", InternalIP: "10.0.0.1"}, {Name: "b"}}
	if err != nil || len(nodes) != 2 || nodes[0] != want[0] || nodes[1] != want[1] {
		t.Fatalf("nodes %+v, err %v: want %+v", nodes, err, want)
	}
}

func TestPoolPrefersTheFirstLabel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"EKS's before Karpenter's", map[string]string{"karpenter.sh/nodepool": "k", "eks.amazonaws.com/nodegroup": "ng"}, "ng"},
		{"AKS's first", map[string]string{"karpenter.sh/nodepool": "k", "kubernetes.azure.com/agentpool": "net"}, "net"},
		{"an empty value is not set", map[string]string{"kubernetes.azure.com/agentpool": "", "karpenter.sh/nodepool": "k"}, "k"},
		{"none", map[string]string{"agentpool": "net"}, ""},
		{"no labels", nil, ""},
	} {
		if got := Pool(tc.labels); got != tc.want {
			t.Errorf("%s: pool %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestInternalIPIsTheFirst(t *testing.T) {
	addrs := []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "1.2.3.4"},
		{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.8"}}
	if got := InternalIP(addrs); got != "10.0.0.7" {
		t.Errorf("internal IP %q, want the first, 10.0.0.7", got)
	}
	if got := InternalIP(addrs[:1]); got != "" {
		t.Errorf("no InternalIP: %q", got)
	}
}

// The cap reader passes a body of exactly its cap and refuses one byte more.
func TestCapReaderBoundary(t *testing.T) {
	for _, tc := range []struct {
		size int
		ok   bool
	}{{1<<20 - 1, true}, {1 << 20, true}, {1<<20 + 1, false}} {
		_, err := io.ReadAll(&capReader{r: bytes.NewReader(make([]byte, tc.size)), max: 1 << 20, left: 1 << 20})
		if (err == nil) != tc.ok {
			t.Errorf("%d bytes: err %v, want ok %v", tc.size, err, tc.ok)
		}
	}
}
