package podowner

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// OwnerCacheSize bounds the owners remembered (a ReplicaSet's or Job's own controller): a node runs a few
// hundred pods at most, of fewer ReplicaSets and Jobs; past it the oldest entry is forgotten and looked up
// again when a pod of it next appears.
const OwnerCacheSize = 1024

// Getter reads an owner object's metadata: a get of apps/v1 ReplicaSets or batch/v1 Jobs, which the
// agent's ClusterRole grants (get only: an owner is fetched by name when a pod of it appears).
type Getter func(ctx context.Context, ref metav1.OwnerReference, namespace string) (*metav1.ObjectMeta, error)

// Owners names a pod's workload by its controller chain: a ReplicaSet's Deployment, a Job's CronJob, a
// StatefulSet or DaemonSet (or any other controller, such as a Node for a static pod's mirror) as itself, a
// pod without a controller as the Pod. One step up is enough for every built-in workload.
type Owners struct {
	Get Getter

	mu    sync.Mutex
	cache map[types.UID]*metav1.OwnerReference // the owner's controller; nil: it has none
	order []types.UID                          // oldest first, for the bound
}

// chained are the kinds whose own controller names the workload, by API group.
var chained = map[string]string{"ReplicaSet": "apps", "Job": "batch"}

// Workload names pod's workload. On an error reading the owner's owner the owner itself is returned with
// the error (a Deployment's pods then read as their ReplicaSet until the pod watch's resync asks again).
func (o *Owners) Workload(ctx context.Context, pod *metav1.ObjectMeta) (snat.Workload, error) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return snat.Workload{Namespace: pod.Namespace, Name: pod.Name, Kind: "Pod"}, nil
	}
	self := snat.Workload{Namespace: pod.Namespace, Name: ref.Name, Kind: ref.Kind}
	if group, ok := chained[ref.Kind]; !ok || groupOf(ref.APIVersion) != group {
		return self, nil
	}
	up, err := o.controllerOf(ctx, *ref, pod.Namespace)
	if err != nil {
		return self, err
	}
	if up == nil {
		return self, nil
	}
	return snat.Workload{Namespace: pod.Namespace, Name: up.Name, Kind: up.Kind}, nil
}

func groupOf(apiVersion string) string {
	for i := range len(apiVersion) {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return "" // the core group
}

// controllerOf reads ref's own controller, cached by ref's UID: an object's UID is never reused, so a
// cached answer cannot name another object's owner.
func (o *Owners) controllerOf(ctx context.Context, ref metav1.OwnerReference, namespace string) (*metav1.OwnerReference, error) {
	o.mu.Lock()
	up, ok := o.cache[ref.UID]
	o.mu.Unlock()
	if ok {
		return up, nil
	}
	meta, err := o.Get(ctx, ref, namespace)
	if err != nil {
		return nil, fmt.Errorf("get %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
	}
	if meta.UID != ref.UID {
		// Replaced under the same name since the pod was made: the pod's owner is gone.
		return nil, fmt.Errorf("get %s %s/%s: its uid is %s, the pod's owner reference names %s", ref.Kind,
			namespace, ref.Name, meta.UID, ref.UID)
	}
	if c := metav1.GetControllerOfNoCopy(meta); c != nil {
		cp := *c
		up = &cp
	}
	o.remember(ref.UID, up)
	return up, nil
}

func (o *Owners) remember(uid types.UID, up *metav1.OwnerReference) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cache == nil {
		o.cache = map[types.UID]*metav1.OwnerReference{}
	}
	if _, ok := o.cache[uid]; ok {
		return
	}
	if len(o.order) >= OwnerCacheSize {
		delete(o.cache, o.order[0])
		o.order = o.order[1:]
	}
	o.cache[uid] = up
	o.order = append(o.order, uid)
}

// Cached is how many owners are remembered.
func (o *Owners) Cached() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.cache)
}
