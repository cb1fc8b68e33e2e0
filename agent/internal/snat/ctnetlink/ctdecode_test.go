package ctnetlink

import (
	"encoding/binary"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
	"github.com/ti-mo/conntrack"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// testdata/events.bin and testdata/dump.bin are ctnetlink datagrams recorded from Linux 6.18.44 (Debian 12
// VM) in the node namespace of bench/agent/snat under its load (pods 10.244.1.10 masqueraded to 10.240.0.4,
// destinations 192.0.2.1-50:443 TCP and UDP): 200 event datagrams (NEW and DESTROY) and the first two
// datagrams of a dump. Each is stored as a native-endian uint32 length and the bytes as received.

func datagrams(t testing.TB, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for len(b) >= 4 {
		n := int(binary.NativeEndian.Uint32(b))
		out, b = append(out, b[4:4+n]), b[4+n:]
	}
	return out
}

var fixtureTimeouts = Timeouts{TCPTimeWait: 25 * time.Second, TCPClose: 10 * time.Second, UDP: 25 * time.Second,
	UDPStream: 120 * time.Second}

// reference decodes a datagram the way the agent did before ctdecode.go: every message into a ti-mo/conntrack
// Flow, then the fields the accounting reads.
func reference(t testing.TB, b []byte, events bool) (flows []snat.Flow, destroyed []bool) {
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		var ev conntrack.Event
		nm := netlink.Message{Header: netlink.Header{Length: m.Header.Len, Type: netlink.HeaderType(m.Header.Type),
			Flags: netlink.HeaderFlags(m.Header.Flags)}, Data: m.Data}
		if err := ev.Unmarshal(nm); err != nil || ev.Flow == nil {
			continue
		}
		if events && ev.Type != conntrack.EventNew && ev.Type != conntrack.EventDestroy {
			continue
		}
		d := ev.Type == conntrack.EventDestroy && events
		flows, destroyed = append(flows, referenceFlow(ev.Flow, d)), append(destroyed, d)
	}
	return flows, destroyed
}

func referenceFlow(f *conntrack.Flow, destroyed bool) snat.Flow {
	out := snat.Flow{ID: f.ID, Zone: f.Zone, Proto: f.TupleOrig.Proto.Protocol, OrigSrc: f.TupleOrig.IP.SourceAddress,
		OrigSrcPort: f.TupleOrig.Proto.SourcePort, OrigDstPort: f.TupleOrig.Proto.DestinationPort}
	out.Peer = netip.AddrPortFrom(f.TupleReply.IP.SourceAddress, f.TupleReply.Proto.SourcePort)
	if !destroyed {
		return out
	}
	switch {
	case out.Proto == snat.ProtoTCP && f.ProtoInfo.TCP != nil && f.ProtoInfo.TCP.State == tcpTimeWait:
		out.Quiet = fixtureTimeouts.TCPTimeWait
	case out.Proto == snat.ProtoTCP && f.ProtoInfo.TCP != nil && f.ProtoInfo.TCP.State == tcpClose:
		out.Quiet = fixtureTimeouts.TCPClose
	case out.Proto == snat.ProtoUDP && f.Status.Assured():
		out.Quiet = fixtureTimeouts.UDPStream
	case out.Proto == snat.ProtoUDP:
		out.Quiet = fixtureTimeouts.UDP
	}
	return out
}

func TestDecodeEventsMatchesTiMo(t *testing.T) {
	var news, destroys int
	for i, b := range datagrams(t, "events.bin") {
		want, wantDestroyed := reference(t, b, true)
		var got []snat.Flow
		var gotDestroyed []bool
		err := fixtureTimeouts.events(b, func(f snat.Flow, d bool) { got, gotDestroyed = append(got, f), append(gotDestroyed, d) })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("datagram %d: %d flows, ti-mo/conntrack reads %d", i, len(got), len(want))
		}
		for j := range got {
			if got[j] != want[j] || gotDestroyed[j] != wantDestroyed[j] {
				t.Errorf("datagram %d: %+v (destroyed %v), ti-mo/conntrack reads %+v (%v)", i, got[j],
					gotDestroyed[j], want[j], wantDestroyed[j])
			}
			if gotDestroyed[j] {
				destroys++
			} else {
				news++
			}
		}
	}
	// The recording holds both kinds, TCP and UDP, with quiet times: the comparison covers them all.
	if news == 0 || destroys == 0 {
		t.Fatalf("fixture has %d NEW and %d DESTROY events; want both", news, destroys)
	}
}

func TestDecodeDumpMatchesTiMo(t *testing.T) {
	total := 0
	for i, b := range datagrams(t, "dump.bin") {
		want, _ := reference(t, b, false)
		var got []snat.Flow
		done, err := fixtureTimeouts.dumped(b, func(f snat.Flow) { got = append(got, f) })
		if err != nil || done {
			t.Fatalf("datagram %d: done %v, err %v", i, done, err)
		}
		if len(got) != len(want) {
			t.Fatalf("datagram %d: %d entries, ti-mo/conntrack reads %d", i, len(got), len(want))
		}
		for j := range got {
			if got[j] != want[j] {
				t.Errorf("datagram %d: %+v, ti-mo/conntrack reads %+v", i, got[j], want[j])
			}
		}
		total += len(got)
	}
	if total < 100 {
		t.Fatalf("only %d dump entries decoded", total)
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	b := datagrams(t, "events.bin")[0]
	for _, cut := range []int{3, 15, len(b) - 1} {
		if err := fixtureTimeouts.events(b[:cut], func(snat.Flow, bool) { t.Errorf("a flow from %d bytes", cut) }); err == nil {
			t.Errorf("%d of %d bytes: no error", cut, len(b))
		}
	}
	// A header claiming more than the datagram holds is an error, not a read past its end.
	bad := append([]byte(nil), b...)
	binary.NativeEndian.PutUint32(bad, uint32(len(b)+100))
	if err := fixtureTimeouts.events(bad, func(snat.Flow, bool) {}); err == nil {
		t.Error("oversized length: no error")
	}
}

// BenchmarkDecodeEvents: decoding recorded NEW/DESTROY datagrams (one event each, so per op = per event)
// with the agent's decoder, then also applying them to a Table as the Watcher does, and, for comparison,
// with ti-mo/conntrack (what the agent used before).
func BenchmarkDecodeEvents(b *testing.B) {
	dgs := datagrams(b, "events.bin")
	b.Run("decoder=agent", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = fixtureTimeouts.events(dgs[i%len(dgs)], func(snat.Flow, bool) {})
		}
	})
	b.Run("decoder=agent+table", func(b *testing.B) {
		table := benchTable(1 << 20)
		apply := func(f snat.Flow, destroyed bool) {
			if destroyed {
				table.Destroy(f, t0)
			} else {
				table.New(f, t0)
			}
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = fixtureTimeouts.events(dgs[i%len(dgs)], apply)
		}
	})
	b.Run("decoder=ti-mo", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			reference(b, dgs[i%len(dgs)], true)
		}
	})
}

// FuzzDecode: no datagram, however malformed, makes the decoder panic or read past it (seeds: the recordings).
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"events.bin", "dump.bin"} {
		for _, b := range datagrams(f, name)[:2] {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = fixtureTimeouts.events(b, func(snat.Flow, bool) {})
		_, _ = fixtureTimeouts.dumped(b, func(snat.Flow) {})
	})
}
