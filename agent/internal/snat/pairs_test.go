package snat

import (
	"math/rand/v2"
	"testing"
)

// entries decodes a slot's packed entries.
func (s *pairSlot) entries() []pairCount {
	var out []pairCount
	g := int32(-1)
	for k := 0; k < len(s.packed); {
		var n int32
		g, n, k = nextEntry(s.packed, k, g)
		out = append(out, pairCount{g, n})
	}
	return out
}

// listedAndPacked counts the pairs with both a listed and a packed entry in one slot.
func (w *pairWheel) listedAndPacked() int {
	both := 0
	for i := range w.slots {
		for _, e := range w.slots[i].ents {
			if packedHas(w.slots[i].packed, e.g) {
				both++
			}
		}
	}
	return both
}

// TestPairWheelReleasesExactlyWhatWasHeld drives the wheel with random holds against a plain map of (second,
// pair) -> ports: holds in and out of second order, packs at some Ticks and not others, pairs far apart (gaps
// that take two-byte varints) and pairs with hundreds of ports in one second (counts that take two bytes).
// Every second the ports released per pair and the (second, pair) entries counted must be the model's.
func TestPairWheelReleasesExactlyWhatWasHeld(t *testing.T) {
	const span, pairs = 12, 3000
	rng := rand.New(rand.NewPCG(29, 1))
	w := newPairWheel(newWheel(span * 1e9))
	pos := make([]heldPos, pairs)
	type at struct {
		s int64
		g int32
	}
	model := map[at]int32{}
	var sawBoth, sawCount, sawGap bool
	for now := int64(1); now <= 400; now++ {
		released := map[int32]int32{}
		w.expire(now, func(g, n int32) { released[g] += n })
		want := map[int32]int32{}
		for k, n := range model {
			if k.s <= now {
				want[k.g] += n
				delete(model, k)
			}
		}
		if len(released) != len(want) {
			t.Fatalf("second %d: released %d pairs, want %d", now, len(released), len(want))
		}
		for g, n := range want {
			if released[g] != n {
				t.Fatalf("second %d: pair %d released %d ports, want %d", now, g, released[g], n)
			}
		}
		for range rng.IntN(300) {
			g := int32(rng.IntN(pairs))
			if rng.IntN(4) == 0 {
				g = int32(rng.IntN(5)) // a few busy pairs
			}
			until := now + 1 + int64(rng.IntN(span))
			if rng.IntN(3) > 0 {
				until = now + span // most holds in second order
			}
			w.add(until, now, g, &pos[g])
			model[at{until, g}]++
		}
		for range rng.IntN(400) { // one pair's burst
			w.add(now+span, now, 7, &pos[7])
			model[at{now + span, 7}]++
		}
		if rng.IntN(5) > 0 {
			w.pack(now)
			w.pack(now + 1) // the Tick of a second no hold reached: this second's entries packed as well
		}
		if w.pairs != len(model) {
			t.Fatalf("second %d: %d (second, pair) entries counted, want %d", now, w.pairs, len(model))
		}
		sawBoth = sawBoth || w.listedAndPacked() > 0
		for i := range w.slots {
			prev := int32(-1)
			for _, e := range w.slots[i].entries() {
				sawCount, sawGap = sawCount || e.n > 129, sawGap || e.g-prev > 64
				prev = e.g
			}
		}
	}
	if !sawBoth || !sawCount || !sawGap {
		t.Fatalf("the run did not reach every case: packed and listed %v, two-byte count %v, two-byte gap %v",
			sawBoth, sawCount, sawGap)
	}
}
