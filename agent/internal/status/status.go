// Package status is the agent's report of one reconcile: what the profile asked for, what the node has,
// and whether they agree. The reconciler produces it; metrics, the Node annotation/condition, Events and
// `--once` output all consume the same value, so every surface says the same thing.
package status

import "time"

// AnnotationKey is the Node annotation carrying the JSON form of Report.
const AnnotationKey = "wirespeed.io/tuning-status"

// ConditionType is the Node condition set True when the agent cannot apply the profile.
const ConditionType = "NetworkTuningDegraded"

// SNATConditionType is the Node condition set True when one destination uses more of its SNAT capacity than
// the profile's outbound.pressure_percent; only written when the profile has an outbound section.
const SNATConditionType = "SNATPortPressure"

// State summarises a report.
type State string

const (
	StateApplied  State = "applied"  // every selected setting matches the profile
	StateDegraded State = "degraded" // at least one setting could not be applied
	StateDryRun   State = "dry-run"  // nothing written; drift shows what would change
)

// Ring is one direction of a NIC ring.
type Ring struct {
	Desired int `json:"desired"` // after clamping to Max and rounding by the driver's rule; 0 = not managed
	Current int `json:"current"`
	Max     int `json:"max"`
	// Refused: the agent wrote Desired and the device kept Current instead (a firmware or queue limit,
	// or a rounding rule the driver table does not know). The agent does not rewrite it while this link
	// instance keeps that value; the report is degraded with the reason, never counted as applied.
	Refused bool `json:"refused,omitempty"`
}

// Interface is one link the agent considered.
type Interface struct {
	Name     string `json:"name"`
	Index    int    `json:"index"`
	Driver   string `json:"driver"`
	Role     string `json:"role"` // sriov-vf | primary | virtual
	Selected bool   `json:"selected"`
	Reason   string `json:"reason"` // why selected or not, in words
	RX       *Ring  `json:"rx,omitempty"`
	TX       *Ring  `json:"tx,omitempty"`
	MTU      *Value `json:"mtu,omitempty"`
	Error    string `json:"error,omitempty"` // last apply error for this link
}

// Value is a desired/current pair (sysctls, MTU).
type Value struct {
	Desired int64 `json:"desired"`
	Current int64 `json:"current"`
}

// Report is the outcome of one reconcile.
type Report struct {
	Profile    string           `json:"profile"`
	State      State            `json:"state"`
	Reason     string           `json:"reason"` // one line: what is wrong, or "all settings applied"
	Interfaces []Interface      `json:"interfaces"`
	Sysctls    map[string]Value `json:"sysctls"`
	Errors     []string         `json:"errors,omitempty"`
	// SNAT is the outbound SNAT accounting (the agent's conntrack view), absent when it is off.
	SNAT *SNAT     `json:"snat,omitempty"`
	Time time.Time `json:"time"`
}

// SNAT is what the node's outbound flows use of their SNAT capacity, per destination.
type SNAT struct {
	// Top are the busiest destinations now, busiest first (at most 5 in the annotation).
	Top []SNATDestination `json:"top"`
	// Max is the most ports one destination uses now; Peak the most within the agent's peak window.
	Max  int `json:"max"`
	Peak int `json:"peak"`
	// Kind is the profile's outbound.kind; Capacity is what one destination may use (from that section; both
	// absent without one), ThresholdPercent the share of it that sets SNATPortPressure.
	Kind             string `json:"kind,omitempty"`
	Capacity         int    `json:"capacity,omitempty"`
	ThresholdPercent int    `json:"threshold_percent,omitempty"`
	Pressure         bool   `json:"pressure"`
	// Message is the SNATPortPressure condition's message.
	Message          string `json:"message,omitempty"`
	ConntrackEntries int    `json:"conntrack_entries"`
	// Workloads are the busiest destination's top workloads (at most 3, busiest first), absent without
	// attribution: who to call when it is pressed, for `wirespeed drift`.
	Workloads []SNATWorkload `json:"workloads,omitempty"`
}

// SNATWorkload is the ports one workload holds to one destination: Kind is a Kubernetes kind (Deployment,
// CronJob, ...), "node" (the node's own address) or "unknown" (no pod on the node held the address).
type SNATWorkload struct {
	Namespace   string `json:"namespace"`
	Workload    string `json:"workload"`
	Kind        string `json:"kind"`
	Destination string `json:"destination"`
	PortsInUse  int    `json:"ports_in_use"`
}

// SNATDestination is one destination ("52.1.2.3:443/tcp") and the SNAT ports its flows hold.
type SNATDestination struct {
	Destination string `json:"destination"`
	PortsInUse  int    `json:"ports_in_use"`
}

// Drifted reports whether any managed value differs from its desired value.
func (r Report) Drifted() bool {
	for _, i := range r.Interfaces {
		if !i.Selected {
			continue
		}
		for _, ring := range []*Ring{i.RX, i.TX} {
			if ring != nil && ring.Desired != 0 && ring.Desired != ring.Current {
				return true
			}
		}
		if i.MTU != nil && i.MTU.Desired != i.MTU.Current {
			return true
		}
	}
	for _, v := range r.Sysctls {
		if v.Desired != v.Current {
			return true
		}
	}
	return false
}

// Event is something worth a Kubernetes Event: a VF re-added and re-tuned. (Degraded and recovered are
// posted by nodestatus when the NetworkTuningDegraded condition flips.)
type Event struct {
	Reason  string // CamelCase, e.g. "InterfaceRetuned"
	Message string
	Warning bool
}
