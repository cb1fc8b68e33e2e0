package podowner

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// resyncPeriod re-delivers every cached pod to the handler (from the informer's cache: no API call), so an
// owner that could not be read is asked for again.
const resyncPeriod = 10 * time.Minute

// getTimeout bounds one owner lookup: the watch's handler waits for it.
const getTimeout = 5 * time.Second

// Watch keeps a History of the pods on one node, from client-go's informer on Pods with the field selector
// spec.nodeName=<node>. RBAC cannot narrow a list or watch to one node's pods (a ClusterRole grants list and
// watch on all Pods, rules match no field selectors), so the agent holds the cluster-wide read; the field
// selector makes the API server send it only its own node's pods, the same selector the kubelet uses.
type Watch struct {
	Node    string
	History *History
	Owners  *Owners
	Log     *slog.Logger
	// Now is the clock of releases (time.Now when nil).
	Now func() time.Time
}

// resources are the owner kinds a Getter reads, with their plural resource names.
var resources = map[string]string{"ReplicaSet": "replicasets", "Job": "jobs"}

// NewGetter reads owners' metadata through rc with a plain GET, decoding only the metadata, so the agent
// links no apps/v1 or batch/v1 types.
func NewGetter(rc rest.Interface) Getter {
	return func(ctx context.Context, ref metav1.OwnerReference, namespace string) (*metav1.ObjectMeta, error) {
		resource, ok := resources[ref.Kind]
		if !ok {
			return nil, fmt.Errorf("kind %s is not read (only %v)", ref.Kind, resources)
		}
		cctx, cancel := context.WithTimeout(ctx, getTimeout)
		defer cancel()
		raw, err := rc.Get().AbsPath("/apis", ref.APIVersion, "namespaces", namespace, resource, ref.Name).
			Do(cctx).Raw()
		if err != nil {
			return nil, err
		}
		var obj metav1.PartialObjectMetadata
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("decode %s: %w", ref.Kind, err)
		}
		return &obj.ObjectMeta, nil
	}
}

// Run watches this node's pods through rc until ctx ends.
func (w *Watch) Run(ctx context.Context, rc rest.Interface) error {
	lw := cache.NewListWatchFromClient(rc, "pods", metav1.NamespaceAll,
		fields.OneTermEqualSelector("spec.nodeName", w.Node))
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, resyncPeriod, cache.Indexers{})
	if err := inf.SetTransform(trim); err != nil {
		return err
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(ctx, obj) },
		UpdateFunc: func(_, obj any) { w.observe(ctx, obj) },
		DeleteFunc: func(obj any) {
			if pod, ok := cached(obj); ok {
				w.release(pod)
			}
		},
	})
	if err != nil {
		return err
	}
	inf.Run(ctx.Done())
	return nil
}

func (w *Watch) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// cachedPod is what the informer's cache keeps of a pod: what attribution reads, its addresses parsed.
// A corev1.Pod, even trimmed to those fields, is 1,240 bytes of struct (PodSpec's and PodStatus's many
// empty fields), and an embedded metav1.ObjectMeta still 240 with a slice of 80-byte owner references; this
// is about 110 bytes plus its strings, with the controller reference and the node's addresses shared by
// every pod naming the same ones (unique handles). The cache needs of it only its name, namespace and
// resourceVersion (client-go's tools/cache reads its key and resourceVersion through meta.Accessor), which
// GetObjectMeta gives it.
type cachedPod struct {
	name, namespace string
	uid             types.UID
	resourceVersion string
	from            time.Time // status.startTime, else the creation time: when its hold of its addresses starts
	controller      unique.Handle[ownerRef]
	hasController   bool
	hostNetwork     bool
	ended           bool // phase Succeeded or Failed: the pod has no sandbox, so its address is free
	addrs           []netip.Addr
	hostAddrs       unique.Handle[hostAddrs]
}

// ownerRef is a pod's controller reference: the fields Owners reads.
type ownerRef struct {
	apiVersion, kind, name string
	uid                    types.UID
}

// hostAddrs are a pod's status.hostIPs and hostIP, parsed: the node's addresses, the same for every pod of
// the node, so shared. An API server sends at most two hostIPs (one per family), the first equal to hostIP.
type hostAddrs [3]netip.Addr

// GetObjectMeta is what meta.Accessor reads of a cached pod (a copy: the cache only reads it).
func (p *cachedPod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: p.name, Namespace: p.namespace, UID: p.uid, ResourceVersion: p.resourceVersion}
}

// meta is the pod's metadata as Owners reads it: its name, namespace and controller reference.
func (p *cachedPod) meta() *metav1.ObjectMeta {
	m := &metav1.ObjectMeta{Name: p.name, Namespace: p.namespace, UID: p.uid}
	if p.hasController {
		r, yes := p.controller.Value(), true
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: r.apiVersion, Kind: r.kind, Name: r.name,
			UID: r.uid, Controller: &yes}}
	}
	return m
}

// trim keeps only what attribution reads, so 5,000 cached pods cost a few hundred bytes each, not their
// whole spec. Of the owner references only the controller is kept (the one Owners follows). It is
// idempotent (client-go may hand it an object it trimmed already).
func trim(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	c := &cachedPod{name: pod.Name, namespace: pod.Namespace, uid: pod.UID, resourceVersion: pod.ResourceVersion,
		from: pod.CreationTimestamp.Time, hostNetwork: pod.Spec.HostNetwork,
		ended: pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed,
		addrs: podAddrs(pod), hostAddrs: unique.Make(hostAddrsOf(pod))}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		c.controller = unique.Make(ownerRef{apiVersion: ref.APIVersion, kind: ref.Kind, name: ref.Name, uid: ref.UID})
		c.hasController = true
	}
	if pod.Status.StartTime != nil {
		c.from = pod.Status.StartTime.Time
	}
	return c, nil
}

// cached is the informer's object as trim made it (a deleted one's last known state included).
func cached(obj any) (*cachedPod, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	obj, _ = trim(obj)
	pod, ok := obj.(*cachedPod)
	return pod, ok
}

// observe records a pod's addresses: a host-network pod's and every pod's host addresses are the node's;
// a pod that ended releases its addresses.
func (w *Watch) observe(ctx context.Context, obj any) {
	pod, ok := cached(obj)
	if !ok {
		return
	}
	for _, a := range pod.hostAddrs.Value() {
		if a.IsValid() {
			w.History.SetNodeAddress(a)
		}
	}
	if pod.hostNetwork {
		for _, a := range pod.addrs {
			w.History.SetNodeAddress(a)
		}
		return
	}
	if pod.ended {
		w.release(pod)
		return
	}
	if len(pod.addrs) == 0 {
		return
	}
	wl, err := w.Owners.Workload(ctx, pod.meta())
	if err != nil && w.Log != nil {
		w.Log.Warn("pod's workload not resolved; counted under its owner", "pod", pod.namespace+"/"+pod.name,
			"owner", wl.String(), "err", err)
	}
	for _, a := range pod.addrs {
		w.History.Hold(a, pod.uid, wl, pod.from)
	}
}

func (w *Watch) release(pod *cachedPod) {
	if pod.hostNetwork {
		return
	}
	now := w.now()
	for _, a := range pod.addrs {
		w.History.Release(a, pod.uid, now)
	}
}

func podAddrs(pod *corev1.Pod) []netip.Addr {
	var out []netip.Addr
	for _, ip := range pod.Status.PodIPs {
		if a, err := netip.ParseAddr(strings.TrimSpace(ip.IP)); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// hostAddrsOf is pod's host addresses, each once (hostIP repeats the first of hostIPs).
func hostAddrsOf(pod *corev1.Pod) hostAddrs {
	var out hostAddrs
	n := 0
	add := func(ip string) {
		a, err := netip.ParseAddr(ip)
		if err != nil || n == len(out) || slices.Contains(out[:n], a) {
			return
		}
		out[n] = a
		n++
	}
	for _, ip := range pod.Status.HostIPs {
		add(ip.IP)
	}
	add(pod.Status.HostIP)
	return out
}
