package snat

import (
	"math/rand/v2"
	"testing"
)

// TestSlotIndexFindsWhatAPlainMapFinds inserts and removes random keys, most of them colliding on a few
// home slots (so removals shift long runs back, across the table's end too), against a Go map.
func TestSlotIndexFindsWhatAPlainMapFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 2))
	var x slotIndex
	var keys []uint64 // keys[pos] is the record's key; 0 is a free position
	want := map[uint64]int32{}
	hash := func(k uint64) uint64 {
		if k%3 == 0 {
			return ^(k % 8) // a pile-up on the last few slots, whose runs wrap to the first
		}
		return k * 0x9e3779b97f4a7c15
	}
	hashAt := func(pos int32) uint64 { return hash(keys[pos]) }
	find := func(k uint64) int32 { return x.find(hash(k), func(p int32) bool { return keys[p] == k }) }
	for step := range 20000 {
		k := uint64(1 + rng.IntN(3000))
		if pos, ok := want[k]; ok && rng.IntN(2) == 0 {
			x.remove(hash(k), pos, hashAt)
			keys[pos] = 0
			delete(want, k)
		} else if !ok {
			pos := int32(len(keys))
			for i, old := range keys {
				if old == 0 {
					pos = int32(i)
					break
				}
			}
			if pos == int32(len(keys)) {
				keys = append(keys, 0)
			}
			keys[pos] = k
			x.insert(hash(k), pos, hashAt)
			want[k] = pos
		}
		if step%97 == 0 {
			for k := uint64(1); k <= 3000; k++ {
				pos, ok := want[k]
				if got := find(k); (ok && got != pos) || (!ok && got != -1) {
					t.Fatalf("step %d: key %d found at %d, want %d (%v)", step, k, got, pos, ok)
				}
			}
		}
		if x.len() != len(want) {
			t.Fatalf("step %d: %d entries, want %d", step, x.len(), len(want))
		}
	}
	if len(x.slots) < 2048 {
		t.Fatalf("the index never grew past %d slots", len(x.slots))
	}
}
