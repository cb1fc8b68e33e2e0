package ethioctl

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/safchain/ethtool"
)

// From include/uapi/linux/ethtool.h.
const (
	ethtoolGDrvInfo    = 0x03 // ETHTOOL_GDRVINFO
	ethtoolGRingParam  = 0x10 // ETHTOOL_GRINGPARAM
	ethtoolSRingParam  = 0x11 // ETHTOOL_SRINGPARAM
	ringParamSize      = 9 * 4
	drvInfoSize        = 4 + 5*32 + 12 + 5*4 // struct ethtool_drvinfo
	drvInfoDriverStart = 4
	drvInfoDriverLen   = 32
)

// GetRing reads the link's ring sizes and maxima (`ethtool -g`).
func (r *Reader) GetRing(intf string) (ethtool.Ring, error) {
	buf := heapBytes(ringParamSize)
	binary.NativeEndian.PutUint32(buf, ethtoolGRingParam)
	if err := r.ioctl(intf, buf); err != nil {
		return ethtool.Ring{}, fmt.Errorf("ETHTOOL_GRINGPARAM: %w", err)
	}
	return decodeRing(buf), nil
}

// SetRing writes the link's ring sizes (`ethtool -G`); the maxima in ring are ignored by the kernel. It
// returns the ring as sent, as safchain's SetRing does: callers read back to see what the device kept.
func (r *Reader) SetRing(intf string, ring ethtool.Ring) (ethtool.Ring, error) {
	ring.Cmd = ethtoolSRingParam
	buf := heapBytes(ringParamSize)
	encodeRing(buf, ring)
	if err := r.ioctl(intf, buf); err != nil {
		return ethtool.Ring{}, fmt.Errorf("ETHTOOL_SRINGPARAM: %w", err)
	}
	return ring, nil
}

// DriverName is the link's kernel driver (`ethtool -i`'s driver line).
func (r *Reader) DriverName(intf string) (string, error) {
	buf := heapBytes(drvInfoSize)
	binary.NativeEndian.PutUint32(buf, ethtoolGDrvInfo)
	if err := r.ioctl(intf, buf); err != nil {
		return "", fmt.Errorf("ETHTOOL_GDRVINFO: %w", err)
	}
	name := buf[drvInfoDriverStart : drvInfoDriverStart+drvInfoDriverLen]
	if end := bytes.IndexByte(name, 0); end >= 0 {
		name = name[:end]
	}
	return string(name), nil
}

// struct ethtool_ringparam: nine u32 in the order of safchain's Ring fields.
func ringFields(ring *ethtool.Ring) []*uint32 {
	return []*uint32{
		&ring.Cmd, &ring.RxMaxPending, &ring.RxMiniMaxPending, &ring.RxJumboMaxPending, &ring.TxMaxPending,
		&ring.RxPending, &ring.RxMiniPending, &ring.RxJumboPending, &ring.TxPending,
	}
}

func decodeRing(buf []byte) ethtool.Ring {
	var ring ethtool.Ring
	for i, field := range ringFields(&ring) {
		*field = binary.NativeEndian.Uint32(buf[4*i:])
	}
	return ring
}

func encodeRing(buf []byte, ring ethtool.Ring) {
	for i, field := range ringFields(&ring) {
		binary.NativeEndian.PutUint32(buf[4*i:], *field)
	}
}
