package nodestatus

import (
	"fmt"
	"strings"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// annotationTop is how many destinations the Node annotation names: the busiest few say what drift needs,
// and every byte of a Node goes to every Node watcher.
const annotationTop = 5

// Pressure turns snapshots into the report's SNAT object and the SNATPortPressure verdict: on as soon as
// one destination uses pressure_percent of its capacity, off once it stayed below for ClearAfter, so a
// destination hovering at the threshold does not flip the condition (and post an Event) every second, as
// the kubelet's --eviction-pressure-transition-period keeps its own pressure conditions from flapping.
type Pressure struct {
	Outbound   *profile.Outbound // nil: no capacity known, never pressure
	ClearAfter time.Duration

	on    bool
	below time.Time // when the busiest destination went below the threshold while on; zero: not below
}

// Update judges one snapshot.
func (p *Pressure) Update(s snat.Snapshot) status.SNAT {
	out := status.SNAT{Max: s.Max, Peak: s.Peak, ConntrackEntries: max(s.ConntrackEntries, 0),
		Top: []status.SNATDestination{}}
	for _, u := range s.Top[:min(len(s.Top), annotationTop)] {
		out.Top = append(out.Top, status.SNATDestination{Destination: u.Destination, PortsInUse: u.InUse})
	}
	for _, u := range s.MaxWorkloads {
		out.Workloads = append(out.Workloads, status.SNATWorkload{Namespace: u.Workload.Namespace,
			Workload: u.Workload.Name, Kind: u.Workload.Kind, Destination: u.Destination, PortsInUse: u.InUse})
	}
	if p.Outbound == nil {
		return out
	}
	capacity, threshold := p.Outbound.Capacity(), p.Outbound.PressurePercent
	out.Kind, out.Capacity, out.ThresholdPercent = p.Outbound.Kind, capacity, threshold
	over := s.Max*100 >= threshold*capacity && s.Max > 0
	switch {
	case over:
		p.on, p.below = true, time.Time{}
	case p.on && p.below.IsZero():
		p.below = s.Time
	case p.on && s.Time.Sub(p.below) >= p.ClearAfter:
		p.on, p.below = false, time.Time{}
	}
	out.Pressure = p.on
	out.Message = p.message(s, capacity, threshold)
	return out
}

func (p *Pressure) message(s snat.Snapshot, capacity, threshold int) string {
	shared := ""
	if p.Outbound.Limits().Shared {
		shared = "; this node alone, the gateway's IPs serve every node behind it"
	}
	if s.Max == 0 {
		return fmt.Sprintf("no outbound flows to destinations outside the cluster (capacity %s ports per destination, "+
			"threshold %d%%%s)", commas(capacity), threshold, shared)
	}
	pct := s.Max * 100 / capacity // floor: a destination below the threshold never reads as at it
	if s.Max*100 >= threshold*capacity {
		pct = (s.Max*100 + capacity - 1) / capacity
	}
	subject := s.MaxDestination
	if !p.on {
		subject = "busiest destination " + subject
	} else if s.Max*100 < threshold*capacity {
		subject = "busiest destination " + subject + ", below the threshold for " +
			s.Time.Sub(p.below).Truncate(time.Second).String() + ","
	}
	return fmt.Sprintf("%s uses %s of %s ports (%d%%, threshold %d%%%s)", subject, commas(s.Max),
		commas(capacity), pct, threshold, shared) + spenders(s, capacity)
}

// spenders names the busiest destination's top workloads (Snapshot.MaxWorkloads), so whoever reads the
// condition or its Event knows which team to call: "; checkout/payments-api (Deployment) holds 2,410 of
// 3,600 ports to 52.1.2.3:443/tcp; batch/export (CronJob) 900".
func spenders(s snat.Snapshot, capacity int) string {
	var b strings.Builder
	for i, u := range s.MaxWorkloads {
		if i == 0 {
			fmt.Fprintf(&b, "; %s holds %s of %s ports to %s", u.Workload, commas(u.InUse), commas(capacity),
				u.Destination)
			continue
		}
		fmt.Fprintf(&b, "; %s %s", u.Workload, commas(u.InUse))
	}
	return b.String()
}

// commas writes n with thousands separators as the Python side does: profile.Thousands, the agent's one grouping
// (held to tests/vectors/thousands.json).
func commas(n int) string { return profile.Thousands(n) }
