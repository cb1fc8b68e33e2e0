package snat

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/mdlayher/netlink"
	"github.com/mdlayher/socket"
	"github.com/ti-mo/netfilter"
	"golang.org/x/sys/unix"
)

// ErrOverflow: the kernel dropped events because the socket's receive buffer was full (ENOBUFS). Counts
// are then stale until a dump re-reads the table.
var ErrOverflow = errors.New("conntrack events lost: receive buffer overflowed (ENOBUFS)")

// Conntrack reads the kernel's conntrack table over ctnetlink (NETLINK_NETFILTER, what `conntrack -L/-E`
// use), decoding only the attributes the accounting reads (ctdecode.go). It needs CAP_NET_ADMIN in the
// table's network namespace. It reads from its own sockets with a reused buffer rather than through
// ti-mo/conntrack's Conn, whose Dump returns the whole table at once (tens of MiB at 50,000 entries) and
// whose event workers allocate a page per message.
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

// batchInterval is the least time between two reads of the event socket. Each read takes every datagram
// queued (one event each), so events wait at most this long in the receive buffer, far inside the 1 s Tick,
// and the reader wakes at most 100 times a second instead of once per event: at 4,000 events a second the
// wake-ups were most of the agent's CPU (bench/agent/RESULTS.md). The buffer must hold this long's events:
// --snat-receive-buffer's 4 MiB holds ~4,000 (a few hundred bytes each plus the kernel's per-message
// overhead), 400,000 a second.
const batchInterval = 10 * time.Millisecond

// receiveTimeout bounds a blocking read (SO_RCVTIMEO), so a reader waiting on a quiet socket sees its context
// end within this long.
const receiveTimeout = 100 * time.Millisecond

// Events is a subscription to NEW and DESTROY events. Its socket is blocking and kept out of the Go
// runtime's poller: a socket in the poller wakes the runtime's epoll_wait on every datagram that arrives,
// even while nobody reads (36 % of the agent's remaining CPU in the profile); a blocking one wakes only a
// reader waiting in recvfrom.
type Events struct {
	buf      []byte
	timeouts Timeouts
	read     time.Time   // when the socket was last read
	pause    *time.Timer // waits out batchInterval

	mu      sync.Mutex
	fd      int
	reading bool // a read is under way: Close leaves the descriptor to it, so its number is never reused under it
	closed  bool
}

// Subscribe joins the event groups. Subscribe before dumping, so no change between the two is missed.
func (c Conntrack) Subscribe() (EventStream, error) {
	conn, err := c.open("ctnetlink-events")
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }() // takes it out of the poller; the duplicate keeps the socket
	if err := c.join(conn); err != nil {
		return nil, err
	}
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	if cerr := raw.Control(func(s uintptr) { fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("duplicate ctnetlink socket: %w", err)
	}
	tv := unix.NsecToTimeval(receiveTimeout.Nanoseconds())
	if err := errors.Join(unix.SetNonblock(fd, false),
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("configure ctnetlink socket: %w", err)
	}
	return &Events{fd: fd, buf: make([]byte, receiveBytes), timeouts: c.Timeouts, pause: time.NewTimer(0)}, nil
}

// join subscribes conn to the event groups and sizes its receive buffer.
func (c Conntrack) join(conn *socket.Conn) error {
	for _, g := range eventGroups {
		if err := conn.SetsockoptInt(unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, int(g)); err != nil {
			return fmt.Errorf("join conntrack event group %d: %w", g, err)
		}
	}
	if c.ReceiveBuffer > 0 {
		if err := conn.SetsockoptInt(unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, c.ReceiveBuffer); err != nil {
			_ = conn.SetsockoptInt(unix.SOL_SOCKET, unix.SO_RCVBUF, c.ReceiveBuffer)
		}
	}
	return nil
}

var errClosed = errors.New("conntrack event subscription closed")

// Close ends the subscription; a read under way ends within receiveTimeout.
func (e *Events) Close() error {
	e.pause.Stop()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if e.reading {
		return nil // the reader closes it
	}
	return unix.Close(e.fd)
}

// begin and end bracket the reads of one Next.
func (e *Events) begin() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reading = !e.closed
	return e.reading
}

func (e *Events) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reading = false
	if e.closed {
		_ = unix.Close(e.fd)
	}
}

// Next waits for events and hands each one queued to fn (destroyed: a DESTROY, else a NEW), at most once per
// batchInterval. It returns ErrOverflow when events were lost; the subscription stays usable.
func (e *Events) Next(ctx context.Context, fn func(f Flow, destroyed bool)) error {
	if d := batchInterval - time.Since(e.read); d > 0 {
		e.pause.Reset(d)
		select {
		case <-ctx.Done():
			return fmt.Errorf("receive conntrack events: %w", ctx.Err())
		case <-e.pause.C:
		}
	}
	if !e.begin() {
		return fmt.Errorf("receive conntrack events: %w", errClosed)
	}
	defer e.end()
	defer func() { e.read = time.Now() }()
	// The first read blocks (up to receiveTimeout, then the context is checked again); the rest drain what
	// is queued without waiting.
	for got := 0; ; got++ {
		flags := 0
		if got > 0 {
			flags = unix.MSG_DONTWAIT
		}
		more, err := e.receive(flags, fn)
		switch {
		case err != nil:
			return err
		case !more && got > 0:
			return nil
		case !more && ctx.Err() != nil:
			return fmt.Errorf("receive conntrack events: %w", ctx.Err())
		case !more:
			got-- // nothing yet: wait again
		}
	}
}

// receive reads and hands on one datagram; more is false when none came (EAGAIN: none queued, or the
// receive timeout passed) or on an error.
func (e *Events) receive(flags int, fn func(f Flow, destroyed bool)) (more bool, err error) {
	n, err := recvDatagram(e.fd, e.buf, flags)
	switch {
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		return false, nil
	case errors.Is(err, unix.ENOBUFS):
		return false, ErrOverflow
	case err != nil:
		return false, fmt.Errorf("receive conntrack events: %w", err)
	case n > len(e.buf):
		return false, fmt.Errorf("receive conntrack events: a %d-byte buffer truncated a message", len(e.buf))
	}
	if err := e.timeouts.events(e.buf[:n], fn); err != nil {
		return false, fmt.Errorf("parse conntrack events: %w", err)
	}
	return true, nil
}

// recvDatagram reads one datagram. It is recvfrom(2) with no address, because unix.Recvmsg allocates the
// sender's address on every call (two allocations an event, in the heap profile). MSG_TRUNC makes netlink
// return the datagram's full length, so n > len(buf) tells a truncated one.
func recvDatagram(fd int, buf []byte, flags int) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(buf))),
		uintptr(len(buf)), uintptr(flags|unix.MSG_TRUNC), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// events hands each NEW and DESTROY event of one datagram to fn.
func (t Timeouts) events(b []byte, fn func(f Flow, destroyed bool)) error {
	for m := messages(b); ; {
		typ, flags, data, ok, err := m.next()
		if !ok || err != nil {
			return err
		}
		if typ>>8 != ctSubsys || len(data) < nfgenBytes {
			continue // an expectation, or not conntrack at all
		}
		var destroyed bool
		switch typ & 0xff {
		case ctNew:
			if flags&(unix.NLM_F_CREATE|unix.NLM_F_EXCL) == 0 {
				continue // an UPDATE (the UPDATE group is not joined, so none is expected)
			}
		case ctDelete:
			destroyed = true
		default:
			continue
		}
		if e, ok := decodeEntry(data[nfgenBytes:]); ok {
			fn(t.flow(&e, destroyed), destroyed)
		}
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
	return c.Timeouts.dumped(buf[:n], fn)
}

// dumped hands each entry of one dump datagram to fn; done at the dump's end (NLMSG_DONE).
func (t Timeouts) dumped(b []byte, fn func(Flow)) (bool, error) {
	for m := messages(b); ; {
		typ, flags, data, ok, err := m.next()
		if err != nil {
			return false, fmt.Errorf("parse conntrack dump: %w", err)
		}
		if !ok {
			return false, nil
		}
		if flags&unix.NLM_F_DUMP_INTR != 0 {
			return false, ErrDumpInterrupted
		}
		switch typ {
		case unix.NLMSG_DONE:
			return true, nlError(data)
		case unix.NLMSG_ERROR:
			if err := nlError(data); err != nil {
				return false, fmt.Errorf("conntrack dump: %w", err)
			}
			continue
		}
		if typ>>8 != ctSubsys || (typ&0xff != ctNew && typ&0xff != ctDelete) || len(data) < nfgenBytes {
			continue
		}
		if e, ok := decodeEntry(data[nfgenBytes:]); ok {
			fn(t.flow(&e, false))
		}
	}
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
