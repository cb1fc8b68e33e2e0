package nodestatus

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// benchFleet is the fleet size the bench lists: Kubernetes' supported maximum
// (https://kubernetes.io/docs/setup/best-practices/cluster-large/, "No more than 5,000 nodes").
const benchFleet = 5000

// BenchmarkNodeList5000 lists benchFleet fleetNodes (~47 MB of JSON) from a local server, the way the agent did
// before the streaming decode (full: rest's Do().Into a corev1.NodeList, then the four fields, as
// cmd/wirespeed-agent did at 2986f4a) and the way it does now (stream: List). Besides B/op and allocs/op it
// reports, per list:
//   - peak-heap-MiB: the most heap the list held at once, live or garbage not yet swept (runtime/metrics
//     /memory/classes/heap/objects:bytes sampled every 200 us, minus the heap before the list): what the
//     process's RSS must hold;
//   - kept-MiB: the heap still live after a GC with the result kept, what the agent holds until the next refresh.
//
// The server sends the list from a file, so its own heap stays out of both numbers. Run (bench/agent/README.md):
// go test -run '^$' -bench NodeList5000 -benchtime 3x ./internal/nodestatus/
func BenchmarkNodeList5000(b *testing.B) {
	path := filepath.Join(b.TempDir(), "nodes.json")
	if err := os.WriteFile(path, fleetNodeList(b, benchFleet), 0o600); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		http.ServeFile(w, r, path)
	}))
	defer srv.Close()
	l, err := NewNodeLister(&rest.Config{Host: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	for _, arm := range []struct {
		name string
		list func(context.Context) ([]NodeInfo, error)
	}{{"full", l.listFull}, {"stream", l.List}} {
		b.Run(arm.name, func(b *testing.B) { benchList(b, arm.list) })
	}
}

func benchList(b *testing.B, list func(context.Context) ([]NodeInfo, error)) {
	b.ReportAllocs()
	var peak, kept float64
	for b.Loop() {
		runtime.GC()
		base := heapObjects()
		stop := samplePeakHeap()
		nodes, err := list(context.Background())
		p := stop()
		if err != nil || len(nodes) != benchFleet {
			b.Fatalf("%d nodes, err %v", len(nodes), err)
		}
		runtime.GC()
		k := heapObjects()
		runtime.KeepAlive(nodes)
		peak = max(peak, float64(p-base)/(1<<20))
		kept = max(kept, float64(k-base)/(1<<20))
	}
	b.ReportMetric(peak, "peak-heap-MiB")
	b.ReportMetric(kept, "kept-MiB")
}

// listFull is List as it was before the streaming decode (nodes.go at 2986f4a, with the caller's mapping).
func (l *NodeLister) listFull(ctx context.Context) ([]NodeInfo, error) {
	cctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var list corev1.NodeList
	if err := l.c.Get().Resource("nodes").Param("resourceVersion", "0").Do(cctx).Into(&list); err != nil {
		return nil, err
	}
	out := make([]NodeInfo, 0, len(list.Items))
	for i := range list.Items {
		n := &list.Items[i]
		out = append(out, NodeInfo{Name: n.Name, Zone: n.Labels[ZoneLabel], Pool: Pool(n.Labels),
			InternalIP: InternalIP(n.Status.Addresses)})
	}
	return out, nil
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// samplePeakHeap samples heapObjects until the returned stop is called, which returns the highest sample.
func samplePeakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			peak.Store(max(peak.Load(), heapObjects()))
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return max(peak.Load(), heapObjects())
	}
}
