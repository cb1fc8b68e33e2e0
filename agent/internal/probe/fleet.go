package probe

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/wirespeed-io/wirespeed/agent/internal/numbers"
)

// The continuous mode's defaults and bounds (issue 30 item 1).
const (
	// DefaultFleetRound is how long one round probes the same peers before the list of Nodes is read again
	// and the tails of the round are attributed and counted: the tails metric trails by at most a round.
	DefaultFleetRound = time.Minute
	MinFleetRound     = 5 * time.Second
	MaxFleetRound     = time.Hour
	// DefaultFleetRate is round trips/s per stream: 8 peers x 4 streams x 1/s = 32 round trips/s. The rate,
	// not the 1-byte payload, sets the bandwidth: at 2/s a node measured 79 kb/s out and 42 kb/s in for its
	// own streams and ~118 kb/s each way once it also answered its peers' (bench/agent/RESULTS.md, "Continuous
	// probe cost"), over the 100 kb/s per node the probe may spend. 1/s still gives 2.7 million round trips a
	// node a day, enough for p99.99 per node and pool (wirespeed prove's minimum is 100,000).
	DefaultFleetRate = 1.0
	// DefaultProbePort is the host port the continuous mode serves and dials, next to the metrics port
	// (numbers.MetricsPort), and a flag: written from its home in wirespeed.profile.model.
	DefaultProbePort = numbers.ProbePort
)

// FleetMetrics is where the continuous mode puts what it sees (internal/metrics.Probe).
type FleetMetrics interface {
	// Peers are the peers of the round starting now: series of any other peer are removed.
	Peers(self Node, peers []Node)
	// RoundTrips is where the round trips to peer go this round: looked up once per round and peer, then
	// called with every round trip as it ends (from the streams' goroutines at once).
	RoundTrips(self, peer Node) func(rtt time.Duration)
	// Round is one round's report, rep.Peers[i] the round's peers[i].
	Round(self Node, peers []Node, rep Report)
}

// FleetConfig is the continuous mode.
type FleetConfig struct {
	Self      string                                    // this node's name
	Nodes     func(ctx context.Context) ([]Node, error) // every Node the agent can see (its own among them)
	Port      int
	Peers     int
	Streams   int
	Rate      float64
	Threshold time.Duration
	Interval  time.Duration
	Round     time.Duration
	Counters  DropCounters
	Metrics   FleetMetrics
	Clock     clock.Clock
	Log       *slog.Logger
	// Dial as Config.Dial (tests).
	Dial func(ctx context.Context, addr string) (net.Conn, error)
}

// Fleet runs the continuous mode's client side; Last is the latest round's report, for diagnose.
type Fleet struct {
	cfg  FleetConfig
	mu   sync.Mutex
	last *FleetRound
}

// FleetRound is one finished round: when, which peers, and the report.
type FleetRound struct {
	Ended  time.Time `json:"ended"`
	Self   Node      `json:"self"`
	Peers  []Node    `json:"peers"`
	Report Report    `json:"report"`
}

// NewFleet fills cfg's defaults.
func NewFleet(cfg FleetConfig) *Fleet {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Fleet{cfg: cfg}
}

// Last is the latest finished round, nil before the first.
func (f *Fleet) Last() *FleetRound {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// Run probes round after round until ctx ends: each round reads the Nodes, chooses the peers by
// SelectPeers, probes them for Round with PeerCounters on, then counts the round's tails by cause and side.
// A round without peers (a one-node cluster, an unreadable Node list) waits one Round and tries again.
func (f *Fleet) Run(ctx context.Context) {
	for ctx.Err() == nil {
		self, peers, err := f.choose(ctx)
		if err != nil || len(peers) == 0 {
			if err != nil {
				f.cfg.Log.Warn("probe: no peers this round", "err", err)
			}
			select {
			case <-f.cfg.Clock.After(f.cfg.Round):
			case <-ctx.Done():
			}
			continue
		}
		f.round(ctx, self, peers)
	}
}

func (f *Fleet) choose(ctx context.Context) (Node, []Node, error) {
	nodes, err := f.cfg.Nodes(ctx)
	if err != nil {
		return Node{}, nil, fmt.Errorf("list nodes: %w", err)
	}
	self := Node{Name: f.cfg.Self}
	for _, n := range nodes {
		if n.Name == f.cfg.Self {
			self = n
		}
	}
	return self, SelectPeers(self, nodes, f.cfg.Peers), nil
}

func (f *Fleet) round(ctx context.Context, self Node, peers []Node) {
	addrs := make([]string, len(peers))
	for i, p := range peers {
		addrs[i] = net.JoinHostPort(p.Addr, strconv.Itoa(f.cfg.Port))
	}
	if f.cfg.Metrics != nil {
		f.cfg.Metrics.Peers(self, peers)
	}
	cfg := Config{Peers: addrs, Streams: f.cfg.Streams, Rate: f.cfg.Rate, Duration: f.cfg.Round,
		Threshold: f.cfg.Threshold, Counters: f.cfg.Counters, PeerCounters: true, Interval: f.cfg.Interval,
		Clock: f.cfg.Clock, Dial: f.cfg.Dial}
	if f.cfg.Metrics != nil {
		observe := make([]func(time.Duration), len(peers))
		for i, p := range peers {
			observe[i] = f.cfg.Metrics.RoundTrips(self, p)
		}
		cfg.OnRoundTrip = func(i int, rtt time.Duration) { observe[i](rtt) }
	}
	rep := Run(ctx, cfg)
	if ctx.Err() != nil {
		// Stopped mid-round (the agent is shutting down): the counters were not read at its end, so its
		// tails could not be attributed; it is not counted (its round trips are in the histogram already).
		return
	}
	if f.cfg.Metrics != nil {
		f.cfg.Metrics.Round(self, peers, rep)
	}
	f.mu.Lock()
	f.last = &FleetRound{Ended: f.cfg.Clock.Now(), Self: self, Peers: peers, Report: rep}
	f.mu.Unlock()
	if rep.Tails > 0 {
		f.cfg.Log.Info("probe round", "round_trips", rep.RoundTrips, "tails", rep.Tails, "causes_by_side", rep.CausesBySide)
	}
}
