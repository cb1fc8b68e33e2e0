package probe

import (
	"fmt"
	"slices"
	"testing"
)

func fleet(n int) []Node {
	zones := []string{"z1", "z2", "z3"}
	pools := []string{"net", "general"}
	out := make([]Node, n)
	for i := range out {
		out[i] = Node{Name: fmt.Sprintf("node-%04d", i), Zone: zones[i%3], Pool: pools[(i/3)%2], Addr: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)}
	}
	return out
}

func names(ns []Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out
}

func TestSelectPeersIsDeterministicBoundedAndNeverSelf(t *testing.T) {
	nodes := fleet(100)
	self := nodes[0]
	a := SelectPeers(self, nodes, DefaultFleetPeers)
	rev := slices.Clone(nodes)
	slices.Reverse(rev)
	b := SelectPeers(self, rev, DefaultFleetPeers)
	if !slices.Equal(names(a), names(b)) {
		t.Fatalf("order of the node list changed the peers: %v vs %v", names(a), names(b))
	}
	if len(a) != DefaultFleetPeers {
		t.Fatalf("want %d peers, got %d", DefaultFleetPeers, len(a))
	}
	for _, p := range a {
		if p.Name == self.Name {
			t.Fatal("chose itself")
		}
	}
	if got := SelectPeers(self, nodes[:3], 8); len(got) != 2 {
		t.Fatalf("3 nodes: want the other 2, got %v", names(got))
	}
	if got := SelectPeers(self, []Node{self, {Name: "no-addr", Zone: "z9"}}, 8); len(got) != 0 {
		t.Fatalf("a node without an address was chosen: %v", names(got))
	}
}

// With enough nodes in other zones and pools, every peer is in another zone and another pool.
func TestSelectPeersPrefersOtherZonesAndPools(t *testing.T) {
	nodes := fleet(60)
	self := nodes[0] // z1, net
	for _, p := range SelectPeers(self, nodes, 8) {
		if p.Zone == self.Zone || p.Pool == self.Pool {
			t.Errorf("peer %s in zone %s pool %s: want another zone and pool than %s/%s", p.Name, p.Zone, p.Pool, self.Zone, self.Pool)
		}
	}
	// Only same-zone same-pool nodes left: they are still chosen.
	same := []Node{self, {Name: "b", Zone: "z1", Pool: "net", Addr: "10.1.0.2"}}
	if got := SelectPeers(self, same, 8); len(got) != 1 {
		t.Fatalf("want the one same-zone peer, got %v", names(got))
	}
}

// A node joining moves at most one peer of any node (it displaces the lowest-ranked), and most nodes' peers
// do not move at all; a node leaving changes only the peers of the nodes that had it.
func TestSelectPeersMovesFewPeersWhenANodeJoinsOrLeaves(t *testing.T) {
	nodes := fleet(300)
	joined := append(slices.Clone(nodes), Node{Name: "node-new", Zone: "z2", Pool: "general", Addr: "10.9.9.9"})
	moved, changedNodes := 0, 0
	for _, self := range nodes {
		before := names(SelectPeers(self, nodes, DefaultFleetPeers))
		after := names(SelectPeers(self, joined, DefaultFleetPeers))
		n := 0
		for _, p := range after {
			if !slices.Contains(before, p) {
				n++
			}
		}
		if n > 1 {
			t.Fatalf("%s: %d peers moved when one node joined: %v -> %v", self.Name, n, before, after)
		}
		moved += n
		if n > 0 {
			changedNodes++
		}
	}
	// The new node is a peer of about P/(candidates in its tier) of the nodes: a few percent, not all.
	if changedNodes > len(nodes)/5 {
		t.Fatalf("%d of %d nodes changed a peer when one node joined", changedNodes, len(nodes))
	}
	t.Logf("one node joined: %d of %d nodes changed one peer (%d peers moved of %d)", changedNodes, len(nodes), moved, len(nodes)*DefaultFleetPeers)
	left := slices.Delete(slices.Clone(nodes), 7, 8)
	for _, self := range left {
		before := SelectPeers(self, nodes, DefaultFleetPeers)
		after := names(SelectPeers(self, left, DefaultFleetPeers))
		if !slices.ContainsFunc(before, func(n Node) bool { return n.Name == nodes[7].Name }) &&
			!slices.Equal(names(before), after) {
			t.Fatalf("%s: peers changed though the node that left was not one: %v -> %v", self.Name, names(before), after)
		}
	}
}
