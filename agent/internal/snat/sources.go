package snat

import (
	"encoding/binary"
	"net/netip"
)

// addr16 is a flow's source address in 17 bytes where a netip.Addr takes 24 (its zone, which no conntrack
// address has, is the rest).
type addr16 struct {
	b    [16]byte
	kind uint8 // 0: no address, 4 or 6
}

func addrOf(a netip.Addr) addr16 {
	switch {
	case a.Is4():
		return addr16{b: a.As16(), kind: 4}
	case a.IsValid():
		return addr16{b: a.As16(), kind: 6}
	}
	return addr16{}
}

func (a addr16) addr() netip.Addr {
	switch a.kind {
	case 4:
		return netip.AddrFrom16(a.b).Unmap()
	case 6:
		return netip.AddrFrom16(a.b)
	}
	return netip.Addr{}
}

func (a addr16) hash(seed uint64) uint64 {
	return mix(seed^binary.LittleEndian.Uint64(a.b[:8]), binary.LittleEndian.Uint64(a.b[8:])^uint64(a.kind))
}

// sources interns the open flows' source addresses: a node's flows come from its pods' and its own
// addresses (a few hundred; issue 29's bench puts 5,000 on one node), so an open flow keeps a 4-byte handle
// where the address itself took 17, and with its key beside it stays at 40 bytes, not 56. An address costs
// 24 bytes and its index slot, counted by the flows naming it and forgotten with the last.
type sources struct {
	seed  uint64
	addrs []source
	free  []int32
	at    slotIndex
}

type source struct {
	a    addr16
	refs int32 // 0: a free place
}

// intern is a's handle, counting one more reference to it.
func (s *sources) intern(a netip.Addr) int32 {
	k := addrOf(a)
	h := k.hash(s.seed)
	if i := s.at.find(h, func(p int32) bool { return s.addrs[p].a == k }); i >= 0 {
		s.addrs[i].refs++
		return i
	}
	var i int32
	if n := len(s.free); n > 0 {
		i, s.free = s.free[n-1], s.free[:n-1]
		s.addrs[i] = source{a: k, refs: 1}
	} else {
		i = int32(len(s.addrs))
		s.addrs = append(s.addrs, source{a: k, refs: 1})
	}
	s.at.insert(h, i, s.hashAt)
	return i
}

// drop counts one reference less to handle i, forgetting its address with the last.
func (s *sources) drop(i int32) {
	e := &s.addrs[i]
	if e.refs--; e.refs > 0 {
		return
	}
	s.at.remove(e.a.hash(s.seed), i, s.hashAt)
	*e = source{}
	s.free = append(s.free, i)
}

func (s *sources) addr(i int32) netip.Addr { return s.addrs[i].a.addr() }

func (s *sources) hashAt(p int32) uint64 { return s.addrs[p].a.hash(s.seed) }
