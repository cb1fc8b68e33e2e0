package podowner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/wirespeed-io/wirespeed/agent/internal/nodestatus"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// What attribution adds to the SNAT accounting (issue 29, item 8), without the kernel: 5,000 pods on this
// node's watch, 50,000 open flows from their addresses to 50 destinations, 2,000 new flows a second (a NEW
// and, for the flow it replaces, a DESTROY), one Tick a second. bench/agent/RESULTS.md records the runs; the
// SNAT accounting's own cost under the same load is its "Issue 19" section. No timing is asserted.
const (
	benchPods  = 5_000
	benchOpen  = 50_000
	benchRate  = 2_000
	benchDests = 50
	benchNode  = "bench-node"
)

var benchEpoch = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

// benchPodAddr is pod i's address: 10.244.x.y, 250 a /24.
func benchPodAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 244, byte(i / 250), byte(2 + i%250)})
}

// benchOwner is pod i's controller: four in five a Deployment's ReplicaSet (ten pods each), one in five a
// CronJob's Job, as a node mixing services and batch would have them.
func benchOwner(i int) (kind, apiVersion, name string) {
	if i%5 == 4 {
		return "Job", "batch/v1", fmt.Sprintf("export-%d-29", i/10)
	}
	return "ReplicaSet", "apps/v1", fmt.Sprintf("web-%d-7d9f8", i/10)
}

// benchNamespace is pod i's namespace: a workload's pods share one, 50 namespaces in all.
func benchNamespace(i int) string { return fmt.Sprintf("ns-%d", (i/10)%50) }

// benchPodList is a PodList of benchPods pods as the API server sends it: labels, a container with an image,
// ports, resources and environment (dropped by trim, but decoded first), the status a kubelet writes.
func benchPodList() string {
	var b strings.Builder
	b.WriteString(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[`)
	for i := range benchPods {
		if i > 0 {
			b.WriteByte(',')
		}
		kind, api, owner := benchOwner(i)
		fmt.Fprintf(&b, `{"metadata":{"name":"%s-%d","namespace":"%s","uid":"pod-%d","resourceVersion":"%d",`+
			`"labels":{"app":"%s","pod-template-hash":"7d9f8"},"ownerReferences":[{"apiVersion":"%s","kind":"%s",`+
			`"name":"%s","uid":"owner-%s","controller":true}]},"spec":{"nodeName":"%s","containers":[{"name":"app",`+
			`"image":"registry.example/app:1.2.3","ports":[{"containerPort":8080}],"env":[{"name":"MODE","value":"prod"}],`+
			`"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]},"status":{"phase":"Running",`+
			`"startTime":"2026-12-01T00:00:00Z","podIP":"%s","podIPs":[{"ip":"%s"}],"hostIP":"10.224.0.4",`+
			`"hostIPs":[{"ip":"10.224.0.4"}]}}`,
			owner, i, benchNamespace(i), i, 100+i, owner, api, kind, owner, owner, benchNode, benchPodAddr(i), benchPodAddr(i))
	}
	b.WriteString(`]}`)
	return b.String()
}

// benchAPIServer lists the pods and holds the watch open, quiet (a fake: the lab tests run the real one).
func benchAPIServer(list string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("sendInitialEvents") == "true": // as fakeAPIServer: fall back to list + watch
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400}`)
		case r.URL.Query().Get("watch") == "true":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			fmt.Fprint(w, list)
		}
	}))
}

// benchGetter answers an owner's GET as the API server would: a ReplicaSet is a Deployment's, a Job a
// CronJob's (in memory: the cost of the GETs themselves is one per owner, cached).
func benchGetter(_ context.Context, ref metav1.OwnerReference, _ string) (*metav1.ObjectMeta, error) {
	kind, api, name := "Deployment", "apps/v1", strings.TrimSuffix(ref.Name, "-7d9f8")
	if ref.Kind == "Job" {
		kind, api, name = "CronJob", "batch/v1", strings.TrimSuffix(ref.Name, "-29")
	}
	return &metav1.ObjectMeta{Name: ref.Name, UID: ref.UID, OwnerReferences: []metav1.OwnerReference{
		{APIVersion: api, Kind: kind, Name: name, UID: types.UID("top-" + name), Controller: ptr(true)}}}, nil
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkPodWatch: the agent's Watch (client-go's informer with trim, Owners, History) syncing the 5,000
// pods of its node from a fake API server; reports the heap it keeps while running (the informer's cache,
// the owners' cache, the History), measured after a full GC, and ns/op is the time to learn every pod.
func BenchmarkPodWatch(b *testing.B) {
	srv := benchAPIServer(benchPodList())
	defer srv.Close()
	rc, err := nodestatus.NewCoreV1Client(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	var kept uint64
	for range b.N {
		b.StopTimer()
		before := liveHeap()
		b.StartTimer()
		h := NewHistory(benchNode)
		w := &Watch{Node: benchNode, History: h, Owners: &Owners{Get: benchGetter}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx, rc) }()
		for h.Addresses() < benchPods {
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		if got := h.Attribute(benchPodAddr(12), benchEpoch); got != (snat.Workload{Namespace: "ns-1", Name: "web-1", Kind: "Deployment"}) {
			b.Fatalf("pod 12 is %v", got)
		}
		kept = liveHeap() - before
		runtime.KeepAlive(w)
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(kept)/(1<<20), "heap-MiB")
}

// benchHistory is the History the watch above builds, filled directly (its lookups are what a Tick pays).
func benchHistory() *History {
	h := NewHistory(benchNode)
	h.SetNodeAddress(netip.MustParseAddr("10.224.0.4"))
	o := &Owners{Get: benchGetter}
	for i := range benchPods {
		kind, api, name := benchOwner(i)
		meta := &metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: benchNamespace(i),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: api, Kind: kind, Name: name,
				UID: types.UID("owner-" + name), Controller: ptr(true)}}}
		w, err := o.Workload(context.Background(), meta)
		if err != nil {
			panic(err)
		}
		h.Hold(benchPodAddr(i), types.UID(fmt.Sprintf("pod-%d", i)), w, benchEpoch.Add(-time.Hour))
	}
	return h
}

// benchFlow is the flow in slot i (of benchOpen), its generation-th occupant: pod i%5000, whose ten flows go
// to ten of the 50 destinations (so the 1,000 workloads spread over most destinations, as a node's do).
func benchFlow(i, generation int) snat.Flow {
	dest := (3*(i%benchPods) + i/benchPods) % benchDests
	peer := netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(1 + dest)}), 443)
	return snat.Flow{ID: uint32(generation*benchOpen + i + 1), Proto: snat.ProtoTCP, OrigSrc: benchPodAddr(i % benchPods),
		OrigSrcPort: uint16(1024 + (i+generation*7)%60000), OrigDstPort: 443, Peer: peer}
}

// benchReplacePod ends the pod on address s%benchPods and starts another of its workload on it at now.
func benchReplacePod(h *History, s int, now time.Time) {
	i := s % benchPods
	a := benchPodAddr(i)
	w := h.Attribute(a, now)
	h.Release(a, types.UID(fmt.Sprintf("pod-%d-%d", i, s-benchPods)), now)
	h.Release(a, types.UID(fmt.Sprintf("pod-%d", i)), now)
	h.Hold(a, types.UID(fmt.Sprintf("pod-%d-%d", i, s)), w, now)
}

// BenchmarkAttributedLoad: one op is one second of the load, 2,000 DESTROY + NEW pairs and the Tick that
// snapshots the table, with 50,000 flows open and 240 s of closed flows held (the default hold; warmed past
// it first, so the held ports are at their steady 480,000); attribution off (no Attributor: the SNAT
// accounting alone), on (the History of 5,000 pods), and on with a pod replaced every second (one pod ends
// and a new one of the same workload takes its address: the History changes, so each Tick looks over the
// open flows and asks again for those from that address). ns/op is CPU time per second of load when the
// benchmark has a core to itself: "core-%" says it as a share of one core. "heap-MiB" is the heap the
// table (and the History, when on) keeps at steady state, after a full GC.
func BenchmarkAttributedLoad(b *testing.B) {
	for _, arm := range []struct {
		on, churn bool
	}{{false, false}, {true, false}, {true, true}} {
		on := arm.on
		b.Run(fmt.Sprintf("attribution=%v/pod-churn=%v", arm.on, arm.churn), func(b *testing.B) {
			before := liveHeap()
			cfg := snat.Config{Classifier: snat.NewClassifier(nil, false), TCPHold: 240 * time.Second,
				UDPHold: 240 * time.Second, Top: 20, PeakWindow: 24 * time.Hour, MaxTracked: 1 << 20}
			var h *History
			if on {
				h = benchHistory()
				cfg.Attributor, cfg.WorkloadTop = h, 20
			}
			t := snat.NewTable(cfg, benchEpoch)
			gen := make([]int, benchOpen)
			for i := range benchOpen {
				t.New(benchFlow(i, 0), benchEpoch)
			}
			next := 0
			second := func(s int) snat.Snapshot {
				now := benchEpoch.Add(time.Duration(s) * time.Second)
				for range benchRate {
					slot := next % benchOpen
					t.Destroy(benchFlow(slot, gen[slot]), now)
					gen[slot]++
					t.New(benchFlow(slot, gen[slot]), now)
					next++
				}
				if arm.churn {
					benchReplacePod(h, s, now)
				}
				return t.Tick(now)
			}
			const warm = 300 // simulated seconds: past the 240 s hold, so held ports are at steady state
			for s := 1; s <= warm; s++ {
				second(s)
			}
			if snap := second(warm + 1); on && (!snap.Attributed || len(snap.Workloads) != 20) {
				b.Fatalf("attribution did not run: %v, %d workloads", snap.Attributed, len(snap.Workloads))
			}
			kept := liveHeap() - before
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				second(warm + 2 + i)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e7, "core-%")
			b.ReportMetric(float64(kept)/(1<<20), "heap-MiB")
			runtime.KeepAlive(t)
		})
	}
}
