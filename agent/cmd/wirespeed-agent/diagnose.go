package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/diagnose"
	"github.com/wirespeed-io/wirespeed/agent/internal/ethioctl"
	"github.com/wirespeed-io/wirespeed/agent/internal/links"
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
