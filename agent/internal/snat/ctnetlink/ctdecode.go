package ctnetlink

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// A small ctnetlink decoder that reads only what the accounting needs (tuples, id, zone, status, TCP state)
// straight from the receive buffer, allocating nothing. Decoding every message into a ti-mo/conntrack Flow
// (every attribute, one heap object per nested attribute) was the largest cost of following 4,000 events a
// second (bench/agent/RESULTS.md); mdlayher/netlink's AttributeDecoder still allocates one decoder per
// nesting level. ti-mo/conntrack stays the reference: a test decodes recorded kernel messages both ways.
//
// Layouts: include/uapi/linux/netlink.h (nlmsghdr, nlattr), include/uapi/linux/netfilter/nfnetlink.h
// (nfgenmsg), include/uapi/linux/netfilter/nfnetlink_conntrack.h (the CTA_* attributes, all big-endian).

// Message types: the subsystem in the high byte (NFNL_SUBSYS_CTNETLINK), the command in the low byte.
const (
	ctSubsys   = 1 // NFNL_SUBSYS_CTNETLINK
	ctNew      = 0 // IPCTNL_MSG_CT_NEW: an entry (a NEW or UPDATE event, or a dump's entry)
	ctDelete   = 2 // IPCTNL_MSG_CT_DELETE: a DESTROY event
	nfgenBytes = 4 // struct nfgenmsg
	nlaAlign   = 4 // NLA_ALIGNTO
	nlaTypeBit = 0x3fff
)

// enum ctattr_type, ctattr_tuple, ctattr_ip, ctattr_l4proto, ctattr_protoinfo, ctattr_protoinfo_tcp.
const (
	ctaTupleOrig     = 1
	ctaTupleReply    = 2
	ctaStatus        = 3
	ctaProtoInfo     = 4
	ctaID            = 12
	ctaZone          = 18
	ctaTupleIP       = 1
	ctaTupleProto    = 2
	ctaIPv4Src       = 1
	ctaIPv6Src       = 3
	ctaProtoNum      = 1
	ctaProtoSrcPort  = 2
	ctaProtoDstPort  = 3
	ctaProtoInfoTCP  = 1
	ctaTCPState      = 1
	ipsAssured       = 1 << 2 // IPS_ASSURED (enum ip_conntrack_status)
	nlmsgHeaderBytes = unix.NLMSG_HDRLEN
)

// attrs walks one level of netlink attributes.
type attrs []byte

// next returns the next attribute's type (flags cleared) and payload; ok is false at the end or on a
// malformed attribute.
func (a *attrs) next() (typ uint16, data []byte, ok bool) {
	b := *a
	if len(b) < 4 {
		return 0, nil, false
	}
	n := int(binary.NativeEndian.Uint16(b))
	if n < 4 || n > len(b) {
		return 0, nil, false
	}
	typ, data = binary.NativeEndian.Uint16(b[2:])&nlaTypeBit, b[4:n]
	*a = b[min(len(b), (n+nlaAlign-1)&^(nlaAlign-1)):]
	return typ, data, true
}

// tuple is what the accounting reads of a CTA_TUPLE_ORIG or CTA_TUPLE_REPLY.
type tuple struct {
	src          netip.Addr
	proto        uint8
	sport, dport uint16
}

func decodeTuple(b []byte) (t tuple, ok bool) {
	for a := attrs(b); ; {
		typ, data, more := a.next()
		if !more {
			return t, t.src.IsValid()
		}
		switch typ {
		case ctaTupleIP:
			t.src = decodeSource(data)
		case ctaTupleProto:
			t.proto, t.sport, t.dport = decodeProto(data)
		}
	}
}

func decodeSource(b []byte) netip.Addr {
	for a := attrs(b); ; {
		typ, data, more := a.next()
		if !more {
			return netip.Addr{}
		}
		switch {
		case typ == ctaIPv4Src && len(data) == 4:
			return netip.AddrFrom4([4]byte(data))
		case typ == ctaIPv6Src && len(data) == 16:
			return netip.AddrFrom16([16]byte(data))
		}
	}
}

func decodeProto(b []byte) (proto uint8, sport, dport uint16) {
	for a := attrs(b); ; {
		typ, data, more := a.next()
		if !more {
			return proto, sport, dport
		}
		switch {
		case typ == ctaProtoNum && len(data) == 1:
			proto = data[0]
		case typ == ctaProtoSrcPort && len(data) == 2:
			sport = binary.BigEndian.Uint16(data)
		case typ == ctaProtoDstPort && len(data) == 2:
			dport = binary.BigEndian.Uint16(data)
		}
	}
}

// tcpState reads CTA_PROTOINFO's TCP state; ok is false when it carries none (not TCP).
func tcpState(b []byte) (state uint8, ok bool) {
	for a := attrs(b); ; {
		typ, data, more := a.next()
		if !more {
			return 0, false
		}
		if typ != ctaProtoInfoTCP {
			continue
		}
		for in := attrs(data); ; {
			typ, data, more := in.next()
			if !more {
				return 0, false
			}
			if typ == ctaTCPState && len(data) == 1 {
				return data[0], true
			}
		}
	}
}

// entry is one decoded conntrack message.
type entry struct {
	orig, reply tuple
	id          uint32
	zone        uint16
	status      uint32
	tcpState    uint8
	hasTCPState bool
}

// decodeEntry reads a conntrack message's attributes (after its nfgenmsg); ok is false when it lacks
// either tuple.
func decodeEntry(b []byte) (e entry, ok bool) {
	var hasOrig, hasReply bool
	for a := attrs(b); ; {
		typ, data, more := a.next()
		if !more {
			return e, hasOrig && hasReply
		}
		switch {
		case typ == ctaTupleOrig:
			e.orig, hasOrig = decodeTuple(data)
		case typ == ctaTupleReply:
			e.reply, hasReply = decodeTuple(data)
		case typ == ctaStatus && len(data) == 4:
			e.status = binary.BigEndian.Uint32(data)
		case typ == ctaProtoInfo:
			e.tcpState, e.hasTCPState = tcpState(data)
		case typ == ctaID && len(data) == 4:
			e.id = binary.BigEndian.Uint32(data)
		case typ == ctaZone && len(data) == 2:
			e.zone = binary.BigEndian.Uint16(data)
		}
	}
}

// quiet is how long before its removal a destroyed entry's flow went quiet: the timeout of the state it
// died in. A TCP entry dies in TIME_WAIT after a FIN close and in CLOSE after a RST; in any other state
// (an idle established flow reaped early, a flush) the close time is unknown and taken as the removal.
func (t Timeouts) quiet(e *entry) time.Duration {
	switch e.orig.proto {
	case snat.ProtoTCP:
		if !e.hasTCPState {
			return 0
		}
		switch e.tcpState {
		case tcpTimeWait:
			return t.TCPTimeWait
		case tcpClose:
			return t.TCPClose
		}
	case snat.ProtoUDP:
		if e.status&ipsAssured != 0 {
			return t.UDPStream
		}
		return t.UDP
	}
	return 0
}

func (t Timeouts) flow(e *entry, destroyed bool) snat.Flow {
	out := snat.Flow{ID: e.id, Zone: e.zone, Proto: e.orig.proto, OrigSrc: e.orig.src, OrigSrcPort: e.orig.sport,
		OrigDstPort: e.orig.dport, Peer: netip.AddrPortFrom(e.reply.src, e.reply.sport)}
	if destroyed {
		out.Quiet = t.quiet(e)
	}
	return out
}

// messages walks the netlink messages of one datagram.
type messages []byte

// next returns the next message's type, flags and payload; ok is false at the end; err on a malformed one.
func (m *messages) next() (typ, flags uint16, data []byte, ok bool, err error) {
	b := *m
	if len(b) == 0 {
		return 0, 0, nil, false, nil
	}
	if len(b) < nlmsgHeaderBytes {
		return 0, 0, nil, false, errMalformed
	}
	n := int(binary.NativeEndian.Uint32(b))
	if n < nlmsgHeaderBytes || n > len(b) {
		return 0, 0, nil, false, errMalformed
	}
	typ, flags = binary.NativeEndian.Uint16(b[4:]), binary.NativeEndian.Uint16(b[6:])
	*m = b[min(len(b), (n+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1)):]
	return typ, flags, b[nlmsgHeaderBytes:n], true, nil
}

// errMalformed: a datagram whose netlink headers do not add up.
var errMalformed = errors.New("malformed netlink message")
