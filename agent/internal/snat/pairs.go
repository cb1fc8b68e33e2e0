package snat

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// pairWheel holds closed flows' ports per (destination, workload) pair until their time is up, one slot
// per second like wheel: a slot keeps, for each pair with a port whose hold ends in that second, how many.
// 2,000 closes a second spread over tens of thousands of pairs make almost every (pair, second) entry its
// own port, so the entries are about as many as the ports held (480,000 at issue 29's load) and their size
// is what the wheel costs. A slot therefore keeps them packed once its second's closes have come (pack, at
// the Tick after the slot's last close): sorted by pair, each entry a varint of the gap to the pair before
// and whether more than one port follows, about 1 byte an entry where a listed pairCount takes 8.
//
// The entries of the closes since (mostly of this second) wait in an unsorted list: each pair remembers
// where its latest one is (heldPos), so a second port of a pair in the same second is found without a
// search; only a pair whose ports arrive out of second order (a UDP flow's hold dated back by its quiet
// time, TCP and UDP holds of different lengths) needs the slot's index, built for that slot the first time
// it is needed, and a scan of the slot's packed entries (a pair already packed gets a second entry, merged
// into the first at the next pack and counted once).
type pairWheel struct {
	slots []pairSlot
	pairs int   // (pair, second) entries held: what counts against Config.MaxTracked
	done  int64 // every second up to this one has been expired
	// spare are the lists of packed slots, kept for the next slot that needs one (a second's list is
	// 2,000 entries at issue 29's load: reused, not garbage every second); merged and coded are pack's.
	spare  [][]pairCount
	merged []pairCount
	coded  []byte
}

// spareLists bounds the lists kept for reuse: at a steady load one or two slots are filling at a time.
const spareLists = 4

type pairSlot struct {
	at     int64
	packed []byte      // entries packed before, sorted by pair (appendEntry's coding)
	ents   []pairCount // entries since, unsorted; a pair may have one here and one packed
	index  map[int32]int32
	// distinct is how many pairs have an entry in this slot, packed or listed (a pair in both once);
	// filled is the second of the slot's latest close.
	distinct int32
	filled   int64
}

type pairCount struct{ g, n int32 }

// heldPos is a pair's place in the pairWheel: its listed entry of second lastAt is ents[pos] (unless that
// slot was packed since), and it has no entry after second maxAt. The seconds are the table's clock in 32
// bits (68 years of it), so a pair's state is 28 bytes, not 40: 27,000 pairs at issue 29's load.
type heldPos struct {
	lastAt, maxAt int32
	pos           int32
}

func newPairWheel(w wheel) pairWheel { return pairWheel{slots: make([]pairSlot, len(w.slots))} }

// add holds one port of pair g until second at (after now: the caller expired up to now).
func (w *pairWheel) add(at, now int64, g int32, p *heldPos) {
	s := &w.slots[at%int64(len(w.slots))]
	if s.at != at { // expired (or never used): empty
		s.at = at
	}
	s.filled = now
	counted := false // g has an entry in this slot already, packed
	switch {
	case int64(p.lastAt) == at && int(p.pos) < len(s.ents) && s.ents[p.pos].g == g:
		s.ents[p.pos].n++
		return
	case at > int64(p.maxAt): // every entry of g is of an earlier second: none is in this slot
		p.maxAt = int32(at)
	default:
		if s.index == nil {
			s.index = make(map[int32]int32, len(s.ents))
			for i, e := range s.ents {
				s.index[e.g] = int32(i)
			}
		}
		if i, ok := s.index[g]; ok {
			s.ents[i].n++
			p.lastAt, p.pos = int32(at), i
			return
		}
		counted = packedHas(s.packed, g)
	}
	if s.ents == nil && len(w.spare) > 0 {
		s.ents, w.spare = w.spare[len(w.spare)-1], w.spare[:len(w.spare)-1]
	}
	p.lastAt, p.pos = int32(at), int32(len(s.ents))
	if s.index != nil {
		s.index[g] = p.pos
	}
	s.ents = append(s.ents, pairCount{g: g, n: 1})
	if !counted {
		s.distinct++
		w.pairs++
	}
}

// pack packs the listed entries of every slot no close has reached in second now (the Table's Tick calls
// it after expiring up to now), merging them with the slot's packed ones.
func (w *pairWheel) pack(now int64) {
	for i := range w.slots {
		s := &w.slots[i]
		if len(s.ents) == 0 || s.filled >= now {
			continue
		}
		slices.SortFunc(s.ents, func(a, b pairCount) int { return cmp.Compare(a.g, b.g) })
		w.merged = w.merged[:0]
		prev, j := int32(-1), 0
		for k := 0; k < len(s.packed); {
			var n int32
			prev, n, k = nextEntry(s.packed, k, prev)
			for ; j < len(s.ents) && s.ents[j].g < prev; j++ {
				w.merged = append(w.merged, s.ents[j])
			}
			if j < len(s.ents) && s.ents[j].g == prev {
				n += s.ents[j].n
				j++
			}
			w.merged = append(w.merged, pairCount{g: prev, n: n})
		}
		w.merged = append(w.merged, s.ents[j:]...)
		w.coded, prev = w.coded[:0], -1
		for _, e := range w.merged {
			w.coded = appendEntry(w.coded, prev, e.g, e.n)
			prev = e.g
		}
		s.packed = append(s.packed[:0], w.coded...)
		w.recycle(s)
	}
}

// recycle keeps a slot's list for reuse and forgets its index.
func (w *pairWheel) recycle(s *pairSlot) {
	if s.ents != nil && len(w.spare) < spareLists {
		w.spare = append(w.spare, s.ents[:0])
	}
	s.ents, s.index = nil, nil
}

// expire releases every slot whose second is at most now (the packed entries' memory is kept for the
// slot's next second).
func (w *pairWheel) expire(now int64, release func(g, n int32)) {
	if now <= w.done {
		return
	}
	from := w.done + 1
	if now-from >= int64(len(w.slots)) { // asleep for longer than the hold: every slot is due
		from = now - int64(len(w.slots)) + 1
	}
	for at := from; at <= now; at++ {
		s := &w.slots[at%int64(len(w.slots))]
		if s.distinct == 0 || s.at > now {
			continue
		}
		// A pair both packed and listed is released in two parts: the first leaves it the second's ports
		// held, so it is not settled (forgotten) before the second.
		g := int32(-1)
		for k := 0; k < len(s.packed); {
			var n int32
			g, n, k = nextEntry(s.packed, k, g)
			release(g, n)
		}
		for _, e := range s.ents {
			release(e.g, e.n)
		}
		w.pairs -= int(s.distinct)
		s.packed, s.distinct = s.packed[:0], 0
		w.recycle(s)
	}
	w.done = now
}

// appendEntry codes pair g's n ports after pair prev (-1 for a slot's first; pairs ascend): the gap
// between them shifted left once, its low bit set when n > 1, then n-2 in that case (varints).
func appendEntry(b []byte, prev, g, n int32) []byte {
	v := uint64(g-prev-1) << 1
	if n == 1 {
		return binary.AppendUvarint(b, v)
	}
	b = binary.AppendUvarint(b, v|1)
	return binary.AppendUvarint(b, uint64(n-2))
}

// nextEntry decodes the entry at b[k:] after pair prev: its pair, its ports, and where the next one starts.
func nextEntry(b []byte, k int, prev int32) (g, n int32, next int) {
	v, m := binary.Uvarint(b[k:])
	k += m
	g, n = prev+1+int32(v>>1), 1
	if v&1 != 0 {
		c, m := binary.Uvarint(b[k:])
		k += m
		n = int32(c) + 2
	}
	return g, n, k
}

// packedHas says whether pair g has a packed entry (a scan: only out-of-order holds ask).
func packedHas(b []byte, g int32) bool {
	prev := int32(-1)
	for k := 0; k < len(b) && prev < g; {
		prev, _, k = nextEntry(b, k, prev)
	}
	return prev == g
}

// topK keeps the best k of the pairs offered, in a heap whose root is the worst kept: each offer costs
// O(log k) and the pairs are never all sorted.
type topK struct {
	k   int
	ids []int32
}

func (h *topK) reset(k int) { h.k, h.ids = k, h.ids[:0] }

func (h *topK) offer(g int32, better func(a, b int32) bool) {
	if h.k <= 0 {
		return
	}
	if len(h.ids) < h.k {
		h.ids = append(h.ids, g)
		for i := len(h.ids) - 1; i > 0; { // up while better than the parent is worse
			parent := (i - 1) / 2
			if !better(h.ids[parent], h.ids[i]) {
				break
			}
			h.ids[parent], h.ids[i] = h.ids[i], h.ids[parent]
			i = parent
		}
		return
	}
	if !better(g, h.ids[0]) {
		return
	}
	h.ids[0] = g
	for i := 0; ; { // down: swap with the worse child while that child is worse
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h.ids) && better(h.ids[worst], h.ids[l]) {
			worst = l
		}
		if r < len(h.ids) && better(h.ids[worst], h.ids[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h.ids[i], h.ids[worst] = h.ids[worst], h.ids[i]
		i = worst
	}
}

// sorted is the kept pairs, best first.
func (h *topK) sorted(better func(a, b int32) bool) []int32 {
	slices.SortFunc(h.ids, func(a, b int32) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	})
	return h.ids
}
