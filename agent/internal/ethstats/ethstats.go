// Package ethstats reads a NIC's driver counters, what `ethtool -S` prints, through the SIOCETHTOOL ioctl
// (ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS).
//
// It exists because github.com/safchain/ethtool v0.7.0's Stats (the latest release) hands the kernel the
// address of a stack variable as a uintptr (ethtoolDrvInfo in StatsWithBuffer, passed on to its ioctl
// helper): when the goroutine's stack grows in between, Go moves the stack, the kernel writes into the old
// copy and Stats returns an empty map without an error. It happened on every scrape in the QEMU guest,
// where the metrics handler's fresh goroutine has a small stack. Here every buffer the kernel writes is a
// heap allocation (a Go heap object never moves) kept alive across the syscall.
package ethstats

import (
	"bytes"
	"encoding/binary"
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

// count returns how many ETH_SS_STATS strings the driver has now.
func (r *Reader) count(intf string) (int, error) {
	// struct ethtool_sset_info { u32 cmd; u32 reserved; u64 sset_mask; u32 data[1]; }
	buf := heapBytes(24)
	binary.NativeEndian.PutUint32(buf[0:], ethtoolGSSetInfo)
	binary.NativeEndian.PutUint64(buf[8:], 1<<ethSSStats)
	if err := r.ioctl(intf, buf); err != nil {
		return 0, fmt.Errorf("ETHTOOL_GSSET_INFO: %w", err)
	}
	if binary.NativeEndian.Uint64(buf[8:])&(1<<ethSSStats) == 0 {
		return 0, nil // the driver has no statistics strings
	}
	n := int(binary.NativeEndian.Uint32(buf[16:]))
	if n > maxStats {
		return 0, fmt.Errorf("driver reports %d statistics, more than %d", n, maxStats)
	}
	return n, nil
}

// Stats returns the link's driver counters by name. The kernel writes as many entries as the driver has
// when it answers, whatever length was asked for, so the buffers have room for the count to double between
// the calls (a channel change in that instant); a count that moved at all is reported as an error rather
// than returned mismatched.
func (r *Reader) Stats(intf string) (map[string]uint64, error) {
	n, err := r.count(intf)
	if err != nil || n == 0 {
		return map[string]uint64{}, err
	}
	room := 2*n + 16
	// struct ethtool_gstrings { u32 cmd; u32 string_set; u32 len; u8 data[]; }
	strs := heapBytes(12 + room*ethGStringLen)
	binary.NativeEndian.PutUint32(strs[0:], ethtoolGStrings)
	binary.NativeEndian.PutUint32(strs[4:], ethSSStats)
	binary.NativeEndian.PutUint32(strs[8:], uint32(n))
	if err := r.ioctl(intf, strs); err != nil {
		return nil, fmt.Errorf("ETHTOOL_GSTRINGS: %w", err)
	}
	names := int(binary.NativeEndian.Uint32(strs[8:]))
	// struct ethtool_stats { u32 cmd; u32 n_stats; u64 data[]; }
	vals := heapBytes(8 + room*8)
	binary.NativeEndian.PutUint32(vals[0:], ethtoolGStats)
	binary.NativeEndian.PutUint32(vals[4:], uint32(n))
	if err := r.ioctl(intf, vals); err != nil {
		return nil, fmt.Errorf("ETHTOOL_GSTATS: %w", err)
	}
	values := int(binary.NativeEndian.Uint32(vals[4:]))
	if names != n || values != n {
		return nil, fmt.Errorf("driver statistics changed while being read: %d counted, then %d names, %d values",
			n, names, values)
	}
	out := make(map[string]uint64, names)
	for i := range names {
		raw := strs[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		if end := bytes.IndexByte(raw, 0); end >= 0 {
			raw = raw[:end]
		}
		if len(raw) > 0 {
			out[string(raw)] = binary.NativeEndian.Uint64(vals[8+i*8:])
		}
	}
	return out, nil
}
