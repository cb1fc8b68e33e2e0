package nodestatus

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// API is every call the Reporter makes: the get/patch on its Node and create/patch on Events that
// rbac.yaml grants, nothing more.
type API interface {
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
	// PatchNode patches the Node, or its status with subresource "status".
	PatchNode(ctx context.Context, name string, pt types.PatchType, data []byte, subresource ...string) (*corev1.Node, error)
	CreateEvent(ctx context.Context, namespace string, e *corev1.Event) (*corev1.Event, error)
	PatchEvent(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*corev1.Event, error)
}

// ownNode is the API narrowed to the agent's own Node: every call names it and is bounded by callTimeout.
type ownNode struct {
	api  API
	name string
}

func (n ownNode) get(ctx context.Context) (*corev1.Node, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return n.api.GetNode(cctx, n.name)
}

// patch sends body, JSON-encoded, as a patch of type pt to the Node, or to its status with subresource "status".
func (n ownNode) patch(ctx context.Context, pt types.PatchType, body any, subresource ...string) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = n.api.PatchNode(cctx, n.name, pt, data, subresource...)
	return err
}

// NewRESTAPI returns an API that speaks JSON to the API server described by cfg, through a REST
// client that knows only core/v1.
//
// It exists for the binary size: client-go's typed CoreV1 client imports k8s.io/client-go/kubernetes/scheme,
// whose init registers every built-in API group, and the linker keeps all of them. A program calling
// only corev1client.NewForConfig is 26 MB stripped; one calling rest.RESTClientFor with a core/v1-only
// scheme is 13 MB (go1.26, client-go v0.37.2, CGO_ENABLED=0 -ldflags="-s -w").
func NewRESTAPI(cfg *rest.Config) (API, error) {
	rc, err := NewCoreV1Client(cfg)
	if err != nil {
		return nil, err
	}
	return restAPI{rc}, nil
}

// NewCoreV1Client is the core/v1-only REST client every API call of the agent goes through (its Node
// report here, the pod watch of the SNAT attribution), for the binary size said above.
func NewCoreV1Client(cfg *rest.Config) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	// core/v1 also registers metav1.Status, so API errors decode into apierrors (IsForbidden, ...).
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register core/v1: %w", err)
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.ContentType = runtime.ContentTypeJSON
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = Component
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return rc, nil
}

type restAPI struct{ c rest.Interface }

func (a restAPI) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	err := a.c.Get().Resource("nodes").Name(name).Do(ctx).Into(n)
	return n, err
}

func (a restAPI) PatchNode(ctx context.Context, name string, pt types.PatchType, data []byte, subresource ...string) (*corev1.Node, error) {
	n := &corev1.Node{}
	err := a.c.Patch(pt).Resource("nodes").Name(name).SubResource(subresource...).
		Param("fieldManager", Component).Body(data).Do(ctx).Into(n)
	return n, err
}

func (a restAPI) CreateEvent(ctx context.Context, namespace string, e *corev1.Event) (*corev1.Event, error) {
	out := &corev1.Event{}
	err := a.c.Post().Namespace(namespace).Resource("events").
		Param("fieldManager", Component).Body(e).Do(ctx).Into(out)
	return out, err
}

func (a restAPI) PatchEvent(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*corev1.Event, error) {
	out := &corev1.Event{}
	err := a.c.Patch(pt).Namespace(namespace).Resource("events").Name(name).
		Param("fieldManager", Component).Body(data).Do(ctx).Into(out)
	return out, err
}

// ZoneLabel is the well-known label of the zone a Node runs in.
const ZoneLabel = "topology.kubernetes.io/zone"

// Zone reads the agent's Node's zone label ("" when it has none), with the get the ClusterRole grants.
func (r *Reporter) Zone(ctx context.Context) (string, error) {
	n, err := r.node.get(ctx)
	if err != nil {
		return "", err
	}
	return n.Labels[ZoneLabel], nil
}
