package diagnose

import (
	"fmt"
	"io"
	"strings"
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
		if f.Cause == "conntrack_near_full" {
			rate = fmt.Sprintf("%d entries", f.Delta)
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
	for _, u := range r.Unavailable {
		fmt.Fprintf(&b, "not read: %s\n", u)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
