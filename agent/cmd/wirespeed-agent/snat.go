package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/wirespeed-io/wirespeed/agent/internal/metrics"
	"github.com/wirespeed-io/wirespeed/agent/internal/nodestatus"
	"github.com/wirespeed-io/wirespeed/agent/internal/numbers"
	"github.com/wirespeed-io/wirespeed/agent/internal/podowner"
	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat/ctnetlink"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// snatOptions are the outbound SNAT accounting's flags (agent/README.md, "Outbound SNAT").
type snatOptions struct {
	on            bool
	hold          time.Duration
	holdSet       bool // --snat-hold given: it overrides the profile's holds, for TCP and UDP alike
	top           int
	peakWindow    time.Duration
	exclude       cidrList
	maxFlows      int
	clearAfter    time.Duration
	receiveBuffer int
	byWorkload    bool
	workloadTop   int
}

// cidrList is a repeatable CIDR flag.
type cidrList []string

func (c *cidrList) String() string { return strings.Join(*c, ",") }

func (c *cidrList) Set(v string) error {
	if _, err := snat.ParsePrefixes([]string{v}); err != nil {
		return err
	}
	*c = append(*c, v)
	return nil
}

func (s *snatOptions) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.on, "snat", true, "count outbound SNAT ports per destination from conntrack (off by itself when conntrack cannot be read)")
	fs.DurationVar(&s.hold, "snat-hold", time.Duration(profile.DefaultHoldSeconds())*time.Second,
		fmt.Sprintf("how long an ended flow still holds its SNAT port, TCP and UDP alike (default: the profile's "+
			"outbound.tcp_hold_seconds and udp_hold_seconds, else its hold_seconds, else %ds)", profile.DefaultHoldSeconds()))
	fs.IntVar(&s.top, "snat-top", 20, "destinations named in the metrics; the rest are summed as \"other\"")
	fs.DurationVar(&s.peakWindow, "snat-peak-window", 24*time.Hour, "span of wirespeed_agent_snat_ports_peak")
	fs.Var(&s.exclude, "snat-exclude-cidr", "cluster-internal `CIDR` never counted as a destination (repeatable; added to the profile's outbound.exclude_cidrs)")
	fs.IntVar(&s.maxFlows, "snat-max-flows", 262144, "bound on tracked outbound flows (memory); past it flows are counted in wirespeed_agent_snat_untracked_flows_total only")
	fs.DurationVar(&s.clearAfter, "snat-pressure-clear-after", 5*time.Minute, "how long the busiest destination must stay below the threshold before SNATPortPressure turns False")
	fs.BoolVar(&s.byWorkload, "snat-by-workload", true, "attribute SNAT ports to the workloads of this node's pods (a watch of the Pods on this node; needs the Kubernetes report)")
	fs.IntVar(&s.workloadTop, "snat-workload-top", numbers.SNATWorkloadTop, "(workload, destination) pairs named in wirespeed_agent_snat_ports_in_use_by_workload; the rest are summed as workload=\"other\"")
	fs.IntVar(&s.receiveBuffer, "snat-receive-buffer", 4<<20, "conntrack event socket receive buffer in `bytes` (past it events are lost and the table is dumped again)")
}

// check validates the SNAT flags after parsing.
func (s *snatOptions) check(fs *flag.FlagSet) error {
	fs.Visit(func(f *flag.Flag) { s.holdSet = s.holdSet || f.Name == "snat-hold" })
	switch {
	case s.hold < 0 || s.hold > time.Hour:
		return fmt.Errorf("--snat-hold %s: must be between 0s and 1h", s.hold)
	case s.top < 1 || s.top > 1000:
		return fmt.Errorf("--snat-top %d: must be between 1 and 1000", s.top)
	case s.peakWindow < time.Second || s.peakWindow > 31*24*time.Hour:
		return fmt.Errorf("--snat-peak-window %s: must be between 1s and 744h (31 days)", s.peakWindow)
	case s.maxFlows < 1:
		return fmt.Errorf("--snat-max-flows %d: must be at least 1", s.maxFlows)
	case s.clearAfter < 0:
		return fmt.Errorf("--snat-pressure-clear-after %s: must not be negative", s.clearAfter)
	case s.workloadTop < 1 || s.workloadTop > 1000:
		return fmt.Errorf("--snat-workload-top %d: must be between 1 and 1000", s.workloadTop)
	case s.receiveBuffer < 0:
		return fmt.Errorf("--snat-receive-buffer %d: must not be negative", s.receiveBuffer)
	}
	return nil
}

// snatConfig is the accounting's configuration: the profile's outbound section with the flags on top.
func snatConfig(s snatOptions, p *profile.Profile) (snat.Config, error) {
	cidrs := append([]string{}, s.exclude...)
	tcpHold, udpHold, udpOnePool := s.hold, s.hold, false
	if o := p.Outbound; o != nil {
		cidrs = append(cidrs, o.ExcludeCIDRs...)
		udpOnePool = o.UDPOnePool()
		if !s.holdSet {
			tcpHold = time.Duration(o.TCPHold()) * time.Second
			udpHold = time.Duration(o.UDPHold()) * time.Second
		}
	}
	extra, err := snat.ParsePrefixes(cidrs)
	if err != nil {
		return snat.Config{}, err
	}
	return snat.Config{Classifier: snat.NewClassifier(extra, udpOnePool), TCPHold: tcpHold, UDPHold: udpHold, Top: s.top,
		PeakWindow: s.peakWindow, MaxTracked: s.maxFlows}, nil
}

// startSNAT runs the accounting until ctx ends; the returned func waits for it. When conntrack cannot be
// read (no CAP_NET_ADMIN, no nf_conntrack) it logs why and runs nothing: tuning goes on without it.
func startSNAT(ctx context.Context, o options, p *profile.Profile, reg prometheus.Registerer,
	reporter *nodestatus.Reporter, kube *rest.Config, log *slog.Logger) func() {
	log = log.With("component", "snat")
	cfg, err := snatConfig(o.snat, p)
	if err != nil {
		log.Error("SNAT accounting off", "err", err)
		return func() {}
	}
	var wg sync.WaitGroup
	src := ctnetlink.Conntrack{ReceiveBuffer: o.snat.receiveBuffer, Timeouts: ctnetlink.ReadTimeouts(o.procSysRoot),
		Classifier: &cfg.Classifier}
	probe, err := src.Subscribe()
	if err != nil {
		log.Warn("SNAT accounting off: cannot read conntrack", "err", err)
		return func() {}
	}
	_ = probe.Close()
	m := metrics.NewSNAT(reg)
	pressure := &nodestatus.Pressure{Outbound: p.Outbound, ClearAfter: o.snat.clearAfter}
	var last *status.SNAT
	w := &snat.Watcher{
		Source: src, Log: log, Resynced: m.Resynced,
		Ticked: func(s snat.Snapshot) {
			s.ConntrackEntries = conntrackCount(o.procSysRoot)
			v := pressure.Update(s)
			m.Observe(s, v)
			if reporter != nil {
				reporter.SNAT(ctx, v)
			}
			logPressure(log, last, v)
			last = &v
		},
	}
	if o.snat.byWorkload && kube != nil {
		cfg.Attributor, cfg.WorkloadTop = watchPods(ctx, &wg, kube, o.nodeName, log), o.snat.workloadTop
	}
	w.Table = snat.NewTable(cfg, time.Now())
	log.Info("SNAT accounting on", "tcp_hold", cfg.TCPHold.String(), "udp_hold", cfg.UDPHold.String(), "top", cfg.Top,
		"capacity", pressureCapacity(p), "by_workload", cfg.Attributor != nil)
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.Run(ctx)
	}()
	if reporter != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			readZone(ctx, reporter, m, log)
		}()
	}
	return wg.Wait
}

// watchPods starts the watch of this node's pods that attributes flows to workloads; nil when its client
// cannot be made (the accounting then runs per destination only).
func watchPods(ctx context.Context, wg *sync.WaitGroup, kube *rest.Config, node string, log *slog.Logger) snat.Attributor {
	log = log.With("component", "podowner")
	rc, err := nodestatus.NewCoreV1Client(kube)
	if err != nil {
		log.Error("SNAT attribution off", "err", err)
		return nil
	}
	history := podowner.NewHistory(node)
	pw := &podowner.Watch{Node: node, History: history, Owners: &podowner.Owners{Get: podowner.NewGetter(rc)}, Log: log}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := pw.Run(ctx, rc); err != nil {
			log.Error("pod watch", "err", err)
		}
	}()
	return history
}

func pressureCapacity(p *profile.Profile) int {
	if p.Outbound == nil {
		return 0
	}
	return p.Outbound.Capacity()
}

func logPressure(log *slog.Logger, last *status.SNAT, v status.SNAT) {
	if v.Capacity == 0 || (last != nil && last.Pressure == v.Pressure) {
		return
	}
	if v.Pressure {
		log.Warn("SNAT port pressure", "message", v.Message)
	} else if last != nil {
		log.Info("SNAT port pressure relieved", "message", v.Message)
	}
}

// conntrackCount reads nf_conntrack_count (the table's size, per network namespace); -1 when unreadable.
func conntrackCount(procSys string) int {
	b, err := os.ReadFile(filepath.Join(procSys, "net", "netfilter", "nf_conntrack_count"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// readZone labels the SNAT metrics with the Node's zone, retrying (1 s doubling to 5 min) until the API
// server answers: the zone never changes, so one answer is enough.
func readZone(ctx context.Context, reporter *nodestatus.Reporter, m *metrics.SNAT, log *slog.Logger) {
	delay := time.Second
	for {
		zone, err := reporter.Zone(ctx)
		if err == nil {
			m.SetZone(zone)
			log.Info("zone", "zone", zone)
			return
		}
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return
		}
		log.Debug("zone not read yet", "err", err, "retry_in", delay.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Minute)
	}
}
