package podowner

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

func controller(apiVersion, kind, name, uid string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}
}

// fakeGetter stands in for the API server's get of ReplicaSets and Jobs (named as a fake): it answers
// from objects by UID and counts the calls.
type fakeGetter struct {
	objects map[types.UID]metav1.ObjectMeta
	calls   int
	err     error
}

func (f *fakeGetter) get(_ context.Context, ref metav1.OwnerReference, _ string) (*metav1.ObjectMeta, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	m, ok := f.objects[ref.UID]
	if !ok {
		return nil, errors.New("not found")
	}
	return &m, nil
}

func TestOwnerChainsWithFakeGetter(t *testing.T) {
	objects := map[types.UID]metav1.ObjectMeta{
		"rs-1":  {Name: "payments-api-7d9f", UID: "rs-1", OwnerReferences: []metav1.OwnerReference{controller("apps/v1", "Deployment", "payments-api", "d-1")}},
		"rs-2":  {Name: "loose-rs", UID: "rs-2"},
		"rs-3":  {Name: "canary-5f", UID: "rs-3", OwnerReferences: []metav1.OwnerReference{controller("argoproj.io/v1alpha1", "Rollout", "canary", "r-1")}},
		"job-1": {Name: "export-29123", UID: "job-1", OwnerReferences: []metav1.OwnerReference{controller("batch/v1", "CronJob", "export", "cj-1")}},
		"job-2": {Name: "migrate", UID: "job-2"},
		"old":   {Name: "reborn-rs", UID: "new-uid"},
	}
	cases := []struct {
		name  string
		owner *metav1.OwnerReference
		want  snat.Workload
		calls int
		err   bool
	}{
		{"ReplicaSet to Deployment", ptr(controller("apps/v1", "ReplicaSet", "payments-api-7d9f", "rs-1")),
			snat.Workload{Namespace: "ns", Name: "payments-api", Kind: "Deployment"}, 1, false},
		{"a ReplicaSet without an owner is itself", ptr(controller("apps/v1", "ReplicaSet", "loose-rs", "rs-2")),
			snat.Workload{Namespace: "ns", Name: "loose-rs", Kind: "ReplicaSet"}, 1, false},
		{"a ReplicaSet of another controller names that controller", ptr(controller("apps/v1", "ReplicaSet", "canary-5f", "rs-3")),
			snat.Workload{Namespace: "ns", Name: "canary", Kind: "Rollout"}, 1, false},
		{"Job to CronJob", ptr(controller("batch/v1", "Job", "export-29123", "job-1")),
			snat.Workload{Namespace: "ns", Name: "export", Kind: "CronJob"}, 1, false},
		{"a Job without an owner is itself", ptr(controller("batch/v1", "Job", "migrate", "job-2")),
			snat.Workload{Namespace: "ns", Name: "migrate", Kind: "Job"}, 1, false},
		{"StatefulSet, no lookup", ptr(controller("apps/v1", "StatefulSet", "pg", "ss-1")),
			snat.Workload{Namespace: "ns", Name: "pg", Kind: "StatefulSet"}, 0, false},
		{"DaemonSet, no lookup", ptr(controller("apps/v1", "DaemonSet", "fluent-bit", "ds-1")),
			snat.Workload{Namespace: "ns", Name: "fluent-bit", Kind: "DaemonSet"}, 0, false},
		{"a kind named ReplicaSet in another group is not looked up", ptr(controller("example.com/v1", "ReplicaSet", "x", "x-1")),
			snat.Workload{Namespace: "ns", Name: "x", Kind: "ReplicaSet"}, 0, false},
		{"a bare pod is itself", nil, snat.Workload{Namespace: "ns", Name: "pod-1", Kind: "Pod"}, 0, false},
		{"an owner replaced under its name is not trusted", ptr(controller("apps/v1", "ReplicaSet", "reborn-rs", "old")),
			snat.Workload{Namespace: "ns", Name: "reborn-rs", Kind: "ReplicaSet"}, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &fakeGetter{objects: objects}
			o := &Owners{Get: g.get}
			pod := &metav1.ObjectMeta{Name: "pod-1", Namespace: "ns"}
			if tc.owner != nil {
				pod.OwnerReferences = []metav1.OwnerReference{*tc.owner}
			}
			for range 2 { // the second answer comes from the cache
				got, err := o.Workload(context.Background(), pod)
				if got != tc.want || (err != nil) != tc.err {
					t.Fatalf("%v, %v; want %v (error %v)", got, err, tc.want, tc.err)
				}
			}
			if want := tc.calls * map[bool]int{true: 2, false: 1}[tc.err]; g.calls != want {
				t.Fatalf("%d gets, want %d (a failed get is not cached, a good one is)", g.calls, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestOwnerCacheIsBounded(t *testing.T) {
	o := &Owners{Get: func(_ context.Context, ref metav1.OwnerReference, _ string) (*metav1.ObjectMeta, error) {
		return &metav1.ObjectMeta{UID: ref.UID}, nil
	}}
	for i := range OwnerCacheSize + 10 {
		ref := controller("apps/v1", "ReplicaSet", "rs", string(rune('a'+i%26))+string(rune(i)))
		if _, err := o.Workload(context.Background(), &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{ref}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := o.Cached(); n != OwnerCacheSize {
		t.Fatalf("%d owners cached, want the bound %d", n, OwnerCacheSize)
	}
}

// The pod watch's handler, fed Pod objects as the informer delivers them (no API server: the lab test in
// internal/nodestatus runs the real one).
func TestWatchHandlerRecordsPodsAndTheNodeWithFakeGetter(t *testing.T) {
	g := &fakeGetter{objects: map[types.UID]metav1.ObjectMeta{
		"rs-1": {Name: "web-6c", UID: "rs-1", OwnerReferences: []metav1.OwnerReference{controller("apps/v1", "Deployment", "web", "d-1")}},
	}}
	h := NewHistory("node-1")
	now := t0.Add(100 * 1e9)
	w := &Watch{Node: "node-1", History: h, Owners: &Owners{Get: g.get}, Now: func() time.Time { return now }}
	pod := func(name, uid, ip string, phase corev1.PodPhase, host bool, owners ...metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(uid), OwnerReferences: owners},
			Spec:   corev1.PodSpec{NodeName: "node-1", HostNetwork: host},
			Status: corev1.PodStatus{Phase: phase, StartTime: &metav1.Time{Time: t0}, HostIPs: []corev1.HostIP{{IP: "10.224.0.4"}}}}
		if ip != "" {
			p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		}
		return p
	}
	w.observe(context.Background(), pod("web-6c-x", "p1", "10.244.0.9", corev1.PodRunning, false,
		controller("apps/v1", "ReplicaSet", "web-6c", "rs-1")))
	w.observe(context.Background(), pod("kube-proxy-1", "p2", "10.224.0.4", corev1.PodRunning, true))
	w.observe(context.Background(), pod("pending", "p3", "", corev1.PodPending, false))
	web := snat.Workload{Namespace: "shop", Name: "web", Kind: "Deployment"}
	node := snat.Workload{Name: "node-1", Kind: snat.KindNode}
	check := func(a string, when time.Time, want snat.Workload) {
		t.Helper()
		if got := h.Attribute(netip.MustParseAddr(a), when); got != want {
			t.Errorf("%s at %v: %v, want %v", a, when, got, want)
		}
	}
	check("10.244.0.9", t0.Add(1e9), web)
	check("10.224.0.4", t0, node)
	// The pod ends (Succeeded): its address is free from the moment the watch saw it.
	w.observe(context.Background(), pod("web-6c-x", "p1", "10.244.0.9", corev1.PodSucceeded, false,
		controller("apps/v1", "ReplicaSet", "web-6c", "rs-1")))
	check("10.244.0.9", t0.Add(1e9), web)
	check("10.244.0.9", now.Add(1e9), snat.UnknownWorkload)
}

// The informer caches trim's compact pod: client-go must read the same key and resourceVersion from it as
// from the Pod, Owners the same workload, and two pods of one controller (or one node) share its record.
func TestTrimmedPodsKeepWhatTheCacheAndAttributionRead(t *testing.T) {
	g := &fakeGetter{objects: map[types.UID]metav1.ObjectMeta{
		"rs-1": {Name: "web-6c", UID: "rs-1", OwnerReferences: []metav1.OwnerReference{controller("apps/v1", "Deployment", "web", "d-1")}},
	}}
	created := metav1.Time{Time: t0.Add(-time.Minute)}
	pod := func(name, rv string, start *metav1.Time, owners ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name),
			ResourceVersion: rv, CreationTimestamp: created, OwnerReferences: owners},
			Status: corev1.PodStatus{Phase: corev1.PodSucceeded, StartTime: start, HostIP: "10.224.0.4",
				HostIPs: []corev1.HostIP{{IP: "10.224.0.4"}, {IP: "fd00::4"}}}}
	}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "n"} // not the controller: dropped
	for _, p := range []*corev1.Pod{
		pod("web-6c-x", "41", &metav1.Time{Time: t0}, other, controller("apps/v1", "ReplicaSet", "web-6c", "rs-1")),
		pod("web-6c-y", "42", nil, controller("apps/v1", "ReplicaSet", "web-6c", "rs-1")),
		pod("bare", "43", nil),
	} {
		obj, err := trim(p)
		if err != nil {
			t.Fatal(err)
		}
		c := obj.(*cachedPod)
		if again, _ := trim(obj); again != obj {
			t.Errorf("%s: trim is not idempotent", p.Name)
		}
		key, err := cache.MetaNamespaceKeyFunc(obj)
		m, merr := meta.Accessor(obj)
		if err != nil || merr != nil || key != "shop/"+p.Name || m.GetResourceVersion() != p.ResourceVersion || m.GetUID() != p.UID {
			t.Errorf("%s: the cache reads key %q (%v), %v (%v)", p.Name, key, err, m, merr)
		}
		want, werr := (&Owners{Get: g.get}).Workload(context.Background(), &p.ObjectMeta)
		got, gerr := (&Owners{Get: g.get}).Workload(context.Background(), c.meta())
		if got != want || gerr != nil || werr != nil {
			t.Errorf("%s: workload %v (%v), from the Pod %v (%v)", p.Name, got, gerr, want, werr)
		}
		from := created.Time
		if p.Status.StartTime != nil {
			from = p.Status.StartTime.Time
		}
		hosts := hostAddrs{netip.MustParseAddr("10.224.0.4"), netip.MustParseAddr("fd00::4")}
		if c.from != from || !c.ended || c.hostAddrs != unique.Make(hosts) {
			t.Errorf("%s: from %v ended %v hosts %v, want %v true %v", p.Name, c.from, c.ended, c.hostAddrs.Value(), from, hosts)
		}
	}
	a, _ := trim(pod("a", "1", nil, controller("apps/v1", "ReplicaSet", "web-6c", "rs-1")))
	b, _ := trim(pod("b", "2", nil, controller("apps/v1", "ReplicaSet", "web-6c", "rs-1")))
	if a.(*cachedPod).controller != b.(*cachedPod).controller {
		t.Error("two pods of one ReplicaSet keep two copies of its reference")
	}
}
