package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/diagnose"
	"github.com/wirespeed-io/wirespeed/agent/internal/ethioctl"
	"github.com/wirespeed-io/wirespeed/agent/internal/links"
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
	res, err := diagnose.Run(ctx, src, *interval, time.Now)
	if err != nil {
		fmt.Fprintf(stderr, "diagnose: %v\n", err)
		return diagnoseCannotRead
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
