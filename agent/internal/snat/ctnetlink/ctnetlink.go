// Package ctnetlink reads the kernel's conntrack table for the SNAT accounting (package snat): Conntrack is a
// snat.Source, a dump and a subscription to NEW and DESTROY events over ctnetlink, decoded into snat.Flows
// (ctdecode.go), with a kernel filter that drops the events the accounting would ignore (filter.go).
package ctnetlink

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

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

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
	// Classifier, when set, has the kernel drop the events of flows it would not count before they reach the
	// event socket (filter.go). Dumps are not filtered.
	Classifier *snat.Classifier
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

// An event read takes up to eventBatch datagrams in one recvmmsg(2), each into a slot of eventBytes. An event
// datagram is one message sized to its attributes (ctnetlink_nlmsg_size, net/netfilter/nf_conntrack_netlink.c):
// 140-196 bytes in the recordings in testdata, well under 1 KiB even with labels, a helper and a security
// context. A larger one would be cut (MSG_TRUNC) and is handled as lost events: the table is dumped again. 64
// slots take one batchInterval's events at 6,400 a second in one call; 128 KiB in all.
const (
	eventBatch = 64
	eventBytes = 2 << 10
)

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
// queued (one event each), so events wait at most this long in the receive buffer, well inside the 1 s Tick,
// and the reader wakes at most 10 times a second however many events come: each wake-up costs the Go
// runtime's scheduler and timers far more than the events it reads (10 ms cost 2.5x the CPU of 100 ms at
// 4,000 events a second, bench/agent/RESULTS.md). A port's hold starts when its DESTROY is read, so it is
// held up to this much longer, never shorter. The buffer must hold this long's events: each takes about
// 1.3 KiB of it (a message of ~200 bytes in a 1 KiB allocation, plus the sk_buff), so the default 4 MiB
// (8 MiB as the kernel counts it) holds ~6,000, 15 intervals at 4,000 events a second.
const batchInterval = 100 * time.Millisecond

// receiveTimeout bounds a blocking read (SO_RCVTIMEO), so a reader waiting on a quiet socket sees its context
// end within this long.
const receiveTimeout = 100 * time.Millisecond

// Events is a subscription to NEW and DESTROY events. Its socket is blocking and kept out of the Go
// runtime's poller: a socket in the poller wakes the runtime's epoll_wait on every datagram that arrives,
// even while nobody reads (36 % of the agent's remaining CPU in the profile); a blocking one wakes only a
// reader waiting in recvfrom.
type Events struct {
	buf      []byte    // eventBatch slots of eventBytes
	hdrs     []mmsghdr // one per slot, each pointing at its slot through iovs
	iovs     []unix.Iovec
	timeouts Timeouts
	read     time.Time   // when the socket was last read
	pause    *time.Timer // waits out batchInterval
	drops    uint32      // the socket's drop count when a loss was last reported (see lost)

	mu      sync.Mutex
	fd      int
	reading bool // a read is under way: Close leaves the descriptor to it, so its number is never reused under it
	closed  bool
}

// Subscribe joins the event groups. Subscribe before dumping, so no change between the two is missed.
func (c Conntrack) Subscribe() (snat.EventStream, error) {
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
	if c.Classifier != nil {
		prog, err := eventFilter(c.Classifier.InternalPrefixes())
		if err == nil {
			err = attachFilter(fd, prog)
		}
		if err != nil {
			_ = unix.Close(fd)
			return nil, err
		}
	}
	tv := unix.NsecToTimeval(receiveTimeout.Nanoseconds())
	if err := errors.Join(unix.SetNonblock(fd, false),
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("configure ctnetlink socket: %w", err)
	}
	return newEvents(fd, c.Timeouts), nil
}

// mmsghdr is struct mmsghdr (include/uapi/linux/socket.h): a msghdr, and the length recvmmsg received into it.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

func newEvents(fd int, timeouts Timeouts) *Events {
	e := &Events{fd: fd, buf: make([]byte, eventBatch*eventBytes), hdrs: make([]mmsghdr, eventBatch),
		iovs: make([]unix.Iovec, eventBatch), timeouts: timeouts, pause: time.NewTimer(0)}
	for i := range e.hdrs {
		e.iovs[i].Base = &e.buf[i*eventBytes]
		e.iovs[i].SetLen(eventBytes)
		e.hdrs[i].hdr.Iov = &e.iovs[i] // no address, no control data: the kernel writes neither
		e.hdrs[i].hdr.SetIovlen(1)
	}
	return e
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
// batchInterval. It returns ErrOverflow when events were lost; the subscription stays usable. When ctx ends it
// still hands on what is queued, so a caller that stops at a deadline (Sample) misses none of the events before
// it, and returns ctx's error (with ErrOverflow if events were lost).
func (e *Events) Next(ctx context.Context, fn func(f snat.Flow, destroyed bool)) error {
	if d := batchInterval - time.Since(e.read); d > 0 {
		e.pause.Reset(d)
		select {
		case <-ctx.Done():
			return errors.Join(e.read1(unix.MSG_DONTWAIT, fn), fmt.Errorf("receive conntrack events: %w", ctx.Err()))
		case <-e.pause.C:
		}
	}
	for {
		// Waits for one datagram (up to receiveTimeout, then the context is checked again) and takes the rest
		// queued with it.
		err := e.read1(unix.MSG_WAITFORONE, fn)
		if !errors.Is(err, errNone) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("receive conntrack events: %w", ctx.Err())
		}
	}
}

// errNone: a read found nothing queued (or its wait timed out).
var errNone = errors.New("no conntrack events queued")

// read1 is one read of the socket: the first recvmmsg with flags, then more without waiting as long as each
// fills the batch (more may be queued). It returns errNone when the first found nothing.
func (e *Events) read1(flags int, fn func(f snat.Flow, destroyed bool)) error {
	if !e.begin() {
		return fmt.Errorf("receive conntrack events: %w", errClosed)
	}
	defer e.end()
	defer func() { e.read = time.Now() }()
	return e.lost(e.drain(flags, fn))
}

// drain is read1's reading: recvmmsg until a call returns less than a full batch.
func (e *Events) drain(flags int, fn func(f snat.Flow, destroyed bool)) error {
	for got := 0; ; flags = unix.MSG_DONTWAIT {
		n, err := e.receive(flags, fn)
		got += n
		switch {
		case err != nil:
			return err
		case n == eventBatch:
			continue
		case got == 0 && flags&unix.MSG_WAITFORONE != 0:
			return errNone
		default:
			return nil
		}
	}
}

// lost turns events the kernel dropped since the last report into ErrOverflow, ENOBUFS or not. The kernel
// raises ENOBUFS only for the first drop of a congestion: netlink_overrun sets it only while the socket's
// NETLINK_S_CONGESTED bit is clear, and netlink_rcv_wake clears that bit only once the queue is empty
// (net/netlink/af_netlink.c). Events dropped after an ENOBUFS was read, before the queue drained, are
// otherwise lost unnoticed, and a dump that had already passed their flows never counts them (the flood
// test stayed hundreds of flows short for minutes). Every drop counts in the socket's sk_drops, which
// SO_MEMINFO reads.
func (e *Events) lost(err error) error {
	drops, derr := socketDrops(e.fd)
	if derr != nil || drops == e.drops {
		return err
	}
	e.drops = drops
	if err == nil || errors.Is(err, errNone) {
		return snat.ErrOverflow
	}
	return err
}

// socketDrops reads SK_MEMINFO_DROPS of getsockopt(SO_MEMINFO) (include/uapi/linux/sock_diag.h): the
// datagrams the kernel dropped for want of room in the socket's receive buffer.
func socketDrops(fd int) (uint32, error) {
	var info [unix.SK_MEMINFO_VARS]uint32
	size := uint32(unsafe.Sizeof(info))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_MEMINFO,
		uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&size)), 0)
	if errno != 0 {
		return 0, errno
	}
	return info[unix.SK_MEMINFO_DROPS], nil
}

// receive reads up to eventBatch datagrams in one recvmmsg(2) and hands their events on; n is 0 when none
// came (EAGAIN: none queued, or the receive timeout passed) or on an error. A datagram too large for its
// slot lost its events: it is reported as an overflow (after the rest of the batch), so the table is dumped
// again.
func (e *Events) receive(flags int, fn func(f snat.Flow, destroyed bool)) (n int, err error) {
	n, err = recvBatch(e.fd, e.hdrs, flags)
	switch {
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		return 0, nil
	case errors.Is(err, unix.ENOBUFS):
		return 0, snat.ErrOverflow
	case err != nil:
		return 0, fmt.Errorf("receive conntrack events: %w", err)
	}
	var cut error
	for i := range n {
		size := int(e.hdrs[i].n)
		if size > eventBytes || e.hdrs[i].hdr.Flags&unix.MSG_TRUNC != 0 {
			cut = fmt.Errorf("%w: a %d-byte event datagram did not fit its %d-byte slot", snat.ErrOverflow, size, eventBytes)
			continue
		}
		slot := e.buf[i*eventBytes : i*eventBytes+size]
		if err := e.timeouts.events(slot, fn); err != nil {
			return n, fmt.Errorf("parse conntrack events: %w", err)
		}
	}
	return n, cut
}

// recvBatch is recvmmsg(2) with no timeout. MSG_TRUNC makes netlink report each datagram's full length, so a
// cut one is told by its length (and its MSG_TRUNC flag). An error after some datagrams were received is
// kept by the kernel for the next call (an ENOBUFS is not lost).
func recvBatch(fd int, hdrs []mmsghdr, flags int) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(hdrs))),
		uintptr(len(hdrs)), uintptr(flags|unix.MSG_TRUNC), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// events hands each NEW and DESTROY event of one datagram to fn.
func (t Timeouts) events(b []byte, fn func(f snat.Flow, destroyed bool)) error {
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
func (c Conntrack) Dump(ctx context.Context, fn func(snat.Flow)) error {
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
func (c Conntrack) dumpPart(ctx context.Context, conn *socket.Conn, buf []byte, fn func(snat.Flow)) (bool, error) {
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
func (t Timeouts) dumped(b []byte, fn func(snat.Flow)) (bool, error) {
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
