package probe

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

type fakeFleetMetrics struct {
	mu         sync.Mutex
	peers      [][]string
	roundTrips map[string]int
	rounds     int
	bySide     map[string]map[string]uint64
}

func (m *fakeFleetMetrics) Peers(_ Node, peers []Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.peers = append(m.peers, names(peers))
}

func (m *fakeFleetMetrics) RoundTrips(_ Node, peer Node) func(time.Duration) {
	return func(time.Duration) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.roundTrips[peer.Name]++
	}
}

func (m *fakeFleetMetrics) Round(_ Node, _ []Node, rep Report) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rounds++
	m.bySide = rep.CausesBySide
}

// The continuous mode chooses its peers from the Node list (never itself), probes each on the configured port
// with the counters exchange on, and reports every round trip and each round; a peer whose backlog counter
// rose while its answer was slow gets the tail as backlog on the peer side.
func TestFleetProbesTheChosenPeersRoundAfterRound(t *testing.T) {
	var mu sync.Mutex
	var backlog uint64
	peerCounters := func() (map[string]uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		backlog += 3 // rises in every interval: every tail is the peer's backlog
		return map[string]uint64{"backlog": backlog}, nil
	}
	_, addr := serve(t, ServerConfig{Counters: peerCounters})
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	nodes := []Node{{Name: "self", Zone: "z1", Addr: "127.0.0.9"}, {Name: "peer", Zone: "z2", Addr: host},
		{Name: "no-address", Zone: "z3"}}
	m := &fakeFleetMetrics{roundTrips: map[string]int{}}
	f := NewFleet(FleetConfig{Self: "self", Nodes: func(context.Context) ([]Node, error) { return nodes, nil },
		Port: p, Peers: 8, Streams: 2, Rate: 20, Threshold: time.Nanosecond, Interval: 250 * time.Millisecond,
		Round: 500 * time.Millisecond, Metrics: m,
		Counters: func() (map[string]uint64, error) { return map[string]uint64{"backlog": 0}, nil }})
	ctx, cancel := context.WithTimeout(context.Background(), 1300*time.Millisecond)
	defer cancel()
	f.Run(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rounds < 2 || len(m.peers) < 2 || len(m.peers[0]) != 1 || m.peers[0][0] != "peer" {
		t.Fatalf("rounds %d, peers per round %v: want 2 rounds of [peer]", m.rounds, m.peers)
	}
	if m.roundTrips["peer"] < 20 {
		t.Fatalf("%d round trips to peer in 2 rounds of 2 streams at 20/s", m.roundTrips["peer"])
	}
	// A threshold of 1 ns makes every round trip a tail; the peer's backlog rose in every interval.
	if m.bySide["peer"]["backlog"] == 0 || len(m.bySide) != 1 {
		t.Fatalf("causes by side %v: want all on the peer's backlog", m.bySide)
	}
	last := f.Last()
	if last == nil || last.Self.Zone != "z1" || last.Report.Peers[0].PeerCountersError != "" {
		t.Fatalf("last round %+v", last)
	}
}
