package probe

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"

	"github.com/wirespeed-io/wirespeed/agent/internal/numbers"
)

// DefaultFleetPeers and MaxFleetPeers bound the continuous mode's peers per node: P peers x S streams
// connections out of every node, never N-1, so a 5,000-node fleet is not N² connections (issue 30). Both are
// written from their home in wirespeed.profile.model, whose profile schema bounds the probe section the same.
const (
	DefaultFleetPeers = numbers.ProbePeers
	MaxFleetPeers     = numbers.ProbeMaxPeers
)

// Node is a Node the agent can see, as the continuous mode needs it.
type Node struct {
	Name string `json:"name"`
	Zone string `json:"zone"` // topology.kubernetes.io/zone
	Pool string `json:"pool"` // the node pool (nodestatus.PoolLabels), "" when none names it
	Addr string `json:"addr"` // InternalIP, without the port
}

// tier orders candidates for self: another zone and another pool first, then another zone or another pool,
// then the same zone and pool. A zone or pool the agent cannot see ("") counts as the same.
func tier(self, n Node) int {
	t := 2
	if n.Zone != self.Zone {
		t--
	}
	if n.Pool != self.Pool {
		t--
	}
	return t
}

// weight is the rendezvous (highest random weight) score of candidate for self: a hash of both names, so
// every agent computes it alone, the same on every run, and a node that joins or leaves changes only its own
// score (Thaler and Ravishankar, "Using name-based mappings to increase hit rates", IEEE/ACM ToN 6(1), 1998).
func weight(self, candidate string) uint64 {
	h := sha256.New()
	h.Write([]byte(self))
	h.Write([]byte{0})
	h.Write([]byte(candidate))
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}

// SelectPeers chooses at most p peers of self among nodes by rendezvous hashing: the candidates in the best
// tier first (another zone and pool), by descending weight. Nodes without an address and self are never
// chosen; the order of nodes does not matter. A node joining displaces at most one peer (the chosen one with
// the lowest rank), one leaving is replaced by at most one: the probes stay on the pairs they were on.
func SelectPeers(self Node, nodes []Node, p int) []Node {
	type cand struct {
		n Node
		t int
		w uint64
	}
	var cs []cand
	seen := map[string]bool{self.Name: true}
	for _, n := range nodes {
		if n.Addr == "" || seen[n.Name] {
			continue
		}
		seen[n.Name] = true
		cs = append(cs, cand{n: n, t: tier(self, n), w: weight(self.Name, n.Name)})
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.t != b.t {
			return a.t - b.t
		}
		switch {
		case a.w > b.w:
			return -1
		case a.w < b.w:
			return 1
		}
		return 0
	})
	out := make([]Node, 0, min(p, len(cs)))
	for _, c := range cs[:min(p, len(cs))] {
		out = append(out, c.n)
	}
	return out
}
