package snat

import (
	"net/netip"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// flow builds a flow from pod 10.244.1.10 (port sport) to peer.
func flow(id uint32, sport uint16, peer string, proto uint8) Flow {
	return Flow{ID: id, Proto: proto, OrigSrc: netip.MustParseAddr("10.244.1.10"), OrigSrcPort: sport,
		OrigDstPort: netip.MustParseAddrPort(peer).Port(), Peer: netip.MustParseAddrPort(peer)}
}

func newTable(t *testing.T, hold time.Duration, top int) *Table {
	t.Helper()
	return NewTable(Config{Classifier: NewClassifier(nil, false), TCPHold: hold, UDPHold: hold, Top: top, PeakWindow: time.Hour,
		MaxTracked: 1000}, t0)
}

func inUse(s Snapshot) map[string]int {
	out := map[string]int{}
	for _, u := range s.Top {
		out[u.Destination] = u.InUse
	}
	if s.OtherInUse > 0 {
		out["other"] = s.OtherInUse
	}
	return out
}

func same(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestClassifierCountsOnlyFlowsFromInsideToOutside(t *testing.T) {
	c := NewClassifier([]netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}, true)
	cases := []struct {
		name string
		f    Flow
		want string
	}{
		{"pod to public tcp", flow(1, 1000, "52.1.2.3:443", ProtoTCP), "52.1.2.3:443/tcp"},
		// Azure load balancer: a port-restricted cone NAT, one port per UDP flow whatever its destination.
		{"udp in one pool on an Azure load balancer", flow(1, 1000, "52.1.2.3:53", ProtoUDP), "*:*/udp"},
		{"udp elsewhere in the same pool", flow(1, 1000, "52.9.9.9:123", ProtoUDP), "*:*/udp"},
		{"ipv6", Flow{Proto: ProtoTCP, OrigSrc: netip.MustParseAddr("fd00::5"),
			Peer: netip.MustParseAddrPort("[2001:db8::1]:443")}, "[2001:db8::1]:443/tcp"},
		{"private peer", flow(1, 1000, "10.0.0.10:443", ProtoTCP), ""},
		{"CGNAT peer", flow(1, 1000, "100.64.3.4:443", ProtoTCP), ""},
		{"link-local IMDS", flow(1, 1000, "169.254.169.254:80", ProtoTCP), ""},
		{"Azure host IP", flow(1, 1000, "168.63.129.16:53", ProtoUDP), ""},
		{"extra exclude", flow(1, 1000, "203.0.113.9:443", ProtoTCP), ""},
		{"ULA peer", Flow{Proto: ProtoTCP, OrigSrc: netip.MustParseAddr("fd00::5"),
			Peer: netip.MustParseAddrPort("[fd12::1]:443")}, ""},
		{"icmp takes no port", flow(1, 0, "52.1.2.3:0", 1), ""},
		{"inbound from the internet", Flow{Proto: ProtoTCP, OrigSrc: netip.MustParseAddr("52.9.9.9"),
			Peer: netip.MustParseAddrPort("52.1.2.3:443")}, ""},
	}
	for _, tc := range cases {
		d, ok := c.Destination(tc.f)
		if got := map[bool]string{true: d.String(), false: ""}[ok]; got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestOpenAndHeldFlowsCountPerDestination(t *testing.T) {
	tb := newTable(t, 10*time.Second, 20)
	for i := range 5 {
		tb.New(flow(uint32(i), uint16(1000+i), "52.1.2.3:443", ProtoTCP), at(0))
	}
	for i := range 3 {
		tb.New(flow(uint32(100+i), uint16(2000+i), "52.1.2.4:443", ProtoTCP), at(0))
	}
	tb.New(flow(200, 3000, "10.1.1.1:443", ProtoTCP), at(0)) // internal: never counted
	if got := inUse(tb.Tick(at(1))); !same(got, map[string]int{"52.1.2.3:443/tcp": 5, "52.1.2.4:443/tcp": 3}) {
		t.Fatalf("open: %v", got)
	}
	// Two close at t=2; they went quiet 1 s before removal (their TIME_WAIT), so they hold until 1+10 = 11.
	for i := range 2 {
		f := flow(uint32(i), uint16(1000+i), "52.1.2.3:443", ProtoTCP)
		f.Quiet = time.Second
		tb.Destroy(f, at(2))
	}
	s := tb.Tick(at(10.5))
	if s.Top[0].InUse != 5 || s.Top[0].Open != 3 {
		t.Fatalf("within the hold: %+v", s.Top[0])
	}
	if s = tb.Tick(at(11)); s.Top[0].InUse != 3 || s.Max != 3 {
		t.Fatalf("after the hold: %+v", s)
	}
	if s.Peak != 5 {
		t.Fatalf("peak = %d, want 5", s.Peak)
	}
}

// Open counts every destination's open flows, named or not, and none of the held ones: it is what the
// metrics set beside the kernel's nf_conntrack_count.
func TestOpenCountsEveryDestinationsOpenFlows(t *testing.T) {
	tb := newTable(t, 10*time.Second, 1)
	for i := range 5 {
		tb.New(flow(uint32(i), uint16(1000+i), "52.1.2.3:443", ProtoTCP), at(0))
	}
	tb.New(flow(100, 2000, "52.1.2.4:53", ProtoUDP), at(0))
	tb.New(flow(200, 3000, "10.1.1.1:443", ProtoTCP), at(0)) // internal: never counted
	if s := tb.Tick(at(1)); s.Open != 6 || len(s.Top) != 1 {
		t.Fatalf("open: %+v", s)
	}
	tb.Destroy(flow(0, 1000, "52.1.2.3:443", ProtoTCP), at(2))
	tb.Destroy(flow(100, 2000, "52.1.2.4:53", ProtoUDP), at(2))
	if s := tb.Tick(at(2)); s.Open != 4 || s.Max != 5 {
		t.Fatalf("after two closes (held, not open): %+v", s)
	}
}

func TestAFlowClosedLongerAgoThanTheHoldIsNotHeld(t *testing.T) {
	tb := newTable(t, 10*time.Second, 20)
	f := flow(1, 1000, "52.1.2.3:443", ProtoTCP)
	tb.New(f, at(0))
	f.Quiet = 120 * time.Second // removed from TIME_WAIT 120 s after its close: its hold has passed
	tb.Destroy(f, at(130))
	if s := tb.Tick(at(130)); s.Max != 0 || s.Tracked != 0 || s.Destinations != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestTopKAndOtherWithMonotonicCounters(t *testing.T) {
	tb := newTable(t, 0, 2)
	add := func(id uint32, peer string, n int, sec float64) {
		for i := range n {
			tb.New(flow(id+uint32(i), uint16(id)+uint16(i), peer, ProtoTCP), at(sec))
		}
	}
	add(100, "52.0.0.1:443", 5, 0)
	add(200, "52.0.0.2:443", 4, 0)
	add(300, "52.0.0.3:443", 1, 0)
	s := tb.Tick(at(1))
	if !same(inUse(s), map[string]int{"52.0.0.1:443/tcp": 5, "52.0.0.2:443/tcp": 4, "other": 1}) {
		t.Fatalf("%v", inUse(s))
	}
	// Before the first Tick nothing was named: those 10 new connections went to "other".
	if s.OtherNew != 10 || s.Top[0].New != 0 {
		t.Fatalf("new: other %d, top %+v", s.OtherNew, s.Top)
	}
	add(400, "52.0.0.1:443", 2, 1)
	add(500, "52.0.0.3:443", 5, 1) // .3 overtakes .2
	s = tb.Tick(at(2))
	if !same(inUse(s), map[string]int{"52.0.0.3:443/tcp": 6, "52.0.0.1:443/tcp": 7, "other": 4}) {
		t.Fatalf("%v", inUse(s))
	}
	// .1 was named: its 2 new count on its series; .3 was not: its 5 went to "other", and its series
	// starts at 0 now that it is named.
	news := map[string]uint64{}
	for _, u := range s.Top {
		news[u.Destination] = u.New
	}
	if news["52.0.0.1:443/tcp"] != 2 || news["52.0.0.3:443/tcp"] != 0 || s.OtherNew != 15 {
		t.Fatalf("new: %v other %d", news, s.OtherNew)
	}
}

func TestDumpAndEventsRaceWithoutDoubleCounting(t *testing.T) {
	tb := newTable(t, 5*time.Second, 20)
	a, b, c := flow(1, 1001, "52.1.2.3:443", ProtoTCP), flow(2, 1002, "52.1.2.3:443", ProtoTCP),
		flow(3, 1003, "52.1.2.3:443", ProtoTCP)
	tb.BeginDump()
	tb.New(a, at(0)) // an event for a flow the dump reports too
	tb.Dumped(a, at(0), false)
	tb.Destroy(b, at(0))       // destroyed while the dump runs, before the dump's message for it is read
	tb.Dumped(b, at(0), false) // must not come back to life
	tb.Dumped(c, at(0), false)
	tb.EndDump(at(0), true)
	s := tb.Tick(at(0))
	if s.Top[0].Open != 2 || s.Top[0].InUse != 3 {
		t.Fatalf("%+v", s.Top[0])
	}
}

// A sweep closes only the flows no NEW event reported (their DESTROY never comes); an evented flow missing
// from it has expired but waits for its DESTROY, which holds its port once. A NEW event for a dumped flow
// makes it evented.
func TestASweepClosesOnlyFlowsNoEventReported(t *testing.T) {
	tb := newTable(t, 5*time.Second, 20)
	old, raced, evented := flow(1, 1001, "52.1.2.3:443", ProtoTCP), flow(2, 1002, "52.1.2.3:443", ProtoTCP),
		flow(3, 1003, "52.1.2.3:443", ProtoTCP)
	tb.BeginDump()
	tb.Dumped(old, at(0), false)
	tb.Dumped(raced, at(0), false)
	tb.New(raced, at(0))
	tb.EndDump(at(0), true)
	tb.New(evented, at(1))
	if n := tb.Unevented(); n != 1 {
		t.Fatalf("unevented = %d, want 1 (old)", n)
	}
	tb.BeginRedump() // a sweep that still finds old: it stays unevented (no NEW event reported it)
	tb.Dumped(old, at(5), false)
	tb.EndSweep(at(5), true)
	if n := tb.Unevented(); n != 1 {
		t.Fatalf("after a sweep that found it: unevented = %d, want 1", n)
	}
	tb.BeginRedump() // the sweep finds none of them (old and evented expired, raced too), and a new one
	tb.Dumped(flow(4, 1004, "52.1.2.3:443", ProtoTCP), at(10), false)
	tb.EndSweep(at(10), true)
	s := tb.Tick(at(10))
	// The new one was made while subscribed: its DESTROY comes, so it is not unevented.
	if n := tb.Unevented(); n != 0 || s.Open != 3 || s.Top[0].InUse != 4 {
		t.Fatalf("after the sweep: unevented %d, %+v", n, s)
	}
	tb.Destroy(evented, at(11))
	if s = tb.Tick(at(11)); s.Open != 2 || s.Top[0].InUse != 4 {
		t.Fatalf("after the DESTROY: %+v", s)
	}
}

func TestRedumpClosesFlowsWhoseDestroyWasLost(t *testing.T) {
	tb := newTable(t, 5*time.Second, 20)
	a, b := flow(1, 1001, "52.1.2.3:443", ProtoTCP), flow(2, 1002, "52.1.2.3:443", ProtoTCP)
	tb.New(a, at(0))
	tb.New(b, at(0))
	// Events were lost: b ended and d started unseen. The re-dump reports a and d.
	d := flow(4, 1004, "52.1.2.3:443", ProtoTCP)
	tb.BeginDump()
	tb.Dumped(a, at(10), true)
	tb.Dumped(d, at(10), true)
	tb.EndDump(at(10), true)
	s := tb.Tick(at(10))
	if s.Top[0].Open != 2 || s.Top[0].InUse != 3 || s.OtherNew != 3 {
		t.Fatalf("after the re-dump: %+v (b held, d counted as new)", s)
	}
	if s = tb.Tick(at(15)); s.Top[0].InUse != 2 {
		t.Fatalf("b's hold ends: %+v", s.Top[0])
	}
	// An incomplete dump closes nothing.
	tb.BeginDump()
	tb.EndDump(at(16), false)
	if s = tb.Tick(at(16)); s.Top[0].Open != 2 {
		t.Fatalf("incomplete dump closed flows: %+v", s.Top[0])
	}
}

// A flow that ended while events were lost is closed by the re-dump; its DESTROY, read a moment later from
// the socket's buffer, does not hold its port a second time. One arriving long after is a flow of its own.
func TestALateDestroyAfterARedumpIsNotCountedTwice(t *testing.T) {
	tb := newTable(t, 5*time.Second, 20)
	a, b := flow(1, 1001, "52.1.2.3:443", ProtoTCP), flow(2, 1002, "52.1.2.3:443", ProtoTCP)
	tb.New(a, at(0))
	tb.New(b, at(0))
	tb.BeginDump()
	tb.Dumped(a, at(10), true)
	tb.EndDump(at(10), true) // b is gone: closed and held
	tb.Destroy(b, at(10.1))  // its DESTROY, queued behind the dump
	if s := tb.Tick(at(10.2)); s.Top[0].Open != 1 || s.Top[0].InUse != 2 {
		t.Fatalf("after b's late DESTROY: %+v, want a open and b held once", s.Top[0])
	}
	// Past sweptGrace a DESTROY is taken as a flow the table never saw, which still held a port: c, closed by a
	// dump at 11, is then held twice (the over-count the grace bounds on a machine that reads this late).
	c := flow(3, 1003, "52.1.2.3:443", ProtoTCP)
	tb.New(c, at(10.5))
	tb.BeginDump()
	tb.Dumped(a, at(11), true)
	tb.EndDump(at(11), true)
	tb.Tick(at(14))
	tb.Destroy(c, at(14))
	if s := tb.Tick(at(14)); s.Top[0].InUse != 4 {
		t.Fatalf("a DESTROY after the grace: %+v, want a open, b held, c held twice: 4", s.Top[0])
	}
	// The DESTROY of a flow it did not know lent the source address its handle for the hold only.
	if src := tb.srcs.addrs[tb.flows[tb.find(a.key())].src]; src.refs != 1 {
		t.Fatalf("a's source address is named %d times, only a is open", src.refs)
	}
}

func TestMemoryIsBoundedAndWhatIsLeftOutIsCounted(t *testing.T) {
	tb := NewTable(Config{Classifier: NewClassifier(nil, false), TCPHold: time.Minute, UDPHold: time.Minute, Top: 5, PeakWindow: time.Hour,
		MaxTracked: 10}, t0)
	for i := range 15 {
		tb.New(flow(uint32(i), uint16(1000+i), "52.1.2.3:443", ProtoTCP), at(0))
	}
	s := tb.Tick(at(0))
	if s.Tracked != 10 || s.Untracked != 5 || s.Max != 10 {
		t.Fatalf("%+v", s)
	}
	// Closing frees a flow but holds a (destination, second) pair: still within the bound.
	for i := range 10 {
		tb.Destroy(flow(uint32(i), uint16(1000+i), "52.1.2.3:443", ProtoTCP), at(1))
	}
	if s = tb.Tick(at(1)); s.Tracked != 1 || s.Max != 10 {
		t.Fatalf("held: %+v", s)
	}
	if s = tb.Tick(at(62)); s.Tracked != 0 || s.Destinations != 0 {
		t.Fatalf("expired: %+v", s)
	}
}

func TestPeakSlidesOutOfItsWindow(t *testing.T) {
	tb := NewTable(Config{Classifier: NewClassifier(nil, false), Top: 5, PeakWindow: 10 * time.Second,
		MaxTracked: 100}, t0)
	for i := range 7 {
		tb.New(flow(uint32(i), uint16(1000+i), "52.1.2.3:443", ProtoTCP), at(0))
	}
	for i := range 7 {
		tb.Destroy(flow(uint32(i), uint16(1000+i), "52.1.2.3:443", ProtoTCP), at(1))
	}
	if s := tb.Tick(at(5)); s.Peak != 7 || s.Max != 0 {
		t.Fatalf("%+v", s)
	}
	if s := tb.Tick(at(11)); s.Peak != 0 {
		t.Fatalf("peak past its window: %+v", s)
	}
}

func TestTickAfterALongSleepExpiresEverything(t *testing.T) {
	tb := newTable(t, 3*time.Second, 5)
	for i := range 4 {
		f := flow(uint32(i), uint16(1000+i), "52.1.2.3:443", ProtoTCP)
		tb.New(f, at(0))
		tb.Destroy(f, at(float64(i)))
	}
	if s := tb.Tick(at(1000)); s.Max != 0 || s.Tracked != 0 {
		t.Fatalf("%+v", s)
	}
}

// Each protocol's flows hold their ports for its own hold: TCP from its close, UDP from its last packet (the
// DESTROY's Quiet dates both back from the entry's removal), down to the second.
func TestEndedFlowsHoldTheirPortsForTheirProtocolsHold(t *testing.T) {
	tb := NewTable(Config{Classifier: NewClassifier(nil, false), TCPHold: 5 * time.Second, UDPHold: 60 * time.Second,
		Top: 10, PeakWindow: time.Hour, MaxTracked: 1000}, t0)
	tcp, udp := flow(1, 1000, "52.1.2.3:443", ProtoTCP), flow(2, 1001, "52.1.2.3:53", ProtoUDP)
	short := flow(3, 1002, "52.1.2.3:53", ProtoUDP)
	tb.New(tcp, at(0))
	tb.New(udp, at(0))
	tb.New(short, at(0))
	check := func(sec float64, want map[string]int) {
		t.Helper()
		if got := inUse(tb.Tick(at(sec))); !same(got, want) {
			t.Errorf("at %.1fs: %v, want %v", sec, got, want)
		}
	}
	// TCP closed at 8 s, its entry removed 2 s later (TIME_WAIT): held until 8 + 5.
	tcp.Quiet = 2 * time.Second
	tb.Destroy(tcp, at(10))
	check(12.9, map[string]int{"52.1.2.3:443/tcp": 1, "52.1.2.3:53/udp": 2})
	check(13, map[string]int{"52.1.2.3:53/udp": 2})
	// UDP: last packet at 10 s, entry removed at conntrack's 30 s UDP timeout: held until 10 + 60.
	udp.Quiet = 30 * time.Second
	tb.Destroy(udp, at(40))
	check(60.9, map[string]int{"52.1.2.3:53/udp": 2})
	// A UDP flow whose conntrack timeout outlasted its hold (last packet at 0, removed at 61): counted while its
	// entry lived, not held after.
	short.Quiet = 61 * time.Second
	tb.Destroy(short, at(61))
	check(61, map[string]int{"52.1.2.3:53/udp": 1})
	check(69.9, map[string]int{"52.1.2.3:53/udp": 1})
	check(70, map[string]int{})
}

// A flow a complete dump no longer finds ended while events were lost, at an unknown time: it is held for its
// own protocol's whole hold from the dump's end.
func TestSweptFlowsHoldForTheirProtocolsHold(t *testing.T) {
	tb := NewTable(Config{Classifier: NewClassifier(nil, false), TCPHold: 3 * time.Second, UDPHold: 7 * time.Second,
		Top: 10, PeakWindow: time.Hour, MaxTracked: 1000}, t0)
	tb.New(flow(1, 1000, "52.1.2.3:443", ProtoTCP), at(0))
	tb.New(flow(2, 1001, "52.1.2.3:53", ProtoUDP), at(0))
	tb.BeginDump()
	tb.EndDump(at(10), true)
	// The sweep forgot the flows and, with the last of them, their source address.
	if tb.open.len() != 0 || tb.srcs.at.len() != 0 {
		t.Fatalf("after the sweep: %d flows, %d addresses kept", tb.open.len(), tb.srcs.at.len())
	}
	for _, c := range []struct {
		sec  float64
		want map[string]int
	}{
		{12.9, map[string]int{"52.1.2.3:443/tcp": 1, "52.1.2.3:53/udp": 1}},
		{13, map[string]int{"52.1.2.3:53/udp": 1}},
		{16.9, map[string]int{"52.1.2.3:53/udp": 1}},
		{17, map[string]int{}},
	} {
		if got := inUse(tb.Tick(at(c.sec))); !same(got, c.want) {
			t.Errorf("at %.1fs: %v, want %v", c.sec, got, c.want)
		}
	}
}
