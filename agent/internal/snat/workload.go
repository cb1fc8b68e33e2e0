package snat

import (
	"cmp"
	"net/netip"
	"time"
)

// Workload is who spends a flow's SNAT port: the workload that owns the pod whose address the flow came
// from (a Deployment, StatefulSet, DaemonSet, CronJob, a Job or ReplicaSet with no owner, a bare Pod), the
// node itself (KindNode: its own processes and every host-network pod, which share the node's address), or
// KindUnknown when no pod on this node is known to have held the address when the flow started.
type Workload struct {
	Namespace string
	Name      string
	Kind      string
}

// Kinds that are not a Kubernetes object's kind.
const (
	KindNode    = "node"
	KindUnknown = "unknown"
)

// UnknownWorkload is what an address no known pod held is attributed to.
var UnknownWorkload = Workload{Name: KindUnknown, Kind: KindUnknown}

// String is how messages name a workload: "checkout/payments-api (Deployment)", "aks-pool-1 (node)"; an
// unattributed address says why it has no name, as "unknown (unknown)" would not.
func (w Workload) String() string {
	if w.Kind == KindUnknown {
		return "unknown (no pod on this node held the address)"
	}
	if w.Namespace == "" {
		return w.Name + " (" + w.Kind + ")"
	}
	return w.Namespace + "/" + w.Name + " (" + w.Kind + ")"
}

// Attributor names the workload that held address a when a flow from it was first seen (at firstSeen). It
// is called with the Table's lock held, so it must not call back into the Table, and should be quick.
type Attributor interface {
	Attribute(a netip.Addr, firstSeen time.Time) Workload
}

// Versioned is an Attributor that says when its answers may have changed: Generation changes whenever any
// Attribute answer may differ from before, by the time an Attribute call can give the new answer. The
// Table then keeps each open flow's workload and asks again only after a change; an Attributor without it
// is asked for every open flow at every Tick (so a pod it learns of late is still named at the next Tick).
type Versioned interface {
	Generation() uint64
}

// Changes is a Versioned Attributor that can also say whose answers changed: the addresses whose answers
// may differ from those at generation gen (false when it no longer knows, and every open flow is asked
// again). A Tick after a pod came or went then asks only for the flows from its addresses.
type Changes interface {
	ChangedSince(gen uint64) ([]netip.Addr, bool)
}

// WorkloadUse is the ports one workload holds to one destination.
type WorkloadUse struct {
	Workload    Workload
	Destination string
	InUse       int
}

// pressedWorkloads is how many workloads the Snapshot names for the busiest destination (the
// SNATPortPressure message): a condition message is read by a person, and a few spenders say who to call.
const pressedWorkloads = 3

// groupState is one (destination, workload) pair with a port in use: its open flows, and its closed flows
// whose ports are still held (in heldBy). The workload is a small id (workloadID), so the counts are found
// by two integers, not by hashing three strings.
type groupState struct {
	dest, wid  int32
	open, held int32
	hw         heldPos // where heldBy keeps this pair's latest held ports
}

func groupKey(dest, wid int32) uint64 { return uint64(uint32(dest))<<32 | uint64(uint32(wid)) }

// workloadID interns w: a workload has one id while a pair of it is counted (wrefs), then it is forgotten.
func (t *Table) workloadID(w Workload) int32 {
	if id, ok := t.wids[w]; ok {
		return id
	}
	var id int32
	if n := len(t.wfree); n > 0 {
		id, t.wfree = t.wfree[n-1], t.wfree[:n-1]
		t.wnames[id], t.wrefs[id] = w, 0
	} else {
		id = int32(len(t.wnames))
		t.wnames, t.wrefs = append(t.wnames, w), append(t.wrefs, 0)
	}
	t.wids[w] = id
	return id
}

func (t *Table) unrefWorkload(id int32) {
	if t.wrefs[id]--; t.wrefs[id] <= 0 {
		delete(t.wids, t.wnames[id])
		t.wnames[id], t.wrefs[id] = Workload{}, 0
		t.wfree = append(t.wfree, id)
	}
}

// groupIndex finds or makes the pair's state. bounded: for a closed flow's held port, -1 when the table is
// full (the destination's own count still holds the port, so only the attribution of that one port is
// lost); an open flow always has one (there are at most as many pairs as open flows and held pairs).
func (t *Table) groupIndex(dest, wid int32, bounded bool) int32 {
	k := groupKey(dest, wid)
	if idx, ok := t.groupAt[k]; ok {
		return idx
	}
	if bounded && len(t.groupAt) >= t.cfg.MaxTracked {
		if t.wrefs[wid] == 0 {
			t.wrefs[wid] = 1
			t.unrefWorkload(wid)
		}
		return -1
	}
	var idx int32
	if n := len(t.groupFree); n > 0 {
		idx, t.groupFree = t.groupFree[n-1], t.groupFree[:n-1]
		t.groups[idx] = groupState{dest: dest, wid: wid}
	} else {
		idx = int32(len(t.groups))
		t.groups = append(t.groups, groupState{dest: dest, wid: wid})
	}
	t.groupAt[k] = idx
	t.wrefs[wid]++
	return idx
}

// settle forgets a pair with no port in use left.
func (t *Table) settle(g int32) {
	if g < 0 {
		return
	}
	st := &t.groups[g]
	if st.open > 0 || st.held > 0 {
		return
	}
	delete(t.groupAt, groupKey(st.dest, st.wid))
	t.unrefWorkload(st.wid)
	*st = groupState{}
	t.groupFree = append(t.groupFree, g)
}

// groupFor asks the Attributor who a flow from src first seen at first (since the epoch) belongs to.
func (t *Table) groupFor(dest int32, src netip.Addr, first time.Duration, bounded bool) int32 {
	w := t.cfg.Attributor.Attribute(src, t.epoch.Add(first))
	return t.groupIndex(dest, t.workloadID(w), bounded)
}

// openAttributed counts a new open flow under its workload: -1 without an Attributor.
func (t *Table) openAttributed(dest int32, src netip.Addr, first time.Duration) int32 {
	if t.cfg.Attributor == nil {
		return -1
	}
	g := t.groupFor(dest, src, first, false)
	t.groups[g].open++
	return g
}

// closeAttributed uncounts a closing flow's open port; the caller settles its pair after holding the port.
func (t *Table) closeAttributed(of openFlow) {
	if of.grp >= 0 {
		t.groups[of.grp].open--
	}
}

// current: the open flows' workloads are the Attributor's answers now (it is Versioned and has not changed
// since they were all last asked for).
func (t *Table) current() bool {
	v, ok := t.cfg.Attributor.(Versioned)
	return ok && t.attrKnown && v.Generation() == t.attrGen
}

// holdAttributed keeps a closed flow's port under its workload as well, until its hold ends: the workload
// is decided now, at the close, from the address and when the flow was first seen (the open flow's own
// answer when the Attributor has not changed since it was given).
func (t *Table) holdAttributed(of openFlow, until, now int64) {
	if t.cfg.Attributor == nil || until <= now {
		return
	}
	g := of.grp
	if g < 0 || !t.current() {
		g = t.groupFor(of.dest, t.srcs.addr(of.src), of.first, true)
	}
	if g < 0 {
		return
	}
	t.heldBy.add(until, now, g, &t.groups[g].hw)
	t.groups[g].held++
}

func (t *Table) expireGroups(s int64) {
	t.heldBy.expire(s, func(g, n int32) {
		t.groups[g].held -= n
		t.settle(g)
	})
}

// reattribute asks the Attributor again for the open flows whose answer may have changed, every one
// unless it says which addresses changed (the generation is read first: a change made while asking makes
// the next Tick ask again), moving a flow whose workload changed to its new pair.
func (t *Table) reattribute() {
	v, versioned := t.cfg.Attributor.(Versioned)
	var gen uint64
	if versioned {
		gen = v.Generation()
	}
	only := t.changedSince()
	if only != nil && len(only) == 0 {
		t.attrGen = gen
		return
	}
	for i := range t.flows {
		of := &t.flows[i]
		if of.dest < 0 { // a free place
			continue
		}
		if _, hit := only[t.srcs.addr(of.src).Unmap()]; only != nil && !hit {
			continue
		}
		w := t.cfg.Attributor.Attribute(t.srcs.addr(of.src), t.epoch.Add(of.first))
		if of.grp >= 0 && t.wnames[t.groups[of.grp].wid] == w {
			continue
		}
		g := t.groupIndex(of.dest, t.workloadID(w), false)
		t.groups[g].open++
		old := of.grp
		of.grp = g
		if old >= 0 {
			t.groups[old].open--
			t.settle(old)
		}
	}
	t.attrGen, t.attrKnown = gen, versioned
}

// changedSince is the set of (unmapped) addresses the Attributor changed since the open flows were last
// asked for, nil when every flow must be asked again.
func (t *Table) changedSince() map[netip.Addr]struct{} {
	c, ok := t.cfg.Attributor.(Changes)
	if !ok || !t.attrKnown {
		return nil
	}
	addrs, ok := c.ChangedSince(t.attrGen)
	if !ok {
		return nil
	}
	only := make(map[netip.Addr]struct{}, len(addrs))
	for _, a := range addrs {
		only[a.Unmap()] = struct{}{}
	}
	return only
}

// attribute fills the Snapshot's per-workload part: the open flows' workloads (asked again when the
// Attributor changed, so a pod the pod watch learns of after its first flows is found at the next Tick),
// every held port as it was at its close.
func (t *Table) attribute(snap *Snapshot) {
	if t.cfg.Attributor == nil {
		return
	}
	snap.Attributed = true
	if !t.current() {
		t.reattribute()
	}
	t.topPairs.reset(t.cfg.WorkloadTop)
	t.pressed.reset(pressedWorkloads)
	total := 0
	for g := range t.groups {
		st := &t.groups[g]
		n := int(st.open) + int(st.held)
		if n <= 0 {
			continue
		}
		total += n
		t.topPairs.offer(int32(g), t.better)
		if t.dests[st.dest].label == snap.MaxDestination {
			t.pressed.offer(int32(g), t.better)
		}
	}
	for _, g := range t.topPairs.sorted(t.better) {
		u := t.use(g)
		snap.Workloads = append(snap.Workloads, u)
		total -= u.InUse
	}
	snap.OtherWorkloadInUse = total
	for _, g := range t.pressed.sorted(t.better) {
		snap.MaxWorkloads = append(snap.MaxWorkloads, t.use(g))
	}
}

func (t *Table) use(g int32) WorkloadUse {
	st := &t.groups[g]
	return WorkloadUse{Workload: t.wnames[st.wid], Destination: t.dests[st.dest].label,
		InUse: int(st.open) + int(st.held)}
}

// better ranks pairs: more ports first, then by destination, namespace, name and kind.
func (t *Table) better(a, b int32) bool {
	sa, sb := &t.groups[a], &t.groups[b]
	if na, nb := sa.open+sa.held, sb.open+sb.held; na != nb {
		return na > nb
	}
	wa, wb := &t.wnames[sa.wid], &t.wnames[sb.wid]
	return cmp.Or(cmp.Compare(t.dests[sa.dest].label, t.dests[sb.dest].label),
		cmp.Compare(wa.Namespace, wb.Namespace), cmp.Compare(wa.Name, wb.Name), cmp.Compare(wa.Kind, wb.Kind)) < 0
}
