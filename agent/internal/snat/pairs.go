package snat

import "slices"

// pairWheel holds closed flows' ports per (destination, workload) pair until their time is up, one slot
// per second like wheel, but a slot is a list of (pair, ports) entries rather than a map: 2,000 closes a
// second spread over tens of thousands of pairs make almost every entry its own, and a list costs 8 bytes
// an entry where a map costs several times that. Each pair remembers where its latest entry is (heldPos),
// so a second port of a pair in the same second is found without a search; only a pair whose ports arrive
// out of second order (a UDP flow's hold dated back by its quiet time, TCP and UDP holds of different
// lengths) needs the slot's index, built for that slot the first time it is needed.
type pairWheel struct {
	slots []pairSlot
	pairs int   // (pair, second) entries held: what counts against Config.MaxTracked
	done  int64 // every second up to this one has been expired
}

type pairSlot struct {
	at    int64
	ents  []pairCount
	index map[int32]int32 // pair -> position in ents; nil until a pair's ports arrive out of order
}

type pairCount struct{ g, n int32 }

// heldPos is a pair's place in the pairWheel: its entry of second lastAt is ents[pos], and it has no entry
// after second maxAt.
type heldPos struct {
	lastAt, maxAt int64
	pos           int32
}

func newPairWheel(w wheel) pairWheel { return pairWheel{slots: make([]pairSlot, len(w.slots))} }

// add holds one port of pair g until second at (after now: the caller expired up to now).
func (w *pairWheel) add(at int64, g int32, p *heldPos) {
	s := &w.slots[at%int64(len(w.slots))]
	if s.at != at {
		s.at, s.ents, s.index = at, s.ents[:0], nil
	}
	switch {
	case p.lastAt == at:
		s.ents[p.pos].n++
		return
	case at > p.maxAt: // every entry of g is of an earlier second: none is in this slot
		p.maxAt = at
	default:
		if s.index == nil {
			s.index = make(map[int32]int32, len(s.ents))
			for i, e := range s.ents {
				s.index[e.g] = int32(i)
			}
		}
		if i, ok := s.index[g]; ok {
			s.ents[i].n++
			p.lastAt, p.pos = at, i
			return
		}
	}
	p.lastAt, p.pos = at, int32(len(s.ents))
	if s.index != nil {
		s.index[g] = p.pos
	}
	s.ents = append(s.ents, pairCount{g: g, n: 1})
	w.pairs++
}

// expire releases every slot whose second is at most now (the list's memory is kept for the slot's next
// second).
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
		if len(s.ents) == 0 || s.at > now {
			continue
		}
		for _, e := range s.ents {
			release(e.g, e.n)
		}
		w.pairs -= len(s.ents)
		s.ents, s.index = s.ents[:0], nil
	}
	w.done = now
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
