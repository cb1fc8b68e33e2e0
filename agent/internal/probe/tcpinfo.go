package probe

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// sockInfo is what the probe reads of its own socket's TCP_INFO (include/uapi/linux/tcp.h, struct tcp_info).
type sockInfo struct {
	totalRetrans uint32 // tcpi_total_retrans: segments this socket retransmitted, ever (RTO, TLP, fast retransmit)
	rtoMicros    uint32 // tcpi_rto: the current retransmission timeout
}

// tcpInfoReader reads TCP_INFO of one socket, again and again: the socket's RawConn and the closure handed to
// its Control are made once, not once per round trip.
type tcpInfoReader struct {
	raw  syscall.RawConn
	info sockInfo
	err  error
	read func(fd uintptr)
}

func newTCPInfoReader(c net.Conn) (*tcpInfoReader, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, errors.New("not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &tcpInfoReader{raw: raw}
	r.read = func(fd uintptr) {
		// GetsockoptTCPInfo, golang.org/x/sys/unix.
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		if err != nil {
			r.err = err
			return
		}
		r.info, r.err = sockInfo{totalRetrans: info.Total_retrans, rtoMicros: info.Rto}, nil
	}
	return r, nil
}

// Read is one getsockopt(TCP_INFO).
func (r *tcpInfoReader) Read() (sockInfo, error) {
	if err := r.raw.Control(r.read); err != nil {
		return sockInfo{}, err
	}
	if r.err != nil {
		return sockInfo{}, r.err
	}
	return r.info, nil
}

// readTCPInfo reads TCP_INFO of c's socket once.
func readTCPInfo(c net.Conn) (sockInfo, error) {
	r, err := newTCPInfoReader(c)
	if err != nil {
		return sockInfo{}, err
	}
	return r.Read()
}
