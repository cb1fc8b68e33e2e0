package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/diagnose"
	"github.com/wirespeed-io/wirespeed/agent/internal/ethioctl"
	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/numbers"
	"github.com/wirespeed-io/wirespeed/agent/internal/probe"
	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat/ctnetlink"
)

// Exit codes of `wirespeed-agent diagnose`.
const (
	diagnoseNothing    = 0
	diagnoseFindings   = 1
	diagnoseCannotRead = 2 // a counter every diagnosis needs could not be read, or bad flags
)

// runDiagnose is `wirespeed-agent diagnose [--interval 10s] [--json]`: sample every counter twice over the
// interval and name the known causes that moved, with the setting that fixes each.
func runDiagnose(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wirespeed-agent diagnose", flag.ContinueOnError)
	fs.SetOutput(stderr)
	interval := fs.Duration("interval", 10*time.Second, "time between the two samples")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	procRoot := fs.String("proc-root", "/proc", "`dir` of the procfs to read (the host's, with hostNetwork)")
	sysRoot := fs.String("sys-root", "/sys", "`dir` holding the host's sysfs (SR-IOV physfn, driver fallback)")
	profilePath := fs.String("profile", "", "profile JSON `file`: with an outbound section, SNAT pressure becomes a finding")
	probeFrom := fs.String("probe-from", "http://127.0.0.1:"+strconv.Itoa(numbers.MetricsPort)+"/probe",
		"`url` of the daemon's continuous probe (its --listen, /probe); nothing is shown when it does not answer; empty skips it")
	var so snatOptions
	so.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return diagnoseNothing
		}
		return diagnoseCannotRead
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "diagnose: unexpected arguments: %v\n", fs.Args())
		return diagnoseCannotRead
	}
	if *interval <= 0 {
		fmt.Fprintf(stderr, "diagnose: --interval %s: must be positive\n", *interval)
		return diagnoseCannotRead
	}
	p := &profile.Profile{}
	if err := so.check(fs); err != nil {
		fmt.Fprintf(stderr, "diagnose: %v\n", err)
		return diagnoseCannotRead
	}
	if *profilePath != "" {
		var err error
		if p, err = profile.Load(*profilePath); err != nil {
			fmt.Fprintf(stderr, "diagnose: %v\n", err)
			return diagnoseCannotRead
		}
	}
	et, err := ethioctl.Open()
	if err != nil {
		fmt.Fprintf(stderr, "diagnose: cannot read: %v\n", err)
		return diagnoseCannotRead
	}
	defer func() { _ = et.Close() }()
	src := diagnose.System{
		ProcRoot:   *procRoot,
		Discoverer: links.Discoverer{NL: links.NewNetlink(nil, nil), Drivers: et, Sysfs: links.Sysfs{Root: *sysRoot}},
		Stats:      et.Stats,
		Ring:       et.GetRing,
	}
	sampled := sampleSNAT(ctx, so, p, *procRoot, *interval)
	res, err := diagnose.Run(ctx, src, *interval, time.Now)
	if err != nil {
		fmt.Fprintf(stderr, "diagnose: %v\n", err)
		return diagnoseCannotRead
	}
	if s := <-sampled; s.err != nil {
		res.Unavailable = append(res.Unavailable, "outbound SNAT: "+s.err.Error())
	} else if s.ok {
		diagnose.AddSNAT(&res, s.res, p.Outbound)
	}
	addProbe(ctx, &res, *probeFrom)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = diagnose.WriteText(stdout, res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "diagnose: write: %v\n", err)
		return diagnoseCannotRead
	}
	if len(res.Findings) > 0 {
		return diagnoseFindings
	}
	return diagnoseNothing
}

type sampled struct {
	res snat.SampleResult
	ok  bool
	err error
}

// sampleSNAT follows conntrack over the interval in the background (nothing when --snat=false).
func sampleSNAT(ctx context.Context, so snatOptions, p *profile.Profile, procRoot string, interval time.Duration) <-chan sampled {
	out := make(chan sampled, 1)
	if !so.on {
		out <- sampled{}
		return out
	}
	cfg, err := snatConfig(so, p)
	if err != nil {
		out <- sampled{err: err}
		return out
	}
	src := ctnetlink.Conntrack{ReceiveBuffer: so.receiveBuffer, Timeouts: ctnetlink.ReadTimeouts(filepath.Join(procRoot, "sys")),
		Classifier: &cfg.Classifier}
	go func() {
		res, err := snat.Sample(ctx, src, cfg, interval)
		out <- sampled{res: res, ok: err == nil, err: err}
	}()
	return out
}

// addProbe adds the daemon's last probe round at url to res (nothing when url is empty).
func addProbe(ctx context.Context, res *diagnose.Result, url string) {
	if url == "" {
		return
	}
	if round, err := fetchProbeRound(ctx, url); err != nil {
		res.Unavailable = append(res.Unavailable, "probe: "+err.Error())
	} else {
		res.Probe = round
	}
}

// fetchProbeRound reads the daemon's last probe round from url. No daemon there (connection refused), a
// daemon without --probe (404) or no round yet is (nil, nil): nothing to show. The answer is bounded (1 MiB).
func fetchProbeRound(ctx context.Context, url string) (*diagnose.ProbeRound, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, nil
		}
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	var body struct {
		Last *probe.FleetRound `json:"last_round"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	if body.Last == nil {
		return nil, nil
	}
	return probeRound(body.Last, time.Now()), nil
}

func probeRound(l *probe.FleetRound, now time.Time) *diagnose.ProbeRound {
	r := l.Report
	out := &diagnose.ProbeRound{EndedSecondsAgo: now.Sub(l.Ended).Seconds(), DurationSeconds: r.DurationSeconds,
		ProbePeer: diagnose.ProbePeer{RoundTrips: r.RoundTrips, Tails: r.Tails, Retransmits: r.Retransmits,
			CausesBySide: r.CausesBySide}}
	for i, p := range r.Peers {
		pp := diagnose.ProbePeer{Peer: p.Peer, RoundTrips: p.RoundTrips, Tails: p.Tails, Retransmits: p.Retransmits,
			CausesBySide: p.CausesBySide}
		if i < len(l.Peers) {
			pp.Peer, pp.Zone = l.Peers[i].Name, l.Peers[i].Zone
		}
		out.Peers = append(out.Peers, pp)
	}
	return out
}
