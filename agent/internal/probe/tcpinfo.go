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

// readTCPInfo reads TCP_INFO of c's socket (GetsockoptTCPInfo, golang.org/x/sys/unix).
func readTCPInfo(c net.Conn) (sockInfo, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return sockInfo{}, errors.New("not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return sockInfo{}, err
	}
	var info *unix.TCPInfo
	var serr error
	if err := raw.Control(func(fd uintptr) {
		info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil {
		return sockInfo{}, err
	}
	if serr != nil {
		return sockInfo{}, serr
	}
	return sockInfo{totalRetrans: info.Total_retrans, rtoMicros: info.Rto}, nil
}
