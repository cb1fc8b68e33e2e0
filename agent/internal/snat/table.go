package snat

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Config sizes a Table.
type Config struct {
	Classifier Classifier
	// TCPHold is how long a TCP flow still holds its SNAT port after its close (profile tcp_hold_seconds, else
	// hold_seconds; --snat-hold). UDPHold is the same for a UDP flow after its last packet (udp_hold_seconds,
	// else hold_seconds): a UDP flow has no close, so conntrack destroys its entry its UDP timeout after the
	// last packet, and the DESTROY's Flow.Quiet dates the hold back to that packet (package ctnetlink, ctdecode.go). Until the
	// DESTROY the flow counts as open, so a UDPHold shorter than conntrack's UDP timeout counts it for that
	// timeout (over, never under).
	TCPHold, UDPHold time.Duration
	// Top is how many destinations are named in the metrics; the rest are summed as "other".
	Top int
	// PeakWindow is the span of the peak gauge (--snat-peak-window).
	PeakWindow time.Duration
	// MaxTracked bounds memory: open flows plus (destination, second) buckets of closed flows still held.
	// Past it a new flow is not counted (Snapshot.Untracked counts it), so the numbers become a lower bound.
	MaxTracked int
	// Attributor, if set, names the workload behind each flow's source address (the pod watch); WorkloadTop
	// is how many (workload, destination) pairs the Snapshot names, the rest summed (--snat-workload-top).
	Attributor  Attributor
	WorkloadTop int
}

// Table counts ports in use per destination: open flows plus flows ended less than their protocol's hold ago. It is safe
// for concurrent use: the event reader, a dump and the 1 Hz Tick may run at once.
type Table struct {
	mu    sync.Mutex
	cfg   Config
	epoch time.Time // seconds are counted from here on the monotonic clock

	// open finds an open flow's place in flows by its key: 4 bytes a slot (index.go), where a Go map of key
	// to place, churned by 2,000 closes and opens a second, took about 45 bytes an open flow. A free place
	// (flowFree) has dest -1. srcs holds the flows' source addresses, once each.
	open     slotIndex
	seed     uint64 // of open's hashes, random so that no one can choose keys that pile up
	flows    []openFlow
	flowFree []int32
	srcs     sources
	index    map[Destination]int32
	dests    []dest
	free     []int32
	held     wheel
	span     [2]int64 // TCP's and UDP's hold in whole seconds (spanOf)
	peak     window

	otherNew  uint64 // new connections to destinations not named in the metrics when they were made
	untracked uint64
	unevented int // open flows with unevented set

	// A dump in progress: its generation marks the entries it saw, so the entries it did not see can be
	// closed when it ends; entries destroyed meanwhile must not be brought back by a late dump message.
	gen       uint32
	dumping   bool
	freshDump bool // the dump opens a subscription (BeginDump): flows new to the table are unevented
	destroyed map[key]struct{}
	// swept are the flows the last complete dump closed because it did not find them; sweptAt is when (a
	// second of the table's clock). Their DESTROY events may still wait in the socket's buffer (the reader
	// reads every batchInterval) and must not hold their ports a second time. Forgotten after sweptGrace.
	swept   map[key]struct{}
	sweptAt int64

	snap  Snapshot
	order []int32 // scratch for Tick's ranking

	// With an Attributor (workload.go): the ports in use per (destination, workload) pair, open and held;
	// closed flows' ports held per pair in heldBy, beside held's per destination, so that a workload's share
	// is known after its flows end. Workloads are interned to small ids (wids, wnames), counted by the pairs
	// that name them (wrefs) and forgotten with the last.
	heldBy    pairWheel
	groupAt   map[uint64]int32
	groups    []groupState
	groupFree []int32
	wids      map[Workload]int32
	wnames    []Workload
	wrefs     []int32
	wfree     []int32
	// attrGen is the Versioned Attributor's generation when every open flow was last asked for (attrKnown:
	// it is Versioned and they were).
	attrGen   uint64
	attrKnown bool
	topPairs  topK // scratch for Tick's attribution
	pressed   topK
}

// openFlow is 40 bytes: 50,000 of them are most of the table's heap beside the held ports.
type openFlow struct {
	dest int32
	gen  uint32
	// first is when the flow was first seen (its NEW event, or the dump that found it), since the table's
	// epoch. With src, the flow's original source (a handle in Table.srcs), it decides which pod the flow
	// belongs to.
	first time.Duration
	k     key // open's lookups compare it
	src   int32
	// grp is the (destination, workload) pair the flow is counted under (-1: no Attributor).
	grp int32
	// unevented: only a dump has reported the flow, never a NEW event. With net.netfilter.nf_conntrack_events
	// at its default 2 ("auto": https://docs.kernel.org/networking/nf_conntrack-sysctl.html; init_conntrack in
	// torvalds/linux net/netfilter/nf_conntrack_core.c), the kernel gives an entry its event cache only if a
	// listener exists when the entry is made: an entry older than the subscription never sends its DESTROY,
	// so only a later dump can find it gone (Watcher's sweeps). Measured on 6.18: 24,886 of 24,940 flows a
	// start dump found never had one (bench/agent/results/2026-12-03-openleak-open-vs-conntrack.txt).
	unevented bool
}

// dest is one destination's state; named (exported) ones are the top Config.Top of the last Tick.
type dest struct {
	d     Destination
	label string
	open  int32
	held  int32
	named bool
	// newNamed counts new connections since the destination was last named: its counter series starts
	// at 0 when it enters the top and disappears when it leaves, so every series only ever grows.
	newNamed uint64
}

func (d *dest) inUse() int { return int(d.open) + int(d.held) }

// NewTable returns an empty table; now starts its clock.
func NewTable(cfg Config, now time.Time) *Table {
	if cfg.Top < 1 {
		cfg.Top = 1
	}
	if cfg.MaxTracked < 1 {
		cfg.MaxTracked = 1
	}
	seed := rand.Uint64()
	t := &Table{cfg: cfg, epoch: now, seed: seed, srcs: sources{seed: seed}, index: map[Destination]int32{}}
	t.held = newWheel(max(cfg.TCPHold, cfg.UDPHold))
	t.heldBy, t.groupAt, t.wids = newPairWheel(t.held), map[uint64]int32{}, map[Workload]int32{}
	t.span = [2]int64{seconds(cfg.TCPHold), seconds(cfg.UDPHold)}
	t.peak = newWindow(cfg.PeakWindow)
	return t
}

func (t *Table) sec(now time.Time) int64 { return int64(now.Sub(t.epoch) / time.Second) }

// spanOf is the hold, in whole seconds, of a flow of protocol proto (the classifier counts TCP and UDP only).
func (t *Table) spanOf(proto uint8) int64 {
	if proto == ProtoUDP {
		return t.span[1]
	}
	return t.span[0]
}

// secCeil rounds up: a port is held a little longer rather than a little shorter than its hold.
func (t *Table) secCeil(at time.Time) int64 {
	d := at.Sub(t.epoch)
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return s
}

// New records a NEW event: a flow this node started, counted from now until it ends plus its protocol's hold.
func (t *Table) New(f Flow, now time.Time) {
	d, ok := t.cfg.Classifier.Destination(f)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add(f, d, now, true, fromEvent)
}

// Destroy records a DESTROY event: the flow went quiet f.Quiet before now (a TCP flow's close, a UDP flow's
// last packet) and holds its port until its protocol's hold after that.
func (t *Table) Destroy(f Flow, now time.Time) {
	d, ok := t.cfg.Classifier.Destination(f)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sec(now)
	t.expire(s)
	k := f.key()
	of, known := t.close(k)
	if _, ok := t.swept[k]; !known && ok {
		delete(t.swept, k) // the dump that missed it closed it and holds its port already
		return
	}
	if !known {
		// Never seen open: it started and ended inside a dump's window, or while events were lost. It
		// existed, so it still holds its port.
		if t.dumping {
			t.destroyed[k] = struct{}{}
		}
		idx := t.destIndex(d)
		if idx < 0 {
			t.untracked++
			return
		}
		of = openFlow{dest: idx, first: now.Sub(t.epoch), k: k, src: t.srcs.intern(f.OrigSrc), grp: -1}
	}
	t.retire(of, t.secCeil(now.Add(-f.Quiet)), s)
}

// retire ends a closed flow's life in the table: its port held from closedAt for its protocol's hold, its
// source, workload pair and destination let go. A DESTROY and a dump that no longer lists the flow both end here.
func (t *Table) retire(of openFlow, closedAt, now int64) {
	t.hold(of, closedAt, now, t.spanOf(of.k.proto))
	t.srcs.drop(of.src)
	t.settle(of.grp)
	t.release(of.dest)
}

// find is the place in flows of the open flow with key k, or -1.
func (t *Table) find(k key) int32 {
	return t.open.find(k.hash(t.seed), func(i int32) bool { return t.flows[i].k == k })
}

func (t *Table) hashAt(i int32) uint64 { return t.flows[i].k.hash(t.seed) }

// Where add learns of a flow: a NEW event (its DESTROY will come), a dump that opens a subscription (it
// may be older than the subscription: unevented) or one within a subscription (made while subscribed).
const (
	fromEvent = iota
	fromFreshDump
	fromRedump
)

// add counts one open flow unless it is known already (an event and a dump both report it).
func (t *Table) add(f Flow, d Destination, now time.Time, isNew bool, from int) {
	k := f.key()
	if i := t.find(k); i >= 0 {
		p := &t.flows[i]
		p.gen = t.gen
		if from == fromEvent && p.unevented {
			p.unevented, t.unevented = false, t.unevented-1
		}
		return
	}
	if !t.room() {
		t.untracked++
		return
	}
	idx := t.destIndex(d)
	if idx < 0 {
		t.untracked++
		return
	}
	first := now.Sub(t.epoch)
	i := t.place(openFlow{dest: idx, gen: t.gen, first: first, k: k, src: t.srcs.intern(f.OrigSrc),
		grp: t.openAttributed(idx, f.OrigSrc, first), unevented: from == fromFreshDump})
	if from == fromFreshDump {
		t.unevented++
	}
	t.open.insert(k.hash(t.seed), i, t.hashAt)
	e := &t.dests[idx]
	e.open++
	if isNew {
		if e.named {
			e.newNamed++
		} else {
			t.otherNew++
		}
	}
	t.peak.note(t.sec(now), e.inUse())
}

// place keeps an open flow in flows, returning where.
func (t *Table) place(of openFlow) int32 {
	if n := len(t.flowFree); n > 0 {
		i := t.flowFree[n-1]
		t.flowFree, t.flows[i] = t.flowFree[:n-1], of
		return i
	}
	t.flows = append(t.flows, of)
	return int32(len(t.flows) - 1)
}

// close forgets an open flow, returning it. Its source's handle is still the caller's, to drop after the
// hold that reads it.
func (t *Table) close(k key) (openFlow, bool) {
	i := t.find(k)
	if i < 0 {
		return openFlow{dest: -1, grp: -1}, false
	}
	of := t.flows[i]
	t.open.remove(k.hash(t.seed), i, t.hashAt)
	t.flows[i], t.flowFree = openFlow{dest: -1, grp: -1}, append(t.flowFree, i)
	t.dests[of.dest].open--
	if of.unevented {
		t.unevented--
	}
	t.closeAttributed(of)
	return of, true
}

// hold keeps one closed flow's port until span after closedAt (all in seconds of the table's clock).
func (t *Table) hold(of openFlow, closedAt, now, span int64) {
	idx, until := of.dest, closedAt+span
	if until <= now {
		return
	}
	if !t.held.has(until, idx) && !t.room() {
		t.untracked++
		return
	}
	t.held.add(until, idx)
	t.holdAttributed(of, until, now)
	e := &t.dests[idx]
	e.held++
	t.peak.note(now, e.inUse())
}

func (t *Table) room() bool { return t.tracked() < t.cfg.MaxTracked }

// tracked is what MaxTracked bounds: open flows and held (second, destination) and (second, destination,
// workload) pairs.
func (t *Table) tracked() int { return t.open.len() + t.held.pairs + t.heldBy.pairs }

// destIndex finds or makes d's state; -1 when the table is full.
func (t *Table) destIndex(d Destination) int32 {
	if idx, ok := t.index[d]; ok {
		return idx
	}
	if len(t.index) >= t.cfg.MaxTracked {
		return -1
	}
	var idx int32
	if n := len(t.free); n > 0 {
		idx, t.free = t.free[n-1], t.free[:n-1]
		t.dests[idx] = dest{d: d, label: d.String()}
	} else {
		idx = int32(len(t.dests))
		t.dests = append(t.dests, dest{d: d, label: d.String()})
	}
	t.index[d] = idx
	return idx
}

// release forgets a destination with nothing in use that is not named in the metrics.
func (t *Table) release(idx int32) {
	e := &t.dests[idx]
	if e.open != 0 || e.held != 0 || e.named {
		return
	}
	delete(t.index, e.d)
	*e = dest{}
	t.free = append(t.free, idx)
}

// expire drops held ports whose time is up, up to second s.
func (t *Table) expire(s int64) {
	t.held.expire(s, func(idx, n int32) {
		t.dests[idx].held -= n
		t.release(idx)
	})
	t.expireGroups(s)
}

// BeginDump starts a dump of the whole table: entries it reports are kept, those it does not are closed
// by EndDump. It opens a subscription (the start, or after an error): flows it reports that the table does
// not know may be older than the subscription, with no DESTROY to come (openFlow.unevented).
func (t *Table) BeginDump() { t.beginDump(true) }

// BeginRedump starts a dump within a subscription (after an overflow, or a sweep): an entry it reports that
// the table does not know was made while subscribed, so its DESTROY comes (its NEW was lost or is queued).
func (t *Table) BeginRedump() { t.beginDump(false) }

func (t *Table) beginDump(fresh bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gen++
	t.dumping, t.freshDump = true, fresh
	t.destroyed = map[key]struct{}{}
}

// Dumped records one entry of the dump. missed: the dump follows lost events, so an entry the table did
// not know is a new connection it never counted.
func (t *Table) Dumped(f Flow, now time.Time, missed bool) {
	d, ok := t.cfg.Classifier.Destination(f)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := f.key()
	if _, gone := t.destroyed[k]; gone {
		return
	}
	from := fromRedump
	if t.freshDump {
		from = fromFreshDump
	}
	t.add(f, d, now, missed, from)
}

// Unevented is how many open flows only a dump has reported: their DESTROY may never come (openFlow), so
// the Watcher dumps again while there are any.
func (t *Table) Unevented() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.unevented
}

// sweptGrace is how long (s) a late DESTROY of a flow a dump closed is recognised: events wait at most
// batchInterval in the socket, plus the time to apply the ones queued before them.
const sweptGrace = 2

// EndDump finishes a dump. When it was complete, open flows it did not report ended while events were
// lost: they are closed now (their close time is unknown, so they are held for their protocol's whole hold).
func (t *Table) EndDump(now time.Time, complete bool) { t.endDump(now, complete, false) }

// EndSweep finishes a sweep (a dump for Unevented): like EndDump, but only flows no NEW event reported are
// closed. A flow an event reported whose entry has expired is missing from the dump too, but its DESTROY
// comes when the kernel reaps the entry (seconds to a minute later, past sweptGrace): closing it now would
// hold its port twice.
func (t *Table) EndSweep(now time.Time, complete bool) { t.endDump(now, complete, true) }

func (t *Table) endDump(now time.Time, complete, uneventedOnly bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dumping, t.destroyed = false, nil
	if !complete {
		return
	}
	s := t.sec(now)
	t.swept, t.sweptAt = map[key]struct{}{}, s
	for i := range t.flows {
		if p := &t.flows[i]; p.dest >= 0 && p.gen != t.gen && (p.unevented || !uneventedOnly) {
			k := p.k
			t.swept[k] = struct{}{}
			of, _ := t.close(k)
			t.retire(of, s, s)
		}
	}
}

// Tick expires held ports, ranks the destinations and takes the Snapshot the metrics and the Node report
// read. Call it about once a second.
func (t *Table) Tick(now time.Time) Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sec(now)
	t.expire(s)
	t.heldBy.pack(s)
	if t.swept != nil && s-t.sweptAt > sweptGrace {
		t.swept = nil
	}
	t.order = t.order[:0]
	for _, idx := range t.index {
		t.order = append(t.order, idx)
	}
	slices.SortFunc(t.order, func(a, b int32) int {
		da, db := &t.dests[a], &t.dests[b]
		return cmp.Or(cmp.Compare(db.inUse(), da.inUse()), cmp.Compare(da.label, db.label))
	})
	snap := Snapshot{Time: now, OtherNew: t.otherNew, Open: t.open.len(), Tracked: t.tracked(), Untracked: t.untracked}
	for rank, idx := range t.order {
		t.rank(&snap, idx, rank < t.cfg.Top && t.dests[idx].inUse() > 0)
	}
	snap.Destinations = len(t.index)
	if len(snap.Top) > 0 {
		snap.Max, snap.MaxDestination = snap.Top[0].InUse, snap.Top[0].Destination
	}
	t.attribute(&snap)
	t.peak.note(s, snap.Max)
	snap.Peak = t.peak.max(s)
	t.snap = snap
	return snap
}

// rank names idx in the metrics (top) or folds it into "other", moving its new-connection count with it.
func (t *Table) rank(snap *Snapshot, idx int32, top bool) {
	e := &t.dests[idx]
	if !top {
		snap.OtherInUse += e.inUse()
		if e.named {
			e.named, e.newNamed = false, 0
			t.release(idx)
		}
		return
	}
	if !e.named {
		e.named, e.newNamed = true, 0
	}
	snap.Top = append(snap.Top, Use{Destination: e.label, InUse: e.inUse(), Open: int(e.open), New: e.newNamed})
}

// Snapshot returns what the last Tick took.
func (t *Table) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snap
}
