package snat

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mdlayher/netlink"
	"github.com/mdlayher/socket"
	"github.com/ti-mo/conntrack"
	"github.com/ti-mo/netfilter"
	"golang.org/x/sys/unix"
)

// ErrOverflow: the kernel dropped events because the socket's receive buffer was full (ENOBUFS). Counts
// are then stale until a dump re-reads the table.
var ErrOverflow = errors.New("conntrack events lost: receive buffer overflowed (ENOBUFS)")

// Conntrack reads the kernel's conntrack table over ctnetlink (NETLINK_NETFILTER, what `conntrack -L/-E`
// use), parsing each message with ti-mo/conntrack. It needs CAP_NET_ADMIN in the table's network namespace.
// It reads from its own sockets with a reused buffer rather than through ti-mo/conntrack's Conn, whose Dump
// returns the whole table at once (tens of MiB at 50,000 entries) and whose event workers allocate a page
// per message.
type Conntrack struct {
	// NetNS is a network namespace file descriptor to open the sockets in; 0 is the process's own.
	NetNS int
	// ReceiveBuffer is the event socket's receive buffer in bytes (SO_RCVBUFFORCE, which CAP_NET_ADMIN
	// allows past net.core.rmem_max; SO_RCVBUF otherwise).
	ReceiveBuffer int
	// Timeouts are conntrack's own, to tell when a destroyed flow went quiet.
	Timeouts Timeouts
}

// Timeouts are the conntrack timeouts that keep an entry after its flow went quiet
// (net.netfilter.nf_conntrack_*; per network namespace).
type Timeouts struct {
	TCPTimeWait time.Duration // after a FIN close (nf_conntrack_tcp_timeout_time_wait, 120 s by default)
	TCPClose    time.Duration // after a RST (nf_conntrack_tcp_timeout_close, 10 s)
	UDP         time.Duration // after the last packet of a one-way flow (nf_conntrack_udp_timeout, 30 s)
	UDPStream   time.Duration // ... of an assured flow (nf_conntrack_udp_timeout_stream, 120 s)
}

// ReadTimeouts reads them under procSys (/proc/sys, or the agent's --proc-sys-root). One that cannot be
// read is 0: the flow is then taken to have gone quiet at its removal, which over-counts, never under.
func ReadTimeouts(procSys string) Timeouts {
	read := func(name string) time.Duration {
		b, err := os.ReadFile(filepath.Join(procSys, "net", "netfilter", name))
		if err != nil {
			return 0
		}
		v, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || v < 0 {
			return 0
		}
		return time.Duration(v) * time.Second
	}
	return Timeouts{
		TCPTimeWait: read("nf_conntrack_tcp_timeout_time_wait"),
		TCPClose:    read("nf_conntrack_tcp_timeout_close"),
		UDP:         read("nf_conntrack_udp_timeout"),
		UDPStream:   read("nf_conntrack_udp_timeout_stream"),
	}
}

// TCP conntrack states (enum tcp_conntrack, include/uapi/linux/netfilter/nf_conntrack_tcp.h).
const (
	tcpTimeWait = 7
	tcpClose    = 8
)

// quiet is how long before its removal a destroyed entry's flow went quiet: the timeout of the state it
// died in. A TCP entry dies in TIME_WAIT after a FIN close and in CLOSE after a RST; in any other state
// (an idle established flow reaped early, a flush) the close time is unknown and taken as the removal.
func (t Timeouts) quiet(f *conntrack.Flow) time.Duration {
	switch f.TupleOrig.Proto.Protocol {
	case ProtoTCP:
		if f.ProtoInfo.TCP == nil {
			return 0
		}
		switch f.ProtoInfo.TCP.State {
		case tcpTimeWait:
			return t.TCPTimeWait
		case tcpClose:
			return t.TCPClose
		}
	case ProtoUDP:
		if f.Status.Assured() {
			return t.UDPStream
		}
		return t.UDP
	}
	return 0
}

func (t Timeouts) flow(f *conntrack.Flow, destroyed bool) Flow {
	out := Flow{
		ID:          f.ID,
		Zone:        f.Zone,
		Proto:       f.TupleOrig.Proto.Protocol,
		OrigSrc:     f.TupleOrig.IP.SourceAddress,
		OrigSrcPort: f.TupleOrig.Proto.SourcePort,
		OrigDstPort: f.TupleOrig.Proto.DestinationPort,
	}
	out.Peer = netip.AddrPortFrom(f.TupleReply.IP.SourceAddress, f.TupleReply.Proto.SourcePort)
	if destroyed {
		out.Quiet = t.quiet(f)
	}
	return out
}

// Netlink multicast groups of conntrack events (enum nfnetlink_groups).
var eventGroups = []netfilter.NetlinkGroup{netfilter.GroupCTNew, netfilter.GroupCTDestroy}

// receiveBytes holds the largest datagram ctnetlink sends: a dump part is at most 32 KiB (netlink_dump's
// allocation cap), an event a few hundred bytes.
const receiveBytes = 64 << 10

func (c Conntrack) open(name string) (*socket.Conn, error) {
	conn, err := socket.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_NETFILTER, name,
		&socket.Config{NetNS: c.NetNS})
	if err != nil {
		return nil, fmt.Errorf("open ctnetlink socket: %w", err)
	}
	if err := conn.Bind(&unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("bind ctnetlink socket: %w", err)
	}
	return conn, nil
}

// Events is a subscription to NEW and DESTROY events.
type Events struct {
	conn     *socket.Conn
	buf      []byte
	timeouts Timeouts
}

// Subscribe joins the event groups. Subscribe before dumping, so no change between the two is missed.
func (c Conntrack) Subscribe() (EventStream, error) {
	conn, err := c.open("ctnetlink-events")
	if err != nil {
		return nil, err
	}
	for _, g := range eventGroups {
		if err := conn.SetsockoptInt(unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, int(g)); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("join conntrack event group %d: %w", g, err)
		}
	}
	if c.ReceiveBuffer > 0 {
		if err := conn.SetsockoptInt(unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, c.ReceiveBuffer); err != nil {
			_ = conn.SetsockoptInt(unix.SOL_SOCKET, unix.SO_RCVBUF, c.ReceiveBuffer)
		}
	}
	return &Events{conn: conn, buf: make([]byte, receiveBytes), timeouts: c.Timeouts}, nil
}

// Close ends the subscription.
func (e *Events) Close() error { return e.conn.Close() }

// Next waits for the next datagram and hands each event in it to fn (destroyed: a DESTROY, else a NEW). It
// returns ErrOverflow when events were lost; the subscription stays usable.
func (e *Events) Next(ctx context.Context, fn func(f Flow, destroyed bool)) error {
	n, _, flags, _, err := e.conn.Recvmsg(ctx, e.buf, nil, 0)
	if errors.Is(err, unix.ENOBUFS) {
		return ErrOverflow
	}
	if err != nil {
		return fmt.Errorf("receive conntrack events: %w", err)
	}
	if flags&unix.MSG_TRUNC != 0 {
		return fmt.Errorf("receive conntrack events: a %d-byte buffer truncated a message", len(e.buf))
	}
	msgs, err := syscall.ParseNetlinkMessage(e.buf[:n])
	if err != nil {
		return fmt.Errorf("parse conntrack events: %w", err)
	}
	for _, m := range msgs {
		var ev conntrack.Event
		if err := ev.Unmarshal(message(m)); err != nil || ev.Flow == nil {
			continue // not a conntrack flow event (an expectation), or one this version cannot read
		}
		switch ev.Type {
		case conntrack.EventNew:
			fn(e.timeouts.flow(ev.Flow, false), false)
		case conntrack.EventDestroy:
			fn(e.timeouts.flow(ev.Flow, true), true)
		}
	}
	return nil
}

func message(m syscall.NetlinkMessage) netlink.Message {
	return netlink.Message{
		Header: netlink.Header{Length: m.Header.Len, Type: netlink.HeaderType(m.Header.Type),
			Flags: netlink.HeaderFlags(m.Header.Flags), Sequence: m.Header.Seq, PID: m.Header.Pid},
		Data: m.Data,
	}
}

// ctGet is IPCTNL_MSG_CT_GET (include/uapi/linux/netfilter/nfnetlink_conntrack.h).
const ctGet = 1

// ErrDumpInterrupted: the table changed in a way that made the dump inconsistent (NLM_F_DUMP_INTR).
var ErrDumpInterrupted = errors.New("conntrack dump interrupted")

// Dump reads the whole table (IPv4 and IPv6), one datagram at a time, handing each entry to fn: memory
// stays at one receive buffer however large the table is.
func (c Conntrack) Dump(ctx context.Context, fn func(Flow)) error {
	conn, err := c.open("ctnetlink-dump")
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	req, err := netfilter.MarshalNetlink(netfilter.Header{SubsystemID: netfilter.NFSubsysCTNetlink,
		MessageType: ctGet, Family: netfilter.ProtoUnspec, Flags: netlink.Request | netlink.Dump}, nil)
	if err != nil {
		return err
	}
	req.Header.Length, req.Header.Sequence = uint32(unix.NLMSG_HDRLEN+len(req.Data)), 1
	b, err := req.MarshalBinary()
	if err != nil {
		return err
	}
	if err := conn.Sendto(ctx, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("request conntrack dump: %w", err)
	}
	buf := make([]byte, receiveBytes)
	for {
		done, err := c.dumpPart(ctx, conn, buf, fn)
		if err != nil || done {
			return err
		}
	}
}

// dumpPart reads one datagram of a dump; done at its end (NLMSG_DONE).
func (c Conntrack) dumpPart(ctx context.Context, conn *socket.Conn, buf []byte, fn func(Flow)) (bool, error) {
	n, _, flags, _, err := conn.Recvmsg(ctx, buf, nil, 0)
	if err != nil {
		return false, fmt.Errorf("receive conntrack dump: %w", err)
	}
	if flags&unix.MSG_TRUNC != 0 {
		return false, fmt.Errorf("receive conntrack dump: a %d-byte buffer truncated a message", len(buf))
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return false, fmt.Errorf("parse conntrack dump: %w", err)
	}
	for _, m := range msgs {
		if m.Header.Flags&unix.NLM_F_DUMP_INTR != 0 {
			return false, ErrDumpInterrupted
		}
		switch m.Header.Type {
		case unix.NLMSG_DONE:
			return true, nlError(m.Data)
		case unix.NLMSG_ERROR:
			if err := nlError(m.Data); err != nil {
				return false, fmt.Errorf("conntrack dump: %w", err)
			}
			continue
		}
		var ev conntrack.Event
		if err := ev.Unmarshal(message(m)); err == nil && ev.Flow != nil {
			fn(c.Timeouts.flow(ev.Flow, false))
		}
	}
	return false, nil
}

// nlError reads the errno a netlink ERROR or DONE message carries (0: none).
func nlError(data []byte) error {
	if len(data) < 4 {
		return nil
	}
	code := int32(binary.NativeEndian.Uint32(data))
	if code >= 0 {
		return nil
	}
	return syscall.Errno(-code)
}
