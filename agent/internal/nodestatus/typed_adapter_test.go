package nodestatus

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/clock"
)

// NewReporter returns a Reporter over client-go's typed CoreV1 client, here its fake clientset.
//
// It lives in a test file because the typed client links every built-in API group (+11 MB binary,
// +8 MiB RSS); the agent uses NewReporterWithAPI(NewRESTAPI(cfg), ...), which the API tests cover.
func NewReporter(client corev1client.CoreV1Interface, nodeName string, c clock.PassiveClock, log *slog.Logger) *Reporter {
	return NewReporterWithAPI(typedAPI{client}, nodeName, c, log)
}

type typedAPI struct{ c corev1client.CoreV1Interface }

func (a typedAPI) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return a.c.Nodes().Get(ctx, name, metav1.GetOptions{})
}

func (a typedAPI) PatchNode(ctx context.Context, name string, pt types.PatchType, data []byte, subresource ...string) (*corev1.Node, error) {
	return a.c.Nodes().Patch(ctx, name, pt, data, metav1.PatchOptions{FieldManager: Component}, subresource...)
}

func (a typedAPI) CreateEvent(ctx context.Context, namespace string, e *corev1.Event) (*corev1.Event, error) {
	return a.c.Events(namespace).Create(ctx, e, metav1.CreateOptions{FieldManager: Component})
}

func (a typedAPI) PatchEvent(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*corev1.Event, error) {
	return a.c.Events(namespace).Patch(ctx, name, pt, data, metav1.PatchOptions{FieldManager: Component})
}
