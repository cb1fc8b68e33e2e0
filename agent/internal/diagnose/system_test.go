package diagnose

import (
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
)

// System against the real kernel: links and their rtnetlink statistics come from a fresh namespace
// (real veths), softnet and protocol counters from this process's /proc. A veth has no curated driver
// counters, so none are read and nothing is reported unavailable.
func TestSystemReadsARealNamespace(t *testing.T) {
	ns := linkstest.New(t)
	ns.AddVeth(t, "wsd0", "wsd1")
	noStats := func(intf string) (map[string]uint64, error) {
		t.Errorf("driver counters read for %s: a veth has none curated", intf)
		return nil, nil
	}
	src := System{ProcRoot: "/proc", Discoverer: ns.Discoverer(), Stats: noStats, Ring: ns.Ethtool.GetRing}

	s, err := Take(src, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wsd0", "wsd1"} {
		l, ok := s.Links[name]
		if !ok {
			t.Fatalf("links %v: %s missing", s.Links, name)
		}
		if l.Driver != "veth" || l.Role != "virtual" || l.DriverCounters != nil {
			t.Errorf("%s: %+v, want driver veth, role virtual, no driver counters", name, l)
		}
	}
	if _, ok := s.Links["lo"]; ok {
		t.Error("lo is listed; it carries no NIC drops")
	}
	if len(s.Softnet) == 0 || len(s.Unavailable) != 0 {
		t.Errorf("softnet %d CPUs, unavailable %v", len(s.Softnet), s.Unavailable)
	}
	if v, err := src.Sysctl("net.core.netdev_max_backlog"); err != nil || v <= 0 {
		t.Errorf("netdev_max_backlog %d, %v", v, err)
	}
}
