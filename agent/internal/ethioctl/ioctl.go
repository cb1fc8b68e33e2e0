// Package ethioctl is the SIOCETHTOOL ioctls the agent needs: driver counters (what `ethtool -S` prints),
// ring parameters (`ethtool -g` / `-G`) and the driver's name (`ethtool -i`).
//
// It exists because github.com/safchain/ethtool v0.7.0 (the latest release) hands the kernel the address of
// a stack variable as a uintptr (its ioctl helper takes the buffer as uintptr, for Stats, GetRing, SetRing
// and DriverName alike): when the goroutine's stack grows in between, Go moves the stack and the kernel
// reads from or writes into the old copy. Stats returned an empty map without an error on every scrape in
// the QEMU guest, where the metrics handler's fresh goroutine has a small stack; for rings the same bug
// would read garbage or let the kernel write into freed stack memory. Here every buffer the kernel reads or
// writes is a heap allocation (a Go heap object never moves) kept alive across the syscall. safchain's Ring
// type is kept so the rings package's interface does not change.
package ethioctl

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// From include/uapi/linux/ethtool.h.
const (
	ethtoolGSSetInfo = 0x37 // ETHTOOL_GSSET_INFO
	ethtoolGStrings  = 0x1b // ETHTOOL_GSTRINGS
	ethtoolGStats    = 0x1d // ETHTOOL_GSTATS
	ethSSStats       = 1    // ETH_SS_STATS
	ethGStringLen    = 32   // ETH_GSTRING_LEN
	ifNameSize       = 16   // IFNAMSIZ
	// maxStats bounds what a corrupt or hostile count can make us allocate (ethtool's own limit is the
	// kernel's: mlx5 with many queues reports a few thousand).
	maxStats = 1 << 16
)

// Reader issues the ioctls on one socket.
type Reader struct{ fd int }

// Open returns a Reader acting in the caller's network namespace.
func Open() (*Reader, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ethtool socket: %w", err)
	}
	return &Reader{fd: fd}, nil
}

// Close releases the socket.
func (r *Reader) Close() error { return unix.Close(r.fd) }

// ifreq is struct ifreq with ifr_data: the name, then the pointer, padded to the union's 24 bytes.
type ifreq struct {
	name [ifNameSize]byte
	data uintptr
	_    [16]byte
}

// ioctl passes buf (a heap slice) to SIOCETHTOOL for intf.
func (r *Reader) ioctl(intf string, buf []byte) error {
	if len(intf) >= ifNameSize {
		return fmt.Errorf("interface name %q longer than %d bytes", intf, ifNameSize-1)
	}
	ifr := &ifreq{data: uintptr(unsafe.Pointer(&buf[0]))}
	copy(ifr.name[:], intf)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(r.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(ifr)))
	runtime.KeepAlive(buf)
	runtime.KeepAlive(ifr)
	if errno != 0 {
		return errno
	}
	return nil
}

// heapBytes returns a zeroed heap buffer: a size the compiler cannot see is never stack-allocated.
//
//go:noinline
func heapBytes(n int) []byte { return make([]byte, n) }
