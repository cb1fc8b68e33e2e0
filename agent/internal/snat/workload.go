package snat

import (
	"cmp"
	"net/netip"
	"slices"
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

// WorkloadUse is the ports one workload holds to one destination.
type WorkloadUse struct {
	Workload    Workload
	Destination string
	InUse       int
}

// pressedWorkloads is how many workloads the Snapshot names for the busiest destination (the
// SNATPortPressure message): a condition message is read by a person, and a few spenders say who to call.
const pressedWorkloads = 3

// group is one (destination, workload) pair whose closed flows still hold ports.
type group struct {
	dest int32
	w    Workload
}

type groupState struct {
	g    group
	held int32
}

// groupIndex finds or makes g's held state; -1 when the table is full (the destination's own count still
// holds the port, so only the attribution of that one port is lost).
func (t *Table) groupIndex(g group) int32 {
	if idx, ok := t.groupAt[g]; ok {
		return idx
	}
	if len(t.groupAt) >= t.cfg.MaxTracked {
		return -1
	}
	var idx int32
	if n := len(t.groupFree); n > 0 {
		idx, t.groupFree = t.groupFree[n-1], t.groupFree[:n-1]
		t.groups[idx] = groupState{g: g}
	} else {
		idx = int32(len(t.groups))
		t.groups = append(t.groups, groupState{g: g})
	}
	t.groupAt[g] = idx
	return idx
}

// holdAttributed keeps a closed flow's port under its workload as well, until its hold ends: the workload
// is decided now, at the close, from the address and when the flow was first seen.
func (t *Table) holdAttributed(idx int32, src netip.Addr, first time.Duration, until, now int64) {
	if t.cfg.Attributor == nil || until <= now {
		return
	}
	w := t.cfg.Attributor.Attribute(src, t.epoch.Add(first))
	gidx := t.groupIndex(group{dest: idx, w: w})
	if gidx < 0 {
		return
	}
	t.heldBy.add(until, gidx)
	t.groups[gidx].held++
}

func (t *Table) expireGroups(s int64) {
	t.heldBy.expire(s, func(gidx, n int32) {
		st := &t.groups[gidx]
		if st.held -= n; st.held <= 0 {
			delete(t.groupAt, st.g)
			*st = groupState{}
			t.groupFree = append(t.groupFree, gidx)
		}
	})
}

// attribute fills the Snapshot's per-workload part: every open flow is attributed now (so a pod the pod
// watch learns of after its first flows is still found), every held port as it was at its close.
func (t *Table) attribute(snap *Snapshot) {
	if t.cfg.Attributor == nil {
		return
	}
	snap.Attributed = true
	if t.byGroup == nil {
		t.byGroup = map[group]int{}
	}
	clear(t.byGroup)
	for _, of := range t.open {
		w := t.cfg.Attributor.Attribute(of.src, t.epoch.Add(of.first))
		t.byGroup[group{dest: of.dest, w: w}]++
	}
	for _, st := range t.groups {
		if st.held > 0 {
			t.byGroup[st.g] += int(st.held)
		}
	}
	uses := make([]WorkloadUse, 0, len(t.byGroup))
	for g, n := range t.byGroup {
		uses = append(uses, WorkloadUse{Workload: g.w, Destination: t.dests[g.dest].label, InUse: n})
	}
	slices.SortFunc(uses, func(a, b WorkloadUse) int {
		return cmp.Or(cmp.Compare(b.InUse, a.InUse), cmp.Compare(a.Destination, b.Destination),
			cmp.Compare(a.Workload.Namespace, b.Workload.Namespace), cmp.Compare(a.Workload.Name, b.Workload.Name),
			cmp.Compare(a.Workload.Kind, b.Workload.Kind))
	})
	for i, u := range uses {
		if i < t.cfg.WorkloadTop {
			snap.Workloads = append(snap.Workloads, u)
		} else {
			snap.OtherWorkloadInUse += u.InUse
		}
		if u.Destination == snap.MaxDestination && len(snap.MaxWorkloads) < pressedWorkloads {
			snap.MaxWorkloads = append(snap.MaxWorkloads, u)
		}
	}
}
