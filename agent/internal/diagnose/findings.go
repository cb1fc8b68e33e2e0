package diagnose

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/rings"
	"github.com/wirespeed-io/wirespeed/agent/internal/softnet"
)

// backlogMaximum is the profile schema's bound on net.core.netdev_max_backlog (AKS's, generated from
// wirespeed.sizing.aks_sysctls), quoted in the backlog advice so the advice and the validation cannot disagree.
var backlogMaximum = func() string {
	n, ok := profile.SysctlMaximum("net.core.netdev_max_backlog")
	if !ok {
		panic("embedded profile schema: net.core.netdev_max_backlog has no maximum")
	}
	return profile.Thousands(n)
}()

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
	d := &diagnosis{src: src, secs: secs,
		result: Result{IntervalSeconds: secs, Findings: []Finding{}, Unavailable: after.Unavailable}}
	d.softnet(before.Softnet, after.Softnet)
	for _, name := range slices.Sorted(maps.Keys(after.Links)) {
		if b, ok := before.Links[name]; ok { // a link that appeared during the interval has no baseline
			d.link(name, b, after.Links[name])
		}
	}
	d.protocols(before.Protocols, after.Protocols)
	d.conntrack(before.Conntrack, after.Conntrack)
	d.rank()
	return d.result
}

// diagnosis is one Diagnose in progress: each step adds the findings of one source.
type diagnosis struct {
	src    Sources
	secs   float64
	result Result
}

func (d *diagnosis) add(f Finding) {
	f.PerSecond = float64(f.Delta) / d.secs
	d.result.Findings = append(d.result.Findings, f)
}

// sysctl is a sysctl's value as a fix shows it, or why it could not be read.
func (d *diagnosis) sysctl(name string) string {
	v, err := d.src.Sysctl(name)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return fmt.Sprint(v)
}

func (d *diagnosis) softnet(before, after []softnet.CPUStat) {
	sn := softnet.Sum(softnet.Delta(before, after))
	if sn.Dropped > 0 {
		d.add(Finding{
			Cause: "backlog_drops", Counter: "softnet_stat dropped", Delta: sn.Dropped, Drops: true,
			Explanation: "The per-CPU input backlog was full: enqueue_to_backlog dropped packets (veth, RPS/RFS, " +
				"netif_rx traffic). Microbursts longer than the backlog overflow it.",
			Fix: Fix{Kind: FixProfile, Setting: `sysctls."net.core.netdev_max_backlog"`,
				Current: d.sysctl("net.core.netdev_max_backlog"),
				Advice: "raise net.core.netdev_max_backlog in the profile to hold the bursts; `wirespeed size backlog " +
					"--line-rate-gbps <Gb/s into one CPU>` gives the value (AKS netCoreNetdevMaxBacklog allows up to " +
					backlogMaximum + "). The backlog absorbs microbursts; a sustained flood above capacity drops at any size"},
		})
	}
	if sn.TimeSqueeze > 0 {
		d.add(Finding{
			Cause: "time_squeeze", Counter: "softnet_stat time_squeeze", Delta: sn.TimeSqueeze,
			Explanation: "net_rx_action ran out of budget with packets still waiting: receive processing was cut " +
				"short and continued later (packets wait in rings and backlogs, which then overflow).",
			Fix: Fix{Kind: FixProfile, Setting: `sysctls."net.core.netdev_budget"`,
				Current: "netdev_budget " + d.sysctl("net.core.netdev_budget") + ", netdev_budget_usecs " +
					d.sysctl("net.core.netdev_budget_usecs"),
				Advice: "raise net.core.netdev_budget (and net.core.netdev_budget_usecs) in the profile"},
		})
	}
}

// link adds the link's driver counters that moved. The kernel's missed/fifo counters say the same as a
// driver's ring counter, so they are reported only when no ring counter of the driver moved: one
// overflow is one finding.
func (d *diagnosis) link(name string, b, a LinkSample) {
	if d.driverCounters(name, b, a) {
		return
	}
	for _, k := range kernelRingCounters {
		if n := delta(k.count(b.Link), k.count(a.Link)); n > 0 {
			d.add(Finding{Cause: "rx_ring_overflow", Counter: k.name, Interface: name, Driver: a.Driver,
				Delta: n, Drops: true, Explanation: k.explanation, Fix: d.ringFix(name, a.Driver)})
			return
		}
	}
}

// kernelRingCounters are the link counters (IFLA_STATS64) that mean the RX ring overflowed, for drivers
// without a curated counter of their own; the first that moved is the finding.
var kernelRingCounters = []struct {
	name        string
	count       func(Link) uint64
	explanation string
}{
	{"rx_missed_errors", func(l Link) uint64 { return l.RxMissed },
		"The NIC had no receive buffer for arriving packets: the RX ring was full (the kernel did not refill it in time)."},
	{"rx_fifo_errors", func(l Link) uint64 { return l.RxFIFO },
		"The NIC's receive FIFO overflowed, usually because the RX ring had no free descriptor."},
}

// driverCounters adds a finding per curated driver counter (nic_drivers.json) that moved, with the fix
// its cause calls for, and says whether one of them was an RX ring overflow.
func (d *diagnosis) driverCounters(name string, b, a LinkSample) (ringOverflow bool) {
	for _, c := range rings.Drivers[a.Driver].Counters {
		va, oka := a.DriverCounters[c.Name]
		vb, okb := b.DriverCounters[c.Name]
		if !oka || !okb {
			continue
		}
		n := delta(vb, va)
		if n == 0 {
			continue
		}
		f := Finding{Counter: c.Name, Interface: name, Driver: a.Driver, Delta: n, Drops: true,
			Explanation: c.Meaning}
		switch c.Cause {
		case rings.CauseRXRingOverflow:
			f.Cause = "rx_ring_overflow"
			f.Fix = d.ringFix(name, a.Driver)
			ringOverflow = true
		case rings.CauseInstanceAllowance:
			f.Cause = "instance_allowance"
			f.Fix = Fix{Kind: FixSize, Advice: "the instance's network allowance is exhausted; no node setting " +
				"raises it: move to a larger or network-optimised size (`wirespeed catalog list --network-optimised`)"}
		default:
			f.Cause = "not_a_node_setting"
			f.Fix = Fix{Kind: FixNotNodeSetting, Advice: "a cloud limit no node setting or size changes; " +
				"reduce that traffic (for link-local DNS: cache DNS on the node, NodeLocal DNSCache)"}
		}
		d.add(f)
	}
	return ringOverflow
}

func (d *diagnosis) ringFix(link, driver string) Fix {
	name := driver
	if name == "" {
		name = "<driver>"
	}
	f := Fix{Kind: FixProfile, Setting: fmt.Sprintf("rings.%s.rx", name),
		Advice: fmt.Sprintf("raise the RX ring in the profile, up to the device maximum: a larger ring rides out "+
			"longer bursts before the NIC drops; `wirespeed size rings --driver %s --line-rate-gbps <Gb/s>` "+
			"gives the value", name)}
	cur, maxRing, err := d.src.RXRing(link)
	if err != nil {
		f.Current = "unknown (" + err.Error() + ")"
		return f
	}
	f.Current = fmt.Sprintf("%d of max %d", cur, maxRing)
	// A ring below the driver's default is never what wirespeed recommends (rings.Recommended, the Go side of
	// wirespeed.sizing.queues.Need): the default is the least the fix may name, whatever the line rate.
	if def, ok := rings.DriverDefaults[driver]; ok && int(cur) < def.RX {
		f.Advice = fmt.Sprintf("the RX ring is %d, below %s's default %d: set rings.%s.rx to at least %d in the "+
			"profile (`wirespeed size rings --driver %s --line-rate-gbps <Gb/s>` gives the value, never less than "+
			"the default)", cur, driver, def.RX, driver, def.RX, driver)
		return f
	}
	if maxRing > 0 && cur >= maxRing {
		f.Kind = FixSize
		f.Advice = "the RX ring is already at the device's maximum: spread the load over more queues and CPUs, " +
			"or move to a larger or network-optimised size (`wirespeed catalog list --network-optimised`)"
	}
	return f
}

// protocolCauses are the protocol counters that name a cause, in the order they are reported. None is a
// node setting: the fix is the application's.
var protocolCauses = []struct {
	cause, counter string
	count          func(Protocols) uint64
	explanation    string
	shownSysctl    string // a sysctl the fix shows the value of (it only caps what the application asks for)
	advice         string
}{
	{cause: "udp_receive_buffer", counter: "Udp RcvbufErrors", count: func(p Protocols) uint64 { return p.UDPRcvbufErrors },
		explanation: "UDP datagrams dropped because a socket's receive buffer was full: the application reads " +
			"more slowly than packets arrive, or its SO_RCVBUF is small.",
		shownSysctl: "net.core.rmem_max",
		advice: "not a node setting: the application's socket buffer (SO_RCVBUF, which net.core.rmem_max " +
			"only caps) and how fast it reads"},
	{cause: "listen_overflow", counter: "TcpExt ListenOverflows", count: func(p Protocols) uint64 { return p.ListenOverflows },
		explanation: "Connection attempts dropped because a listening socket's accept queue was full.",
		advice: "not a node setting: the application's listen() backlog and accept rate, and " +
			"net.core.somaxconn in the pod's own network namespace (a node-level value does not reach " +
			"pods, kubernetes#78977)"},
	{cause: "tcp_backlog_drop", counter: "TcpExt TCPBacklogDrop", count: func(p Protocols) uint64 { return p.TCPBacklogDrop },
		explanation: "TCP segments dropped because a socket's backlog was full while the application held " +
			"the socket lock.",
		advice: "not a node setting: the application holds its sockets too long or reads too slowly"},
}

// protocols adds the protocol counters that moved, and TCP retransmits as context.
func (d *diagnosis) protocols(before, after Protocols) {
	for _, p := range protocolCauses {
		n := delta(p.count(before), p.count(after))
		if n == 0 {
			continue
		}
		fix := Fix{Kind: FixNotNodeSetting, Advice: p.advice}
		if p.shownSysctl != "" {
			fix.Current = p.shownSysctl + " " + d.sysctl(p.shownSysctl)
		}
		d.add(Finding{Cause: p.cause, Counter: p.counter, Delta: n, Drops: true, Explanation: p.explanation, Fix: fix})
	}
	d.result.RetransmitsPerSecond = float64(delta(before.RetransSegs, after.RetransSegs)) / d.secs
}

// conntrack adds a full table (it dropped or evicted) or, failing that, a nearly full one.
func (d *diagnosis) conntrack(before, after *Conntrack) {
	if before == nil || after == nil {
		return
	}
	fix := Fix{Kind: FixProfile, Setting: `sysctls."net.netfilter.nf_conntrack_max"`,
		Current: d.sysctl("net.netfilter.nf_conntrack_max"),
		Advice: "raise net.netfilter.nf_conntrack_max in the profile (global: set in the host namespace), " +
			"or stop tracking flows that need no NAT"}
	if n := delta(before.Drop, after.Drop) + delta(before.EarlyDrop, after.EarlyDrop); n > 0 {
		d.add(Finding{Cause: "conntrack_full", Counter: "nf_conntrack drop+early_drop", Delta: n, Drops: true,
			Explanation: "The connection-tracking table was full: new flows were dropped (\"nf_conntrack: table " +
				"full, dropping packet\") or old entries evicted.",
			Fix: fix})
		return
	}
	if after.Max > 0 && float64(after.Count) >= conntrackNearFull*float64(after.Max) {
		d.add(Finding{Cause: "conntrack_near_full", Counter: "nf_conntrack_count", Delta: after.Count,
			Explanation: fmt.Sprintf("The connection-tracking table is %d of %d entries full; new flows drop "+
				"once it is.", after.Count, after.Max),
			Fix: fix})
		// A fill level is not a rate.
		d.result.Findings[len(d.result.Findings)-1].PerSecond = 0
	}
}

// rank puts lost packets first, then signals, each by falling rate.
func (d *diagnosis) rank() {
	f := d.result.Findings
	sort.SliceStable(f, func(i, j int) bool {
		if f[i].Drops != f[j].Drops {
			return f[i].Drops
		}
		return f[i].PerSecond > f[j].PerSecond
	})
}

// delta is after minus before; a counter that went backwards was reset (a VF re-added by host
// servicing starts from zero), so everything it counts now is new.
func delta(before, after uint64) uint64 {
	if after < before {
		return after
	}
	return after - before
}
