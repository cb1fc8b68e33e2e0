package nodestatus

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// PoolLabels name a Node's pool; the first a Node carries wins:
//   - kubernetes.azure.com/agentpool: AKS sets it on every node to its node pool's name
//     (https://learn.microsoft.com/azure/aks/use-labels, "kubernetes.azure.com/agentpool").
//   - eks.amazonaws.com/nodegroup: EKS sets it on a managed node group's nodes
//     (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html, "eks.amazonaws.com/nodegroup").
//   - karpenter.sh/nodepool: Karpenter's NodePool (kubernetes-sigs/karpenter, well-known labels; the
//     catalog's karpenter_labels.py cites the CRDs).
var PoolLabels = []string{"kubernetes.azure.com/agentpool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool"}

// listTimeout bounds one list of the Nodes.
const listTimeout = 30 * time.Second

// NodeLister lists every Node, with the list the ClusterRole grants for the continuous probe's choice of peers.
type NodeLister struct{ c rest.Interface }

// NewNodeLister lists through the core/v1-only client (NewCoreV1Client).
func NewNodeLister(cfg *rest.Config) (*NodeLister, error) {
	rc, err := NewCoreV1Client(cfg)
	if err != nil {
		return nil, err
	}
	return &NodeLister{c: rc}, nil
}

// List reads every Node with resourceVersion=0: the API server answers from its watch cache, not etcd
// ("Resource versions", https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions: "0"
// is "any" version, served from the cache), the cheapest full list there is.
func (l *NodeLister) List(ctx context.Context) ([]corev1.Node, error) {
	cctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var list corev1.NodeList
	if err := l.c.Get().Resource("nodes").Param("resourceVersion", "0").Do(cctx).Into(&list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// Pool is the Node's pool by PoolLabels, "" when none is set.
func Pool(n *corev1.Node) string {
	for _, l := range PoolLabels {
		if v := n.Labels[l]; v != "" {
			return v
		}
	}
	return ""
}

// InternalIP is the Node's first InternalIP address, "" when it has none.
func InternalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}
