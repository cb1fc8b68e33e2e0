package diagnose

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/softnet"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// scripted is a Sources whose non-NIC counters a test sets between samples (a node with no counters
// moving unless the test moves them); it stands behind FakeNICs like the real kernel would.
type scripted struct {
	softnet   []softnet.CPUStat
	protocols Protocols
	conntrack *Conntrack
	sysctls   map[string]int64
	err       error
}

func (s *scripted) Softnet() ([]softnet.CPUStat, error) {
	if s.err != nil {
		return nil, s.err
	}
	return append([]softnet.CPUStat(nil), s.softnet...), nil
}
func (s *scripted) Links() ([]Link, error)                        { return nil, nil }
func (s *scripted) DriverStats(string) (map[string]uint64, error) { return nil, errors.New("no stats") }
func (s *scripted) RXRing(string) (uint32, uint32, error)         { return 0, 0, errors.New("no ring") }
func (s *scripted) Protocols() (Protocols, error)                 { return s.protocols, nil }
func (s *scripted) Conntrack() (*Conntrack, error) {
	if s.conntrack == nil {
		return nil, nil
	}
	c := *s.conntrack
	return &c, nil
}
func (s *scripted) Sysctl(name string) (int64, error) {
	v, ok := s.sysctls[name]
	if !ok {
		return 0, errors.New("absent")
	}
	return v, nil
}

func newScripted() *scripted {
	return &scripted{
		softnet: []softnet.CPUStat{{CPU: 0}, {CPU: 1}},
		sysctls: map[string]int64{"net.core.netdev_max_backlog": 1000, "net.core.netdev_budget": 300,
			"net.core.netdev_budget_usecs": 2000, "net.core.rmem_max": 212992, "net.netfilter.nf_conntrack_max": 64},
	}
}

// diagnoseAround samples, lets move change the node, samples 10 s later and diagnoses.
func diagnoseAround(t *testing.T, src Sources, move func()) Result {
	t.Helper()
	before, err := Take(src, t0)
	if err != nil {
		t.Fatal(err)
	}
	move()
	after, err := Take(src, t0.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return Diagnose(src, before, after)
}

// Drivers that cannot exist here (mana, mlx5_core, ENA) through FakeNICs: each counter of the catalog
// becomes the finding and the fix its cause calls for.
func TestFakeNICCountersBecomeFindings(t *testing.T) {
	cases := []struct {
		name, driver, counter string
		ring, ringMax         uint32
		cause, fixKind        string
		setting, current      string
	}{
		{"mana ring overflow (fake mana)", "mana", "hc_rx_discards_no_wqe", 1024, 8192,
			"rx_ring_overflow", FixProfile, "rings.mana.rx", "1024 of max 8192"},
		{"mlx5 out of buffer (fake mlx5_core)", "mlx5_core", "rx_out_of_buffer", 1024, 8192,
			"rx_ring_overflow", FixProfile, "rings.mlx5_core.rx", "1024 of max 8192"},
		{"mlx5 ring already at max (fake mlx5_core)", "mlx5_core", "rx_out_of_buffer", 8192, 8192,
			"rx_ring_overflow", FixSize, "rings.mlx5_core.rx", "8192 of max 8192"},
		{"ENA bandwidth in (fake ena)", "ena", "bw_in_allowance_exceeded", 1024, 16384,
			"instance_allowance", FixSize, "", ""},
		{"ENA pps (fake ena)", "ena", "pps_allowance_exceeded", 1024, 16384,
			"instance_allowance", FixSize, "", ""},
		{"ENA conntrack allowance (fake ena)", "ena", "conntrack_allowance_exceeded", 1024, 16384,
			"instance_allowance", FixSize, "", ""},
		{"ENA link-local (fake ena)", "ena", "linklocal_allowance_exceeded", 1024, 16384,
			"not_a_node_setting", FixNotNodeSetting, "", ""},
		{"kernel missed counter on a driver without a curated one (fake mlx4_en)", "mlx4_en", "rx_missed_errors", 1024, 8192,
			"rx_ring_overflow", FixProfile, "rings.mlx4_en.rx", "1024 of max 8192"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := NewFakeNICs(newScripted())
			f.Add("eth1", &FakeNIC{Driver: c.driver, Role: "sriov-vf", RxRing: c.ring, RxMax: c.ringMax,
				Counters: map[string]uint64{c.counter: 7}})
			r := diagnoseAround(t, f, func() { f.Bump("eth1", c.counter, 500) })
			if len(r.Findings) != 1 {
				t.Fatalf("findings %+v, want exactly one", r.Findings)
			}
			got := r.Findings[0]
			if got.Cause != c.cause || got.Counter != c.counter || got.Interface != "eth1" || got.Driver != c.driver ||
				got.Delta != 500 || got.PerSecond != 50 || !got.Drops {
				t.Errorf("finding %+v", got)
			}
			if got.Fix.Kind != c.fixKind || got.Fix.Setting != c.setting || got.Fix.Current != c.current {
				t.Errorf("fix %+v, want kind %s setting %q current %q", got.Fix, c.fixKind, c.setting, c.current)
			}
		})
	}
}

// A ring below the driver's default (mlx5_core: 1,024) is told to come back to at least the default: the fix
// never names less than what `wirespeed size rings` would (issue 25). FakeNICs: mlx5_core cannot exist here.
func TestARingBelowTheDriverDefaultIsToldTheDefaultFakeMlx5(t *testing.T) {
	f := NewFakeNICs(newScripted())
	f.Add("eth1", &FakeNIC{Driver: "mlx5_core", Role: "sriov-vf", RxRing: 512, RxMax: 8192,
		Counters: map[string]uint64{"rx_out_of_buffer": 0}})
	r := diagnoseAround(t, f, func() { f.Bump("eth1", "rx_out_of_buffer", 10) })
	if len(r.Findings) != 1 {
		t.Fatalf("findings %+v", r.Findings)
	}
	fix := r.Findings[0].Fix
	if fix.Kind != FixProfile || fix.Current != "512 of max 8192" {
		t.Fatalf("fix %+v", fix)
	}
	if want := "the RX ring is 512, below mlx5_core's default 1024: set rings.mlx5_core.rx to at least 1024"; !strings.HasPrefix(fix.Advice, want) {
		t.Fatalf("advice %q, want it to start %q", fix.Advice, want)
	}
}

// One overflow is one finding: a driver counter that moved hides the kernel's missed counter of the same link.
func TestDriverCounterAndMissedCounterAreOneFinding(t *testing.T) {
	f := NewFakeNICs(newScripted())
	f.Add("enP1s1", &FakeNIC{Driver: "mana", RxRing: 512, RxMax: 8192})
	r := diagnoseAround(t, f, func() {
		f.Bump("enP1s1", "hc_rx_discards_no_wqe", 10)
		f.Bump("enP1s1", "rx_missed_errors", 10)
	})
	if len(r.Findings) != 1 || r.Findings[0].Counter != "hc_rx_discards_no_wqe" {
		t.Fatalf("findings %+v", r.Findings)
	}
}

func TestKernelCountersBecomeFindings(t *testing.T) {
	cases := []struct {
		name    string
		move    func(s *scripted)
		cause   string
		fixKind string
		setting string
		current string
	}{
		{"backlog drops", func(s *scripted) { s.softnet[1].Dropped += 120 }, "backlog_drops", FixProfile,
			`sysctls."net.core.netdev_max_backlog"`, "1000"},
		{"time squeeze", func(s *scripted) { s.softnet[0].TimeSqueeze += 3 }, "time_squeeze", FixProfile,
			`sysctls."net.core.netdev_budget"`, "netdev_budget 300, netdev_budget_usecs 2000"},
		{"udp receive buffer", func(s *scripted) { s.protocols.UDPRcvbufErrors += 9 }, "udp_receive_buffer",
			FixNotNodeSetting, "", "net.core.rmem_max 212992"},
		{"listen overflow", func(s *scripted) { s.protocols.ListenOverflows += 2 }, "listen_overflow",
			FixNotNodeSetting, "", ""},
		{"tcp backlog drop", func(s *scripted) { s.protocols.TCPBacklogDrop += 2 }, "tcp_backlog_drop",
			FixNotNodeSetting, "", ""},
		{"conntrack full", func(s *scripted) { s.conntrack.Drop += 40; s.conntrack.Count = 64 }, "conntrack_full",
			FixProfile, `sysctls."net.netfilter.nf_conntrack_max"`, "64"},
		{"conntrack near full", func(s *scripted) { s.conntrack.Count = 60 }, "conntrack_near_full",
			FixProfile, `sysctls."net.netfilter.nf_conntrack_max"`, "64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newScripted()
			s.conntrack = &Conntrack{Count: 10, Max: 64}
			r := diagnoseAround(t, s, func() { c.move(s) })
			if len(r.Findings) != 1 {
				t.Fatalf("findings %+v, want one", r.Findings)
			}
			got := r.Findings[0]
			if got.Cause != c.cause || got.Fix.Kind != c.fixKind || got.Fix.Setting != c.setting || got.Fix.Current != c.current {
				t.Errorf("finding %+v", got)
			}
		})
	}
}

func TestQuietNodeHasNoFindings(t *testing.T) {
	s := newScripted()
	s.conntrack = &Conntrack{Count: 10, Max: 64}
	f := NewFakeNICs(s)
	f.Add("eth0", &FakeNIC{Driver: "ena", Counters: map[string]uint64{"pps_allowance_exceeded": 5}})
	r := diagnoseAround(t, f, func() { s.protocols.RetransSegs += 20 })
	if len(r.Findings) != 0 {
		t.Fatalf("findings %+v", r.Findings)
	}
	if r.RetransmitsPerSecond != 2 {
		t.Errorf("retransmits %v/s, want 2 (context only)", r.RetransmitsPerSecond)
	}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "no known cause of packet loss seen in 10s\n") {
		t.Errorf("text %q", b.String())
	}
}

// Lost packets rank above signals, and among each by rate.
func TestFindingsAreRanked(t *testing.T) {
	s := newScripted()
	f := NewFakeNICs(s)
	f.Add("eth1", &FakeNIC{Driver: "mlx5_core", RxRing: 1024, RxMax: 8192})
	r := diagnoseAround(t, f, func() {
		s.softnet[0].TimeSqueeze += 100000 // a signal, however large
		s.softnet[0].Dropped += 50
		s.protocols.UDPRcvbufErrors += 5
		f.Bump("eth1", "rx_out_of_buffer", 900)
	})
	var got []string
	for _, x := range r.Findings {
		got = append(got, x.Cause)
	}
	want := "rx_ring_overflow backlog_drops udp_receive_buffer time_squeeze"
	if strings.Join(got, " ") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
}

// A counter that goes backwards was reset (a VF re-added by host servicing): what it counts now is new.
func TestCounterResetCountsFromZero(t *testing.T) {
	f := NewFakeNICs(newScripted())
	f.Add("eth1", &FakeNIC{Driver: "mana", RxRing: 512, RxMax: 8192, Counters: map[string]uint64{"hc_rx_discards_no_wqe": 1000}})
	r := diagnoseAround(t, f, func() { f.Bump("eth1", "hc_rx_discards_no_wqe", ^uint64(0)-1000+1+30) }) // wraps to 30
	if len(r.Findings) != 1 || r.Findings[0].Delta != 30 {
		t.Fatalf("findings %+v, want one of 30", r.Findings)
	}
}

func TestUnreadableSoftnetCannotDiagnose(t *testing.T) {
	s := newScripted()
	s.err = errors.New("permission denied")
	_, err := Take(s, t0)
	if !errors.Is(err, ErrCannotRead) || err.Error() != "cannot read softnet_stat: permission denied" {
		t.Fatalf("err %v", err)
	}
}

func TestTextNamesCounterRateCauseAndFix(t *testing.T) {
	s := newScripted()
	r := diagnoseAround(t, s, func() { s.softnet[1].Dropped += 120 })
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"1 finding(s) over 10s, most damaging first:",
		"1. backlog_drops: softnet_stat dropped +120 (12.0/s)",
		"fix (profile): sysctls.\"net.core.netdev_max_backlog\" (now 1000): raise net.core.netdev_max_backlog",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
