package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/wirespeed-io/wirespeed/agent/internal/metrics"
	"github.com/wirespeed-io/wirespeed/agent/internal/nodestatus"
	"github.com/wirespeed-io/wirespeed/agent/internal/probe"
	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
)

// fleetOptions are the continuous probe's flags (agent/README.md, "Continuous probe"). Off by default.
type fleetOptions struct {
	on          bool
	port        int
	peers       int
	streams     int
	rate        float64
	threshold   time.Duration
	interval    time.Duration
	round       time.Duration
	nodeRefresh time.Duration
	procRoot    string
	// staticPeers replaces the Node list (tests, and clusters without the nodes list grant):
	// name=addr[@zone], comma-separated.
	staticPeers string
	// set: the flags given on the command line, which a profile's probe section does not override.
	portSet, peersSet, streamsSet bool
}

// visit records which of the flags the profile's probe section could set were given.
func (f *fleetOptions) visit(fs *flag.FlagSet) {
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "probe-port":
			f.portSet = true
		case "probe-peers":
			f.peersSet = true
		case "probe-streams":
			f.streamsSet = true
		}
	})
}

// fromProfile turns the probe on when the profile has a probe section, its fields the defaults of the flags
// not given, then checks the flags as --probe does.
func (f *fleetOptions) fromProfile(p *profile.Probe) error {
	if p == nil {
		return nil
	}
	f.on = true
	if !f.portSet {
		f.port = p.Port
	}
	if !f.peersSet {
		f.peers = p.Peers
	}
	if !f.streamsSet {
		f.streams = p.Streams
	}
	return f.check()
}

func (f *fleetOptions) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.on, "probe", false, "run the continuous request/response probe: serve it on --probe-port and probe --probe-peers peers chosen among the Nodes")
	fs.IntVar(&f.port, "probe-port", probe.DefaultProbePort, "host `port` the probe serves and dials (allow it between nodes in NetworkPolicy and security groups)")
	fs.IntVar(&f.peers, "probe-peers", probe.DefaultFleetPeers, fmt.Sprintf("peers probed (at most %d), chosen by rendezvous hashing, other zones and pools first", probe.MaxFleetPeers))
	fs.IntVar(&f.streams, "probe-streams", probe.DefaultStreams, "synchronous streams per peer")
	fs.Float64Var(&f.rate, "probe-rate", probe.DefaultFleetRate, "round trips per second per stream")
	fs.DurationVar(&f.threshold, "probe-tail-threshold", probe.DefaultThreshold, "a round trip longer than this is a tail")
	fs.DurationVar(&f.interval, "probe-interval", probe.DefaultInterval, "how often both sides' drop counters are read to name the cause of tails")
	fs.DurationVar(&f.round, "probe-round", probe.DefaultFleetRound, "how long the probe keeps the same peers; tails are counted when a round ends")
	fs.DurationVar(&f.nodeRefresh, "probe-node-refresh", 10*time.Minute, "how often the Nodes are listed to choose the peers")
	fs.StringVar(&f.procRoot, "probe-proc-root", "/proc", "`dir` of the procfs the drop counters are read from (the host's, with hostNetwork)")
	fs.StringVar(&f.staticPeers, "probe-static-peers", "", "probe these `nodes` (name=ip[@zone],...) instead of listing the Nodes")
}

// check validates the flags; only when --probe is on.
func (f *fleetOptions) check() error {
	if !f.on {
		return nil
	}
	o := probeOptions{streams: f.streams, rate: f.rate, duration: f.round, threshold: f.threshold, interval: f.interval, listen: ":" + strconv.Itoa(f.port)}
	var problems []string
	for _, p := range checkProbeOptions(o) {
		problems = append(problems, "--probe-"+p[2:])
	}
	switch {
	case f.peers < 1 || f.peers > probe.MaxFleetPeers:
		problems = append(problems, fmt.Sprintf("--probe-peers %d: must be between 1 and %d", f.peers, probe.MaxFleetPeers))
	case f.round < probe.MinFleetRound || f.round > probe.MaxFleetRound:
		problems = append(problems, fmt.Sprintf("--probe-round %s: must be between %s and %s", f.round, probe.MinFleetRound, probe.MaxFleetRound))
	case f.nodeRefresh < time.Minute:
		problems = append(problems, fmt.Sprintf("--probe-node-refresh %s: must be at least 1m (every agent lists every Node)", f.nodeRefresh))
	}
	if _, err := parseStaticPeers(f.staticPeers); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func parseStaticPeers(s string) ([]probe.Node, error) {
	if s == "" {
		return nil, nil
	}
	var out []probe.Node
	for _, item := range strings.Split(s, ",") {
		name, rest, ok := strings.Cut(item, "=")
		addr, zone, _ := strings.Cut(rest, "@")
		if !ok || name == "" || net.ParseIP(addr) == nil {
			return nil, fmt.Errorf("--probe-static-peers %q: want name=ip[@zone]", item)
		}
		out = append(out, probe.Node{Name: name, Addr: addr, Zone: zone})
	}
	return out, nil
}

// nodeSource lists the Nodes (at most once per refresh), or returns the static peers.
func nodeSource(f fleetOptions, kube *rest.Config) (func(context.Context) ([]probe.Node, error), error) {
	if static, _ := parseStaticPeers(f.staticPeers); static != nil {
		return func(context.Context) ([]probe.Node, error) { return static, nil }, nil
	}
	if kube == nil {
		return nil, fmt.Errorf("--probe needs the Kubernetes report (the Node list) or --probe-static-peers")
	}
	l, err := nodestatus.NewNodeLister(kube)
	if err != nil {
		return nil, err
	}
	var cached []probe.Node
	var at time.Time
	return func(ctx context.Context) ([]probe.Node, error) {
		if cached != nil && time.Since(at) < f.nodeRefresh {
			return cached, nil
		}
		nodes, err := l.List(ctx)
		if err != nil {
			return cached, err
		}
		cached = make([]probe.Node, 0, len(nodes))
		for _, n := range nodes {
			cached = append(cached, probe.Node{Name: n.Name, Zone: n.Zone, Pool: n.Pool, Addr: n.InternalIP})
		}
		at = time.Now()
		return cached, nil
	}, nil
}

// startFleetProbe serves the probe on the host port and runs the rounds until ctx ends. The returned
// handler serves the last round as JSON (/probe, for diagnose); stop waits for both to end.
func startFleetProbe(ctx context.Context, o options, reg prometheus.Registerer, kube *rest.Config,
	log *slog.Logger) (http.Handler, func(), error) {
	f := o.fleet
	nodes, err := nodeSource(f, kube)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	counters, closeCounters := nodeDropCounters(f.procRoot)
	wait, err := serveProbe(ctx, ":"+strconv.Itoa(f.port), counters, log)
	if err != nil {
		cancel()
		closeCounters()
		return nil, nil, err
	}
	fleet := probe.NewFleet(probe.FleetConfig{Self: o.nodeName, Nodes: nodes, Port: f.port, Peers: f.peers,
		Streams: f.streams, Rate: f.rate, Threshold: f.threshold, Interval: f.interval, Round: f.round,
		Counters: counters, Metrics: metrics.NewProbe(reg), Log: log})
	done := make(chan struct{})
	go func() { defer close(done); fleet.Run(ctx) }()
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"last_round": fleet.Last()})
	})
	log.Info("probe: continuous mode", "port", f.port, "peers", f.peers, "streams", f.streams, "rate", f.rate, "round", f.round.String())
	return h, func() { cancel(); <-done; wait(); closeCounters() }, nil
}
