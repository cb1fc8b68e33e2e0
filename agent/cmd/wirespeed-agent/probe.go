package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/diagnose"
	"github.com/wirespeed-io/wirespeed/agent/internal/ethioctl"
	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/probe"
)

// Exit codes of `wirespeed-agent probe`.
const (
	probeOK         = 0
	probeUnanswered = 1 // a peer answered no round trip
	probeUsage      = 2
)

type probeOptions struct {
	listen    string
	peers     []string
	streams   int
	duration  time.Duration
	rate      float64
	threshold time.Duration
	interval  time.Duration
	procRoot  string
	json      bool
	// peerCounters asks each peer for its counters' deltas, so the report names the side of each cause.
	peerCounters bool
}

// parseProbeFlags checks every flag and reports all problems at once.
func parseProbeFlags(args []string, stderr io.Writer) (probeOptions, error) {
	var o probeOptions
	var peers string
	fs := flag.NewFlagSet("wirespeed-agent probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "", "serve probe round trips on `addr` (host:port or :port)")
	fs.StringVar(&peers, "peer", "", "probe these `addrs` (host:port, comma-separated)")
	fs.IntVar(&o.streams, "streams", probe.DefaultStreams, "synchronous streams per peer")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long to probe")
	fs.Float64Var(&o.rate, "rate", probe.DefaultRate, "round trips per second per stream")
	fs.DurationVar(&o.threshold, "tail-threshold", probe.DefaultThreshold, "a round trip longer than this is a tail")
	fs.DurationVar(&o.interval, "interval", probe.DefaultInterval, "how often the node's drop counters are read to name the cause of tails")
	fs.StringVar(&o.procRoot, "proc-root", "/proc", "`dir` of the procfs to read drop counters from (the host's, with hostNetwork)")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.BoolVar(&o.peerCounters, "peer-counters", false, "ask each peer for its drop counters' deltas every --interval, to name the side (local or peer) of each tail's cause")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var problems []string
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Sprintf("unexpected arguments: %v", fs.Args()))
	}
	if peers != "" {
		o.peers = strings.Split(peers, ",")
	}
	problems = append(problems, checkProbeOptions(o)...)
	if len(problems) > 0 {
		return o, errors.New(strings.Join(problems, "; "))
	}
	return o, nil
}

func checkProbeOptions(o probeOptions) []string {
	var p []string
	if o.listen == "" && len(o.peers) == 0 {
		p = append(p, "nothing to do: give --listen ADDR (serve), --peer ADDR[,ADDR...] (probe), or both")
	}
	if o.listen != "" {
		if err := checkHostPort(o.listen); err != nil {
			p = append(p, fmt.Sprintf("--listen %q: %v (want host:port or :port)", o.listen, err))
		}
	}
	p = append(p, checkPeers(o.peers)...)
	if o.streams < 1 || o.streams > probe.MaxStreams {
		p = append(p, fmt.Sprintf("--streams %d: must be between 1 and %d", o.streams, probe.MaxStreams))
	}
	if o.rate < probe.MinRate || o.rate > probe.MaxRate {
		p = append(p, fmt.Sprintf("--rate %g: must be between %g and %g round trips/s per stream", o.rate, probe.MinRate, probe.MaxRate))
	} else if total := float64(o.streams) * o.rate; total > probe.MaxRoundTripRate {
		p = append(p, fmt.Sprintf("--streams %d x --rate %g = %g round trips/s per peer: at most %d (the probe server's limit per source)",
			o.streams, o.rate, total, probe.MaxRoundTripRate))
	}
	if o.duration < probe.MinDuration || o.duration > probe.MaxDuration {
		p = append(p, fmt.Sprintf("--duration %s: must be between %s and %s", o.duration, probe.MinDuration, probe.MaxDuration))
	}
	if o.interval < probe.MinInterval || o.interval > probe.MaxInterval {
		p = append(p, fmt.Sprintf("--interval %s: must be between %s and %s", o.interval, probe.MinInterval, probe.MaxInterval))
	}
	if o.threshold < probe.MinThreshold || o.threshold > probe.MaxThreshold {
		p = append(p, fmt.Sprintf("--tail-threshold %s: must be between %s and %s", o.threshold, probe.MinThreshold, probe.MaxThreshold))
	}
	return p
}

func checkPeers(peers []string) []string {
	var p []string
	if len(peers) > probe.MaxPeers {
		p = append(p, fmt.Sprintf("--peer: %d peers: at most %d", len(peers), probe.MaxPeers))
	}
	seen := map[string]bool{}
	for _, peer := range peers {
		err := checkHostPort(peer)
		if err == nil && strings.HasPrefix(peer, ":") {
			err = errors.New("no host")
		}
		switch {
		case err != nil:
			p = append(p, fmt.Sprintf("--peer %q: %v (want host:port)", peer, err))
		case seen[peer]:
			p = append(p, fmt.Sprintf("--peer %q: given twice", peer))
		}
		seen[peer] = true
	}
	return p
}

func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: must be between 1 and 65535", port)
	}
	return nil
}

// runProbe is `wirespeed-agent probe`: serve probe round trips (--listen), probe peers (--peer), or both.
func runProbe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseProbeFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return probeOK
		}
		fmt.Fprintf(stderr, "probe: error: %v\n", err)
		return probeUsage
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	counters, closeCounters := nodeDropCounters(o.procRoot)
	defer closeCounters()
	if o.listen != "" {
		wait, err := serveProbe(ctx, o.listen, counters, log)
		if err != nil {
			fmt.Fprintf(stderr, "probe: error: %v\n", err)
			return probeUsage
		}
		defer func() { stop(); wait() }()
	}
	if len(o.peers) == 0 {
		<-ctx.Done()
		return probeOK
	}
	rep := probe.Run(ctx, probe.Config{Peers: o.peers, Streams: o.streams, Rate: o.rate, Duration: o.duration,
		Threshold: o.threshold, Interval: o.interval, Counters: counters, PeerCounters: o.peerCounters})
	if err := writeProbeReport(stdout, rep, o.json); err != nil {
		fmt.Fprintf(stderr, "probe: write: %v\n", err)
		return probeUnanswered
	}
	if failed := rep.Failed(); len(failed) > 0 {
		fmt.Fprintf(stderr, "probe: no round trip with %s\n", strings.Join(failed, ", "))
		return probeUnanswered
	}
	return probeOK
}

// nodeDropCounters reads this node's drop counters as diagnose does (softnet, links and their drivers'
// curated counters, conntrack), summed by cause. Without the ethtool socket it still reads the rest.
func nodeDropCounters(procRoot string) (probe.DropCounters, func()) {
	et, err := ethioctl.Open()
	if err != nil {
		return func() (map[string]uint64, error) { return nil, fmt.Errorf("ethtool socket: %w", err) }, func() {}
	}
	src := diagnose.System{
		ProcRoot:   procRoot,
		Discoverer: links.Discoverer{NL: links.NewNetlink(nil, nil), Drivers: et},
		Stats:      et.Stats,
		Ring:       et.GetRing,
	}
	read := func() (map[string]uint64, error) {
		s, err := diagnose.Take(src, time.Now())
		if err != nil {
			return nil, err
		}
		return diagnose.DropTotals(s), nil
	}
	return read, func() { _ = et.Close() }
}

// serveProbe answers probe round trips, and counters requests from counters, on addr until ctx ends; wait
// returns once the server has stopped.
func serveProbe(ctx context.Context, addr string, counters probe.DropCounters, log *slog.Logger) (wait func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", addr, err)
	}
	log.Info("probe serving", "addr", ln.Addr().String())
	srv := probe.NewServer(probe.ServerConfig{Counters: counters, Log: log})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Error("probe listener", "err", err)
		}
	}()
	return func() { <-done }, nil
}

func writeProbeReport(w io.Writer, rep probe.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	for _, r := range append([]probe.Result{rep.Result}, rep.Peers...) {
		name := r.Peer
		if name == "" {
			name = "all peers"
		}
		if _, err := fmt.Fprintf(w, "%s: %d round trips, %d tails (%d with a retransmission), %d retransmits, p50 %s p99 %s p99.9 %s p99.99 %s, causes %v, %d errors\n",
			name, r.RoundTrips, r.Tails, r.TailsWithRetransmit, r.Retransmits, ms(r.Percentiles.P50), ms(r.Percentiles.P99),
			ms(r.Percentiles.P999), ms(r.Percentiles.P9999), r.Causes, r.Errors); err != nil {
			return err
		}
	}
	return nil
}

func ms(s *float64) string {
	if s == nil {
		return "-"
	}
	return strconv.FormatFloat(*s*1000, 'g', 3, 64) + " ms"
}
