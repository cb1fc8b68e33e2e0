package snat

// slotIndex finds a record among records the caller keeps in a dense slice, by the record's key: an
// open-addressing table (linear probing) of the records' positions, 4 bytes a slot, the keys read from the
// records themselves. A Go map of key to position keeps each key again beside its position, in tables that
// churn (2,000 deletes and inserts a second at issue 29's load) leaves between 40 and 90 % full: 45 bytes
// an open flow against 5 to 11 here. A removal shifts the entries after it back (no tombstones), so the
// table never fills with deleted slots; it grows at three quarters full and never shrinks, as a map.
type slotIndex struct {
	slots []int32 // a record's position + 1; 0 is an empty slot
	n     int
}

func (x *slotIndex) len() int { return x.n }

// find is the position of the record with hash h that is(position) says is the one sought, or -1.
func (x *slotIndex) find(h uint64, is func(int32) bool) int32 {
	if len(x.slots) == 0 {
		return -1
	}
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		p := x.slots[i]
		if p == 0 {
			return -1
		}
		if is(p - 1) {
			return p - 1
		}
	}
}

// insert adds the record at pos, of hash h (not in the index yet); hashAt is every record's hash, for
// growing.
func (x *slotIndex) insert(h uint64, pos int32, hashAt func(int32) uint64) {
	if (x.n+1)*4 > len(x.slots)*3 {
		old := x.slots
		x.slots = make([]int32, max(16, 2*len(old)))
		for _, p := range old {
			if p != 0 {
				x.put(hashAt(p-1), p)
			}
		}
	}
	x.put(h, pos+1)
	x.n++
}

func (x *slotIndex) put(h uint64, p int32) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = p
}

// remove takes out the record at pos, of hash h (in the index), moving back each later entry of the run
// that no longer finds its way past the emptied slot.
func (x *slotIndex) remove(h uint64, pos int32, hashAt func(int32) uint64) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != pos+1 {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		home := hashAt(x.slots[j]-1) & mask
		// The entry at j stays if its home is cyclically in (i, j]: its probe from home reaches j
		// without passing i.
		if (i < j && i < home && home <= j) || (i > j && (home > i || home <= j)) {
			continue
		}
		x.slots[i] = x.slots[j]
		i = j
	}
	x.slots[i] = 0
	x.n--
}

// mix hashes two words: b weighted by splitmix64's increment, then its finalizer (the constants and shifts
// of https://prng.di.unimi.it/splitmix64.c). slotIndex probes linearly, so neighbouring keys (conntrack
// ids of one burst, addresses of one pod CIDR) must land far apart; words that still collide only make a
// longer run.
func mix(a, b uint64) uint64 {
	z := a + b*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
