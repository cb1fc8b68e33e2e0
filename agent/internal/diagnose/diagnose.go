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
	"sort"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/rings"
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
}

// conntrackNearFull is the fill at which the table is reported before it drops: above 90 % a burst of
// new flows (a deploy, a retry storm) fills the rest within seconds.
const conntrackNearFull = 0.9

// Diagnose turns the difference between two samples into ranked findings: lost packets first, by rate,
// then signals (time squeeze, a nearly full conntrack table), by rate.
func Diagnose(src Sources, before, after Sample) Result {
	secs := after.Time.Sub(before.Time).Seconds()
	if secs <= 0 {
		secs = 1
	}
	r := Result{IntervalSeconds: secs, Findings: []Finding{}, Unavailable: after.Unavailable}
	add := func(f Finding) {
		f.PerSecond = float64(f.Delta) / secs
		r.Findings = append(r.Findings, f)
	}
	sysctl := func(name string) string {
		v, err := src.Sysctl(name)
		if err != nil {
			return "unknown (" + err.Error() + ")"
		}
		return fmt.Sprint(v)
	}

	sn := softnet.Sum(softnet.Delta(before.Softnet, after.Softnet))
	if sn.Dropped > 0 {
		add(Finding{
			Cause: "backlog_drops", Counter: "softnet_stat dropped", Delta: sn.Dropped, Drops: true,
			Explanation: "The per-CPU input backlog was full: enqueue_to_backlog dropped packets (veth, RPS/RFS, " +
				"netif_rx traffic). Microbursts longer than the backlog overflow it.",
			Fix: Fix{Kind: FixProfile, Setting: `sysctls."net.core.netdev_max_backlog"`,
				Current: sysctl("net.core.netdev_max_backlog"),
				Advice: "raise net.core.netdev_max_backlog in the profile to hold the bursts; `wirespeed size backlog " +
					"--line-rate-gbps <Gb/s into one CPU>` gives the value (AKS netCoreNetdevMaxBacklog allows up to " +
					"3,240,000). The backlog absorbs microbursts; a sustained flood above capacity drops at any size"},
		})
	}
	if sn.TimeSqueeze > 0 {
		add(Finding{
			Cause: "time_squeeze", Counter: "softnet_stat time_squeeze", Delta: sn.TimeSqueeze,
			Explanation: "net_rx_action ran out of budget with packets still waiting: receive processing was cut " +
				"short and continued later (packets wait in rings and backlogs, which then overflow).",
			Fix: Fix{Kind: FixProfile, Setting: `sysctls."net.core.netdev_budget"`,
				Current: "netdev_budget " + sysctl("net.core.netdev_budget") + ", netdev_budget_usecs " +
					sysctl("net.core.netdev_budget_usecs"),
				Advice: "raise net.core.netdev_budget (and net.core.netdev_budget_usecs) in the profile"},
		})
	}

	for _, name := range sortedLinks(after.Links) {
		a := after.Links[name]
		b, ok := before.Links[name]
		if !ok {
			continue // appeared during the interval: no baseline
		}
		ringFound := false
		for _, c := range rings.Drivers[a.Driver].Counters {
			va, oka := a.DriverCounters[c.Name]
			vb, okb := b.DriverCounters[c.Name]
			if !oka || !okb {
				continue
			}
			d := delta(vb, va)
			if d == 0 {
				continue
			}
			f := Finding{Counter: c.Name, Interface: name, Driver: a.Driver, Delta: d, Drops: true,
				Explanation: c.Meaning}
			switch c.Cause {
			case rings.CauseRXRingOverflow:
				f.Cause = "rx_ring_overflow"
				f.Fix = ringFix(src, name, a.Driver)
				ringFound = true
			case rings.CauseInstanceAllowance:
				f.Cause = "instance_allowance"
				f.Fix = Fix{Kind: FixSize, Advice: "the instance's network allowance is exhausted; no node setting " +
					"raises it: move to a larger or network-optimised size (`wirespeed catalog list --network-optimised`)"}
			default:
				f.Cause = "not_a_node_setting"
				f.Fix = Fix{Kind: FixNotNodeSetting, Advice: "a cloud limit no node setting or size changes; " +
					"reduce that traffic (for link-local DNS: cache DNS on the node, NodeLocal DNSCache)"}
			}
			add(f)
		}
		// The kernel's missed/fifo counters say the same as a driver's ring counter; report them only when
		// the driver has none that moved, so one overflow is one finding.
		if ringFound {
			continue
		}
		for _, k := range []struct {
			name   string
			b, a   uint64
			reason string
		}{
			{"rx_missed_errors", b.RxMissed, a.RxMissed, "The NIC had no receive buffer for arriving packets: the RX ring was full (the kernel did not refill it in time)."},
			{"rx_fifo_errors", b.RxFIFO, a.RxFIFO, "The NIC's receive FIFO overflowed, usually because the RX ring had no free descriptor."},
		} {
			if d := delta(k.b, k.a); d > 0 {
				add(Finding{Cause: "rx_ring_overflow", Counter: k.name, Interface: name, Driver: a.Driver,
					Delta: d, Drops: true, Explanation: k.reason, Fix: ringFix(src, name, a.Driver)})
				break
			}
		}
	}

	pb, pa := before.Protocols, after.Protocols
	if d := delta(pb.UDPRcvbufErrors, pa.UDPRcvbufErrors); d > 0 {
		add(Finding{Cause: "udp_receive_buffer", Counter: "Udp RcvbufErrors", Delta: d, Drops: true,
			Explanation: "UDP datagrams dropped because a socket's receive buffer was full: the application reads " +
				"more slowly than packets arrive, or its SO_RCVBUF is small.",
			Fix: Fix{Kind: FixNotNodeSetting, Current: "net.core.rmem_max " + sysctl("net.core.rmem_max"),
				Advice: "not a node setting: the application's socket buffer (SO_RCVBUF, which net.core.rmem_max " +
					"only caps) and how fast it reads"}})
	}
	if d := delta(pb.ListenOverflows, pa.ListenOverflows); d > 0 {
		add(Finding{Cause: "listen_overflow", Counter: "TcpExt ListenOverflows", Delta: d, Drops: true,
			Explanation: "Connection attempts dropped because a listening socket's accept queue was full.",
			Fix: Fix{Kind: FixNotNodeSetting,
				Advice: "not a node setting: the application's listen() backlog and accept rate, and " +
					"net.core.somaxconn in the pod's own network namespace (a node-level value does not reach " +
					"pods, kubernetes#78977)"}})
	}
	if d := delta(pb.TCPBacklogDrop, pa.TCPBacklogDrop); d > 0 {
		add(Finding{Cause: "tcp_backlog_drop", Counter: "TcpExt TCPBacklogDrop", Delta: d, Drops: true,
			Explanation: "TCP segments dropped because a socket's backlog was full while the application held " +
				"the socket lock.",
			Fix: Fix{Kind: FixNotNodeSetting,
				Advice: "not a node setting: the application holds its sockets too long or reads too slowly"}})
	}
	r.RetransmitsPerSecond = float64(delta(pb.RetransSegs, pa.RetransSegs)) / secs

	if ca, cb := after.Conntrack, before.Conntrack; ca != nil && cb != nil {
		ctMax := sysctl("net.netfilter.nf_conntrack_max")
		ctFix := Fix{Kind: FixProfile, Setting: `sysctls."net.netfilter.nf_conntrack_max"`, Current: ctMax,
			Advice: "raise net.netfilter.nf_conntrack_max in the profile (global: set in the host namespace), " +
				"or stop tracking flows that need no NAT"}
		if d := delta(cb.Drop, ca.Drop) + delta(cb.EarlyDrop, ca.EarlyDrop); d > 0 {
			add(Finding{Cause: "conntrack_full", Counter: "nf_conntrack drop+early_drop", Delta: d, Drops: true,
				Explanation: "The connection-tracking table was full: new flows were dropped (\"nf_conntrack: table " +
					"full, dropping packet\") or old entries evicted.",
				Fix: ctFix})
		} else if ca.Max > 0 && float64(ca.Count) >= conntrackNearFull*float64(ca.Max) {
			add(Finding{Cause: "conntrack_near_full", Counter: "nf_conntrack_count", Delta: ca.Count,
				Explanation: fmt.Sprintf("The connection-tracking table is %d of %d entries full; new flows drop "+
					"once it is.", ca.Count, ca.Max),
				Fix: ctFix})
			// A fill level is not a rate.
			r.Findings[len(r.Findings)-1].PerSecond = 0
		}
	}

	sort.SliceStable(r.Findings, func(i, j int) bool {
		fi, fj := r.Findings[i], r.Findings[j]
		if fi.Drops != fj.Drops {
			return fi.Drops
		}
		return fi.PerSecond > fj.PerSecond
	})
	return r
}

func ringFix(src Sources, link, driver string) Fix {
	name := driver
	if name == "" {
		name = "<driver>"
	}
	f := Fix{Kind: FixProfile, Setting: fmt.Sprintf("rings.%s.rx", name),
		Advice: fmt.Sprintf("raise the RX ring in the profile, up to the device maximum: a larger ring rides out "+
			"longer bursts before the NIC drops; `wirespeed size rings --driver %s --line-rate-gbps <Gb/s>` "+
			"gives the value", name)}
	cur, maxRing, err := src.RXRing(link)
	if err != nil {
		f.Current = "unknown (" + err.Error() + ")"
		return f
	}
	f.Current = fmt.Sprintf("%d of max %d", cur, maxRing)
	if maxRing > 0 && cur >= maxRing {
		f.Kind = FixSize
		f.Advice = "the RX ring is already at the device's maximum: spread the load over more queues and CPUs, " +
			"or move to a larger or network-optimised size (`wirespeed catalog list --network-optimised`)"
	}
	return f
}

// delta is after minus before; a counter that went backwards was reset (a VF re-added by host
// servicing starts from zero), so everything it counts now is new.
func delta(before, after uint64) uint64 {
	if after < before {
		return after
	}
	return after - before
}

func sortedLinks(m map[string]LinkSample) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
