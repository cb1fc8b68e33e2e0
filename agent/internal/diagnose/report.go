package diagnose

import (
	"fmt"
	"io"
	"strings"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// WriteText prints the findings for a person: the most damaging first, each with its counter and rate,
// the known cause and the fix.
func WriteText(w io.Writer, r Result) error {
	var b strings.Builder
	if len(r.Findings) == 0 {
		fmt.Fprintf(&b, "no known cause of packet loss seen in %.0fs\n", r.IntervalSeconds)
	} else {
		fmt.Fprintf(&b, "%d finding(s) over %.0fs, most damaging first:\n", len(r.Findings), r.IntervalSeconds)
	}
	for i, f := range r.Findings {
		where := ""
		if f.Interface != "" {
			where = fmt.Sprintf(" on %s (%s)", f.Interface, f.Driver)
		}
		rate := fmt.Sprintf("+%d (%.1f/s)", f.Delta, f.PerSecond)
		switch f.Cause {
		case "conntrack_near_full":
			rate = fmt.Sprintf("%d entries", f.Delta)
		case "snat_port_pressure":
			rate = fmt.Sprintf("%d ports (%.1f new/s)", f.Delta, f.PerSecond)
		}
		fmt.Fprintf(&b, "\n%d. %s: %s%s %s\n", i+1, f.Cause, f.Counter, where, rate)
		fmt.Fprintf(&b, "   cause: %s\n", f.Explanation)
		fix := f.Fix.Advice
		if f.Fix.Setting != "" {
			fix = fmt.Sprintf("%s (now %s): %s", f.Fix.Setting, f.Fix.Current, f.Fix.Advice)
		} else if f.Fix.Current != "" {
			fix = fmt.Sprintf("%s (%s)", f.Fix.Advice, f.Fix.Current)
		}
		fmt.Fprintf(&b, "   fix (%s): %s\n", f.Fix.Kind, fix)
	}
	if r.RetransmitsPerSecond > 0 {
		fmt.Fprintf(&b, "\ncontext: TCP retransmitted %.1f segments/s\n", r.RetransmitsPerSecond)
	}
	writeSNAT(&b, r.SNAT)
	writeProbe(&b, r.Probe)
	for _, u := range r.Unavailable {
		fmt.Fprintf(&b, "not read: %s\n", u)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSNAT names the busiest outbound destinations.
func writeSNAT(b *strings.Builder, s *snat.SampleResult) {
	if s == nil {
		return
	}
	if len(s.Top) == 0 {
		fmt.Fprintf(b, "\noutbound SNAT: no flows to destinations outside the cluster\n")
		return
	}
	fmt.Fprintf(b, "\noutbound SNAT, busiest destinations (ports held: open flows, TCP flows seen closing in the "+
		"last %.0fs and UDP flows whose last packet was less than %.0fs ago):\n", s.HoldSeconds, s.UDPHoldSeconds)
	for _, u := range s.Top {
		fmt.Fprintf(b, "  %-28s %6d ports (%d open), %.1f new/s\n", u.Destination, u.PortsInUse, u.Open, u.NewPerSecond)
	}
	if s.OtherPortsInUse > 0 {
		fmt.Fprintf(b, "  %-28s %6d ports\n", "other destinations", s.OtherPortsInUse)
	}
	if s.EventsLost {
		fmt.Fprintf(b, "  (conntrack events were lost during the interval: these are lower bounds)\n")
	}
}
