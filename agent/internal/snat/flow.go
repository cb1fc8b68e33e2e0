package snat

import (
	"net/netip"
	"time"
)

// Flow is what the accounting needs of one conntrack entry.
type Flow struct {
	ID    uint32 // conntrack's id of the entry (CTA_ID)
	Zone  uint16
	Proto uint8
	// OrigSrc is who started the flow; OrigSrcPort and OrigDstPort tell entries with one id apart.
	OrigSrc     netip.Addr
	OrigSrcPort uint16
	OrigDstPort uint16
	// Peer is the reply tuple's source: the address and port the flow really reaches, after any DNAT.
	Peer netip.AddrPort
	// Quiet, on a DESTROY, is how long before its removal the flow went quiet: conntrack keeps a TCP entry
	// for its TIME_WAIT (or CLOSE, after a RST) timeout after the close, and a UDP entry for its timeout
	// after the last packet. A closed flow holds its SNAT port from then (see package ctnetlink).
	Quiet time.Duration
}

// key tells live entries apart: conntrack's id is a 32-bit hash, so it is qualified by the ports and zone
// (a collision then needs equal ids, ports and zone at once).
type key struct {
	id      uint32
	sport   uint16
	dport   uint16
	zone    uint16
	proto   uint8
	_unused uint8
}

func (f Flow) key() key {
	return key{id: f.ID, sport: f.OrigSrcPort, dport: f.OrigDstPort, zone: f.Zone, proto: f.Proto}
}

// hash is k's in a slotIndex seeded with seed.
func (k key) hash(seed uint64) uint64 {
	return mix(seed^(uint64(k.id)<<32|uint64(k.sport)<<16|uint64(k.dport)), uint64(k.zone)<<8|uint64(k.proto))
}
