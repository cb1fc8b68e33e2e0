package snat

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"unsafe"
)

// TestSourcesKeepEachAddressOnceWhileAFlowNamesIt interns and drops addresses of a small pool (IPv4, the
// same address mapped into IPv6, IPv6, none) in random order against a plain count per address.
func TestSourcesKeepEachAddressOnceWhileAFlowNamesIt(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	var pool []netip.Addr
	for i := range 40 {
		v4 := netip.AddrFrom4([4]byte{10, 244, 1, byte(i)})
		pool = append(pool, v4, netip.AddrFrom16(v4.As16()), netip.AddrFrom16([16]byte{0xfd, 15: byte(i)}))
	}
	pool = append(pool, netip.Addr{})
	s := sources{seed: rng.Uint64()}
	refs, handle := map[netip.Addr]int{}, map[netip.Addr]int32{}
	var held []netip.Addr // one entry a reference
	for step := range 20000 {
		if len(held) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(held))
			a := held[i]
			held[i], held = held[len(held)-1], held[:len(held)-1]
			s.drop(handle[a])
			if refs[a]--; refs[a] == 0 {
				delete(refs, a)
				delete(handle, a)
			}
		} else {
			a := pool[rng.IntN(len(pool))]
			h := s.intern(a)
			if old, ok := handle[a]; ok && old != h {
				t.Fatalf("step %d: %v interned as %d while it is %d", step, a, h, old)
			}
			handle[a], held = h, append(held, a)
			refs[a]++
		}
		if s.at.len() != len(refs) {
			t.Fatalf("step %d: %d addresses kept, want %d", step, s.at.len(), len(refs))
		}
		for a, h := range handle {
			if got := s.addr(h); got != a || s.addrs[h].refs != int32(refs[a]) {
				t.Fatalf("step %d: handle %d is %v (%d refs), want %v (%d)", step, h, got, s.addrs[h].refs, a, refs[a])
			}
		}
	}
	if len(s.addrs) > len(pool) {
		t.Fatalf("%d places for %d addresses: forgotten places are not reused", len(s.addrs), len(pool))
	}
}

// An open flow carries its key for the slotIndex to compare and its source as a handle: 40 bytes, what it
// took as a map's value with the address in it, so the index's saving is not spent on the flows.
func TestAnOpenFlowStaysAt40Bytes(t *testing.T) {
	if n := unsafe.Sizeof(openFlow{}); n != 40 {
		t.Fatalf("openFlow is %d bytes", n)
	}
}
