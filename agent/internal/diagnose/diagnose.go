// Package diagnose says which known cause is dropping packets on this node now, and the setting that
// fixes it. It samples every counter twice over an interval and turns the counters that moved into
// findings, each naming the counter and its rate, the known cause and the fix: a profile field (rings,
// backlog, budget, conntrack table), a larger or network-optimised size (a cloud allowance), or "not a
// node setting" (socket buffers, listen backlogs).
//
// The data comes through Sources, a small interface: System reads the live kernel (softnet_stat, rtnetlink
// link statistics, the ethtool stats ioctl, /proc/net/snmp and netstat, conntrack); tests use the real
// kernel where the cause can be produced here and FakeNICs for drivers that cannot exist here.
package diagnose

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/rings"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
	"github.com/wirespeed-io/wirespeed/agent/internal/softnet"
)

// Link is one network link and its kernel counters (rtnetlink IFLA_STATS64).
type Link struct {
	Name      string `json:"name"`
	Driver    string `json:"driver,omitempty"`
	Role      string `json:"role,omitempty"`
	RxMissed  uint64 `json:"rx_missed_errors"` // `ip -s link` "missed": the NIC had no buffer for the packet
	RxDropped uint64 `json:"rx_dropped"`       // dropped by the kernel after the driver (backlog full, no handler)
	RxFIFO    uint64 `json:"rx_fifo_errors"`   // the NIC's receive FIFO overflowed
}

// Protocols are the node's protocol counters (/proc/net/snmp, /proc/net/snmp6, /proc/net/netstat).
type Protocols struct {
	UDPRcvbufErrors uint64 `json:"udp_rcvbuf_errors"` // Udp RcvbufErrors + Udp6RcvbufErrors
	TCPBacklogDrop  uint64 `json:"tcp_backlog_drop"`  // TcpExt TCPBacklogDrop
	ListenOverflows uint64 `json:"listen_overflows"`  // TcpExt ListenOverflows
	RetransSegs     uint64 `json:"retrans_segs"`      // Tcp RetransSegs (context, not a cause)
}

// Conntrack is the connection-tracking table's fill and its drop counters (summed over CPUs).
type Conntrack struct {
	Count        uint64 `json:"count"`
	Max          uint64 `json:"max"`
	Drop         uint64 `json:"drop"`          // packets dropped: no entry could be allocated (table full)
	EarlyDrop    uint64 `json:"early_drop"`    // entries evicted to make room for new ones
	InsertFailed uint64 `json:"insert_failed"` // entries that could not be inserted
}

// Sources is where a diagnosis reads the node. Every method reads the current value; none caches.
type Sources interface {
	Softnet() ([]softnet.CPUStat, error)
	Links() ([]Link, error)
	// DriverStats returns the link's `ethtool -S` counters (the ETHTOOL_GSTATS ioctl).
	DriverStats(link string) (map[string]uint64, error)
	// RXRing returns the link's current and maximum RX ring size (ETHTOOL_GRINGPARAM).
	RXRing(link string) (current, maximum uint32, err error)
	Protocols() (Protocols, error)
	// Conntrack returns nil without an error when connection tracking is not loaded.
	Conntrack() (*Conntrack, error)
	// Sysctl reads a sysctl by its dotted name (net.core.netdev_max_backlog).
	Sysctl(name string) (int64, error)
}

// LinkSample is one link's counters at one moment: the kernel's and the curated driver counters.
type LinkSample struct {
	Link
	DriverCounters map[string]uint64 `json:"driver_counters,omitempty"`
}

// Sample is every counter at one moment.
type Sample struct {
	Time      time.Time             `json:"time"`
	Softnet   []softnet.CPUStat     `json:"-"`
	Links     map[string]LinkSample `json:"links"`
	Protocols Protocols             `json:"protocols"`
	Conntrack *Conntrack            `json:"conntrack,omitempty"`
	// Unavailable names what could not be read without making the diagnosis impossible.
	Unavailable []string `json:"unavailable,omitempty"`
}

// ErrCannotRead wraps a failure to read a source every diagnosis needs.
var ErrCannotRead = errors.New("cannot read")

// Take reads every source once. Softnet, links and protocol counters are required (ErrCannotRead);
// a link without ethtool stats (veth, lo) or a node without conntrack is noted, not fatal.
func Take(src Sources, now time.Time) (Sample, error) {
	s := Sample{Time: now, Links: map[string]LinkSample{}}
	var err error
	if s.Softnet, err = src.Softnet(); err != nil {
		return s, fmt.Errorf("%w softnet_stat: %v", ErrCannotRead, err)
	}
	links, err := src.Links()
	if err != nil {
		return s, fmt.Errorf("%w link statistics: %v", ErrCannotRead, err)
	}
	for _, l := range links {
		ls := LinkSample{Link: l}
		if d, ok := rings.Drivers[l.Driver]; ok && len(d.Counters) > 0 {
			stats, err := src.DriverStats(l.Name)
			if err != nil {
				s.Unavailable = append(s.Unavailable, fmt.Sprintf("%s: %s driver counters: %v", l.Name, l.Driver, err))
			} else {
				ls.DriverCounters = map[string]uint64{}
				for _, c := range d.Counters {
					if v, ok := stats[c.Name]; ok {
						ls.DriverCounters[c.Name] = v
					}
				}
			}
		}
		s.Links[l.Name] = ls
	}
	if s.Protocols, err = src.Protocols(); err != nil {
		return s, fmt.Errorf("%w protocol counters: %v", ErrCannotRead, err)
	}
	if s.Conntrack, err = src.Conntrack(); err != nil {
		s.Unavailable = append(s.Unavailable, fmt.Sprintf("conntrack: %v", err))
	}
	return s, nil
}

// Run samples, waits interval (or until ctx ends), samples again and diagnoses the difference.
func Run(ctx context.Context, src Sources, interval time.Duration, now func() time.Time) (Result, error) {
	before, err := Take(src, now())
	if err != nil {
		return Result{}, err
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return Result{}, ctx.Err()
	case <-t.C:
	}
	after, err := Take(src, now())
	if err != nil {
		return Result{}, err
	}
	return Diagnose(src, before, after), nil
}

// Fix kinds.
const (
	FixProfile        = "profile"            // a field of the tuning profile the agent applies
	FixSize           = "size"               // a larger or network-optimised VM/instance size
	FixNotNodeSetting = "not_a_node_setting" // the application, the pod or the cloud, not this node
)

// Fix is what to change.
type Fix struct {
	Kind    string `json:"kind"`
	Setting string `json:"setting,omitempty"` // the profile field, e.g. sysctls."net.core.netdev_max_backlog"
	Current string `json:"current,omitempty"` // its value on the node now
	Advice  string `json:"advice"`
}

// Finding is one known cause seen moving during the interval.
type Finding struct {
	Cause     string  `json:"cause"`
	Counter   string  `json:"counter"`
	Interface string  `json:"interface,omitempty"`
	Driver    string  `json:"driver,omitempty"`
	Delta     uint64  `json:"delta"`
	PerSecond float64 `json:"per_second"`
	// Drops is true when the counter counts lost packets; false for signals (time squeeze, table fill).
	Drops       bool   `json:"drops"`
	Explanation string `json:"explanation"`
	Fix         Fix    `json:"fix"`
}

// Result is a whole diagnosis.
type Result struct {
	IntervalSeconds float64   `json:"interval_seconds"`
	Findings        []Finding `json:"findings"`
	// Retransmits is TCP's retransmitted segments per second: context for the findings, not a cause.
	RetransmitsPerSecond float64  `json:"tcp_retransmits_per_second"`
	Unavailable          []string `json:"unavailable,omitempty"`
	// SNAT names the busiest outbound destinations and the SNAT ports they hold (AddSNAT).
	SNAT *snat.SampleResult `json:"snat,omitempty"`
	// Probe is the continuous probe's last round (the daemon's /probe), when it runs on this node.
	Probe *ProbeRound `json:"probe,omitempty"`
}
