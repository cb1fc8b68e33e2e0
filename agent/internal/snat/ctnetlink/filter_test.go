package ctnetlink

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// The kernel filter runs for real here: attached to the receiving end of a Unix datagram socket pair, the kernel
// runs it on every datagram sent (SKF_AD_NLATTR reads any linear buffer as netlink attributes), so the test
// sees exactly which ctnetlink messages it would let through to the agent.

// ctMessage encodes a ctnetlink event the way the kernel lays it out (nlmsghdr, nfgenmsg, nested tuples).
type ctMessage struct {
	proto            uint8
	origSrc, origDst netip.Addr
	replySrc         netip.Addr
	sport, dport     uint16
	id               uint32
	destroy          bool
	noProto          bool // leave CTA_TUPLE_PROTO out
}

func nla(typ uint16, payload []byte) []byte {
	n := 4 + len(payload)
	b := make([]byte, (n+3)&^3)
	binary.NativeEndian.PutUint16(b, uint16(n))
	binary.NativeEndian.PutUint16(b[2:], typ)
	copy(b[4:], payload)
	return b
}

func nest(typ uint16, attrs ...[]byte) []byte {
	var p []byte
	for _, a := range attrs {
		p = append(p, a...)
	}
	return nla(typ|unix.NLA_F_NESTED, p)
}

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

func (m ctMessage) tuple(typ uint16, src, dst netip.Addr, sport, dport uint16) []byte {
	srcType, dstType := uint16(ctaIPv4Src), uint16(ctaIPv4Src+1)
	if src.Is6() {
		srcType, dstType = ctaIPv6Src, ctaIPv6Src+1
	}
	ip := nest(ctaTupleIP, nla(srcType, src.AsSlice()), nla(dstType, dst.AsSlice()))
	if m.noProto {
		return nest(typ, ip)
	}
	proto := nest(ctaTupleProto, nla(ctaProtoNum, []byte{m.proto}), nla(ctaProtoSrcPort, be16(sport)),
		nla(ctaProtoDstPort, be16(dport)))
	return nest(typ, ip, proto)
}

func (m ctMessage) encode() []byte {
	body := []byte{unix.AF_INET, 0, 0, 0} // nfgenmsg
	if m.origSrc.Is6() {
		body[0] = unix.AF_INET6
	}
	body = append(body, m.tuple(ctaTupleOrig, m.origSrc, m.origDst, m.sport, m.dport)...)
	body = append(body, m.tuple(ctaTupleReply, m.replySrc, m.origSrc, m.dport, m.sport)...)
	body = append(body, nla(ctaStatus, binary.BigEndian.AppendUint32(nil, 0x8))...)
	body = append(body, nla(ctaID, binary.BigEndian.AppendUint32(nil, m.id))...)
	typ, flags := uint16(ctSubsys<<8|ctNew), uint16(unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	if m.destroy {
		typ, flags = ctSubsys<<8|ctDelete, 0
	}
	h := make([]byte, nlmsgHeaderBytes)
	binary.NativeEndian.PutUint32(h, uint32(nlmsgHeaderBytes+len(body)))
	binary.NativeEndian.PutUint16(h[4:], typ)
	binary.NativeEndian.PutUint16(h[6:], flags)
	return append(h, body...)
}

// filteredPair is a socket pair whose receiving end carries the event filter for c.
func filteredPair(t *testing.T, c snat.Classifier) (send, recv int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(fds[0]); _ = unix.Close(fds[1]) })
	prog, err := eventFilter(c.InternalPrefixes())
	if err != nil {
		t.Fatal(err)
	}
	if err := attachFilter(fds[1], prog); err != nil {
		t.Fatal(err)
	}
	return fds[0], fds[1]
}

// passes sends b and reports whether the filter let it through.
func passes(t *testing.T, send, recv int, b []byte) bool {
	t.Helper()
	if err := unix.Send(send, b, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(recv, buf, unix.MSG_DONTWAIT)
	if err == unix.EAGAIN {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if n != len(b) {
		t.Fatalf("the filter cut a %d-byte message to %d bytes", len(b), n)
	}
	return true
}

// counted is what the agent does with a message: decode it and ask the Classifier.
func counted(t *testing.T, c snat.Classifier, b []byte) bool {
	t.Helper()
	n := 0
	if err := fixtureTimeouts.events(b, func(f snat.Flow, _ bool) {
		if _, ok := c.Destination(f); ok {
			n++
		}
	}); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestFilterPassesWhatCountsAndDropsTheRest(t *testing.T) {
	c := snat.NewClassifier(mustPrefixes("203.0.113.0/28", "2001:db8:aa::/48"), false)
	send, recv := filteredPair(t, c)
	a := netip.MustParseAddr
	for _, tc := range []struct {
		name string
		m    ctMessage
		pass bool
	}{
		{"pod to the internet over TCP", ctMessage{proto: snat.ProtoTCP, origSrc: a("10.244.1.10"), origDst: a("52.1.2.3"), replySrc: a("52.1.2.3")}, true},
		{"node to the internet over UDP, destroyed", ctMessage{proto: snat.ProtoUDP, origSrc: a("10.240.0.4"), origDst: a("8.8.8.8"), replySrc: a("8.8.8.8"), destroy: true}, true},
		{"ICMP", ctMessage{proto: 1, origSrc: a("10.244.1.10"), origDst: a("52.1.2.3"), replySrc: a("52.1.2.3")}, false},
		{"SCTP", ctMessage{proto: 132, origSrc: a("10.244.1.10"), origDst: a("52.1.2.3"), replySrc: a("52.1.2.3")}, false},
		{"pod to pod", ctMessage{proto: snat.ProtoTCP, origSrc: a("10.244.1.10"), origDst: a("10.244.2.7"), replySrc: a("10.244.2.7")}, false},
		{"to an excluded CIDR", ctMessage{proto: snat.ProtoTCP, origSrc: a("10.244.1.10"), origDst: a("203.0.113.9"), replySrc: a("203.0.113.9")}, false},
		{"just past an excluded CIDR", ctMessage{proto: snat.ProtoTCP, origSrc: a("10.244.1.10"), origDst: a("203.0.113.16"), replySrc: a("203.0.113.16")}, true},
		{"a Service DNATed outside", ctMessage{proto: snat.ProtoTCP, origSrc: a("10.244.1.10"), origDst: a("10.0.0.10"), replySrc: a("52.1.2.3")}, true},
		{"inbound from the internet", ctMessage{proto: snat.ProtoTCP, origSrc: a("52.1.2.3"), origDst: a("10.240.0.4"), replySrc: a("10.240.0.4")}, false},
		{"to Azure's host address", ctMessage{proto: snat.ProtoUDP, origSrc: a("10.240.0.4"), origDst: a("168.63.129.16"), replySrc: a("168.63.129.16")}, false},
		{"IPv6 pod to the internet", ctMessage{proto: snat.ProtoTCP, origSrc: a("fd00::10"), origDst: a("2600::1"), replySrc: a("2600::1")}, true},
		{"IPv6 to an excluded CIDR", ctMessage{proto: snat.ProtoTCP, origSrc: a("fd00::10"), origDst: a("2001:db8:aa:1::1"), replySrc: a("2001:db8:aa:1::1")}, false},
		{"IPv6 inbound", ctMessage{proto: snat.ProtoTCP, origSrc: a("2600::1"), origDst: a("fd00::10"), replySrc: a("fd00::10")}, false},
		{"IPv4-mapped: left to the agent", ctMessage{proto: snat.ProtoTCP, origSrc: a("::ffff:10.0.0.1"), origDst: a("::ffff:10.0.0.2"), replySrc: a("::ffff:10.0.0.2")}, true},
		{"no protocol: left to the agent", ctMessage{noProto: true, origSrc: a("10.244.1.10"), origDst: a("10.0.0.2"), replySrc: a("10.0.0.2")}, true},
	} {
		if got := passes(t, send, recv, tc.m.encode()); got != tc.pass {
			t.Errorf("%s: passed %v, want %v", tc.name, got, tc.pass)
		}
	}
}

// Over many random flows the filter passes everything the agent counts and drops everything else, except the
// IPv4-mapped addresses it leaves to the agent.
func TestFilterAgreesWithTheClassifier(t *testing.T) {
	extra := mustPrefixes("10.244.0.0/16", "198.51.100.0/22", "100.64.7.0/31", "2001:db8:1234::/47", "2600:1f18::/33")
	c := snat.NewClassifier(extra, true)
	send, recv := filteredPair(t, c)
	r := rand.New(rand.NewPCG(19, 2))
	all := append(append([]netip.Prefix{}, snat.DefaultInternal...), extra...)
	addr := func(v6 bool) netip.Addr {
		// Half inside a random internal prefix, near its edges; half anywhere.
		var b [16]byte
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if !v6 {
			a := netip.AddrFrom4([4]byte(b[:4]))
			if p := all[r.IntN(len(all))]; r.IntN(2) == 0 && p.Addr().Is4() {
				a = edge(p, b)
			}
			return a
		}
		a := netip.AddrFrom16(b)
		if p := all[r.IntN(len(all))]; r.IntN(2) == 0 && p.Addr().Is6() {
			a = edge(p, b)
		}
		return a
	}
	protos := []uint8{snat.ProtoTCP, snat.ProtoUDP, snat.ProtoTCP, snat.ProtoUDP, 1, 58, 132}
	for i := range 4000 {
		v6 := i%2 == 1
		m := ctMessage{proto: protos[r.IntN(len(protos))], origSrc: addr(v6), origDst: addr(v6), replySrc: addr(v6),
			sport: uint16(r.Uint32()), dport: 443, id: r.Uint32(), destroy: r.IntN(2) == 0}
		b := m.encode()
		if got, want := passes(t, send, recv, b), counted(t, c, b); got != want {
			t.Fatalf("%+v: the filter passed %v, the agent counts %v", m, got, want)
		}
	}
}

// edge is an address inside p whose host bits come from b, or one just outside it when b says so.
func edge(p netip.Prefix, b [16]byte) netip.Addr {
	base := p.Masked().Addr().AsSlice()
	for i := range base {
		bit := i * 8
		if bit >= p.Bits() {
			base[i] = b[i]
		} else if bit+8 > p.Bits() {
			keep := byte(0xff) << (8 - (p.Bits() - bit))
			base[i] = base[i]&keep | b[i]&^keep
		}
	}
	if b[15]&1 == 1 && p.Bits() > 0 { // flip the last prefix bit: just outside
		i := (p.Bits() - 1) / 8
		base[i] ^= 1 << (7 - (p.Bits()-1)%8)
	}
	a, _ := netip.AddrFromSlice(base)
	return a
}

func TestFilterWithTooManyPrefixesJudgesTheProtocolOnly(t *testing.T) {
	var extra []netip.Prefix
	for i := range maxFilterPrefixes {
		extra = append(extra, netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(i), 0}), 24))
	}
	c := snat.NewClassifier(extra, false)
	send, recv := filteredPair(t, c)
	a := netip.MustParseAddr
	podToPod := ctMessage{proto: snat.ProtoTCP, origSrc: a("10.244.1.10"), origDst: a("10.244.2.7"), replySrc: a("10.244.2.7")}
	icmp := ctMessage{proto: 1, origSrc: a("10.244.1.10"), origDst: a("52.1.2.3"), replySrc: a("52.1.2.3")}
	if !passes(t, send, recv, podToPod.encode()) || passes(t, send, recv, icmp.encode()) {
		t.Fatal("with too many prefixes the filter should pass TCP/UDP and drop the rest")
	}
}
