package nodestatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// MaxNodeListBytes caps the Node list response the lister reads. A kubelet reports at most 50 images in
// status.images (KubeletConfiguration nodeStatusMaxImages, default 50:
// https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/), which with labels, annotations,
// conditions and capacity makes a Node about 5 to 15 KiB of JSON; Kubernetes supports clusters of up to 5,000
// nodes ("Considerations for large clusters", https://kubernetes.io/docs/setup/best-practices/cluster-large/).
// 5,000 x 15 KiB is 73 MiB, so 128 MiB leaves room for larger Nodes and refuses only a response no real
// cluster sends. The list is decoded one Node at a time, so the cap bounds the bytes read and the one Node held
// undecoded, not what the agent keeps.
const MaxNodeListBytes = 128 << 20

// NodeInfo is all the continuous probe needs of a Node to choose and dial it as a peer.
type NodeInfo struct {
	Name       string
	Zone       string // ZoneLabel, "" when the Node has none
	Pool       string // by PoolLabels, "" when none is set
	InternalIP string // the first InternalIP address, "" when it has none
}

// NodeLister lists every Node, with the list the ClusterRole grants for the continuous probe's choice of peers.
type NodeLister struct {
	c        rest.Interface
	maxBytes int64 // MaxNodeListBytes; a test lowers it
}

// NewNodeLister lists through the core/v1-only client (NewCoreV1Client).
func NewNodeLister(cfg *rest.Config) (*NodeLister, error) {
	rc, err := NewCoreV1Client(cfg)
	if err != nil {
		return nil, err
	}
	return &NodeLister{c: rc, maxBytes: MaxNodeListBytes}, nil
}

// List reads every Node with resourceVersion=0: the API server answers from its watch cache, not etcd
// ("Resource versions", https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions: "0"
// is "any" version, served from the cache), the cheapest full list there is.
//
// The response is streamed and decoded one Node at a time into the few fields NodeInfo needs, never as a
// corev1.NodeList: 5,000 kubelet-sized Nodes are 50 MB of JSON, and decoded whole they took the agent's peak RSS
// to 174-251 MiB, streamed to 29 MiB (bench/agent/RESULTS.md, "Node list at 5,000 nodes"). It asks for JSON
// explicitly ("Alternate representations of resources",
// https://kubernetes.io/docs/reference/using-api/api-concepts/#alternate-representations-of-resources: the
// client chooses with Accept; JSON is what encoding/json can stream).
func (l *NodeLister) List(ctx context.Context) ([]NodeInfo, error) {
	cctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	body, err := l.c.Get().Resource("nodes").Param("resourceVersion", "0").
		SetHeader("Accept", "application/json").Stream(cctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return decodeNodeList(&capReader{r: body, max: l.maxBytes, left: l.maxBytes})
}

// capReader reads at most max bytes from r and then fails with an error naming the cap, where an io.LimitReader
// would end quietly and the decoder would report a truncated list instead of the reason.
type capReader struct {
	r         io.Reader
	max, left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte past the cap tells a body exactly the cap's size (allowed) from a larger one.
		var one [1]byte
		if n, _ := io.ReadFull(c.r, one[:]); n > 0 {
			return 0, fmt.Errorf("larger than %d MiB (nodestatus.MaxNodeListBytes), refused", c.max>>20)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// listedNode is the part of a Node the lister decodes; encoding/json skips every other field without
// building it (the status's images, conditions, capacity; the metadata's annotations and managedFields).
type listedNode struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		Addresses []corev1.NodeAddress `json:"addresses"`
	} `json:"status"`
}

// decodeNodeList reads a NodeList object ({"kind":..., "metadata":..., "items":[...]}) token by token and
// decodes its items one at a time, skipping the other members.
func decodeNodeList(r io.Reader) ([]NodeInfo, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var nodes []NodeInfo
	sawItems := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, nodeListError(err)
		}
		if key != "items" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, nodeListError(err)
			}
			continue
		}
		if nodes, err = decodeItems(dec); err != nil {
			return nil, err
		}
		sawItems = true
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if !sawItems {
		return nil, errors.New("node list: no items in the response")
	}
	return nodes, nil
}

// decodeItems decodes the items array, each Node into a fresh listedNode (decoding into a used one would merge
// its labels map into the last Node's).
func decodeItems(dec *json.Decoder) ([]NodeInfo, error) {
	if err := expectDelim(dec, '['); err != nil {
		return nil, err
	}
	nodes := []NodeInfo{}
	for dec.More() {
		var n listedNode
		if err := dec.Decode(&n); err != nil {
			return nil, nodeListError(fmt.Errorf("item %d: %w", len(nodes), err))
		}
		nodes = append(nodes, NodeInfo{Name: n.Metadata.Name, Zone: n.Metadata.Labels[ZoneLabel],
			Pool: Pool(n.Metadata.Labels), InternalIP: InternalIP(n.Status.Addresses)})
	}
	return nodes, expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return nodeListError(err)
	}
	if tok != want {
		return fmt.Errorf("node list: want %q, got %v", want, tok)
	}
	return nil
}

// nodeListError says the list is what failed; a body ending early is io.ErrUnexpectedEOF, not a clean end.
func nodeListError(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("node list: %w", err)
}

// Pool is the pool a Node's labels name by PoolLabels, "" when none is set.
func Pool(labels map[string]string) string {
	for _, l := range PoolLabels {
		if v := labels[l]; v != "" {
			return v
		}
	}
	return ""
}

// InternalIP is the first InternalIP among a Node's addresses, "" when it has none.
func InternalIP(addrs []corev1.NodeAddress) string {
	for _, a := range addrs {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}
