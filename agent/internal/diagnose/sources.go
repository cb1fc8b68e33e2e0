package diagnose

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"github.com/safchain/ethtool"

	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/softnet"
)

// System reads the live kernel of the network namespace the process runs in (the host's, for the agent's
// DaemonSet with hostNetwork).
type System struct {
	ProcRoot   string // normally /proc
	Discoverer links.Discoverer
	// Stats reads `ethtool -S` counters: (*ethioctl.Reader).Stats, not safchain/ethtool's (see internal/ethioctl).
	Stats func(intf string) (map[string]uint64, error)
	// Ring reads ring sizes: (*ethioctl.Reader).GetRing.
	Ring func(intf string) (ethtool.Ring, error)
}

var _ Sources = System{}

// Softnet implements Sources.
func (s System) Softnet() ([]softnet.CPUStat, error) {
	return softnet.ReadFile(filepath.Join(s.ProcRoot, "net/softnet_stat"))
}

// Links implements Sources: every link with its rtnetlink IFLA_STATS64 counters.
func (s System) Links() ([]Link, error) {
	ls, err := s.Discoverer.List()
	if err != nil {
		return nil, err
	}
	out := make([]Link, 0, len(ls))
	for _, l := range ls {
		if l.Name == "lo" {
			continue
		}
		x := Link{Name: l.Name, Driver: l.Driver, Role: l.Role}
		if l.Raw != nil {
			if st := l.Raw.Attrs().Statistics; st != nil {
				x.RxMissed, x.RxDropped, x.RxFIFO = st.RxMissedErrors, st.RxDropped, st.RxFifoErrors
			}
		}
		out = append(out, x)
	}
	return out, nil
}

// DriverStats implements Sources.
func (s System) DriverStats(link string) (map[string]uint64, error) { return s.Stats(link) }

// RXRing implements Sources.
func (s System) RXRing(link string) (uint32, uint32, error) {
	r, err := s.Ring(link)
	if err != nil {
		return 0, 0, err
	}
	return r.RxPending, r.RxMaxPending, nil
}

// Protocols implements Sources through prometheus/procfs (already linked by the process collector).
func (s System) Protocols() (Protocols, error) {
	fsys, err := procfs.NewFS(s.ProcRoot)
	if err != nil {
		return Protocols{}, err
	}
	self, err := fsys.Self()
	if err != nil {
		return Protocols{}, err
	}
	snmp, err := self.Snmp()
	if err != nil {
		return Protocols{}, err
	}
	netstat, err := self.Netstat()
	if err != nil {
		return Protocols{}, err
	}
	p := Protocols{
		UDPRcvbufErrors: u(snmp.Udp.RcvbufErrors),
		RetransSegs:     u(snmp.Tcp.RetransSegs),
		TCPBacklogDrop:  u(netstat.TcpExt.TCPBacklogDrop),
		ListenOverflows: u(netstat.TcpExt.ListenOverflows),
	}
	// IPv6 may be disabled (no snmp6): then only IPv4 counts.
	if snmp6, err := self.Snmp6(); err == nil {
		p.UDPRcvbufErrors += u(snmp6.Udp6.RcvbufErrors)
	}
	return p, nil
}

func u(v *float64) uint64 {
	if v == nil || *v < 0 {
		return 0
	}
	return uint64(*v)
}

// Conntrack implements Sources: nil when nf_conntrack is not loaded (its files are absent).
func (s System) Conntrack() (*Conntrack, error) {
	count, err := s.readUint("sys/net/netfilter/nf_conntrack_count")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ctMax, err := s.readUint("sys/net/netfilter/nf_conntrack_max")
	if err != nil {
		return nil, err
	}
	fsys, err := procfs.NewFS(s.ProcRoot)
	if err != nil {
		return nil, err
	}
	stats, err := fsys.ConntrackStat()
	if err != nil {
		return nil, err
	}
	c := &Conntrack{Count: count, Max: ctMax}
	for _, e := range stats {
		c.Drop += e.Drop
		c.EarlyDrop += e.EarlyDrop
		c.InsertFailed += e.InsertFailed
	}
	return c, nil
}

// Sysctl implements Sources.
func (s System) Sysctl(name string) (int64, error) {
	v, err := os.ReadFile(filepath.Join(s.ProcRoot, "sys", strings.ReplaceAll(name, ".", "/")))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
}

func (s System) readUint(rel string) (uint64, error) {
	v, err := os.ReadFile(filepath.Join(s.ProcRoot, rel))
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(v)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", rel, err)
	}
	return n, nil
}
