package ethioctl

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

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
