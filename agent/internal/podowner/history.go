// Package podowner tells the SNAT accounting which workload a flow's source address belongs to: a watch of
// the Pods on this node (watch.go) keeps, per pod address, a short history of which pod held it and when
// (History), and each pod is named by its workload through its owner references (Owners).
package podowner

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// Bounds on the History's memory. A record is about 200 bytes (a UID, a workload's three strings, two
// times), so the worst case is MaxAddresses × HoldersPerAddress × 200 B ≈ 6.5 MB; a node's real number of
// addresses is its pod count (at most a few hundred: AKS allows 250 pods a node, EKS's largest instances 737
// with prefix delegation) plus the addresses of pods that ended, so the bound is reached only by churn.
const (
	// HoldersPerAddress is how many pods' holds of one address are kept: the holder now and the ones before
	// it, whose flows may still be in conntrack (an entry outlives its pod's network namespace by its
	// timeout). A flow older than the oldest kept hold is attributed to KindUnknown.
	HoldersPerAddress = 4
	// MaxAddresses is how many addresses are remembered; past it the address whose last holder ended
	// longest ago is forgotten first (an address some pod holds now is never forgotten).
	MaxAddresses = 8192
)

// hold is one pod's hold of an address: from when it started (the pod's status.startTime, set when the
// kubelet accepted it, before it had an address) to when the watch saw it end (zero: it still holds it).
type hold struct {
	uid      types.UID
	workload snat.Workload
	from, to time.Time
}

// History maps an address and a time to the workload that held the address then. It is safe for concurrent
// use: the pod watch writes it, the SNAT table's Tick reads it.
type History struct {
	mu     sync.Mutex
	node   snat.Workload
	nodeIP map[netip.Addr]struct{}
	byIP   map[netip.Addr][]hold // oldest first
	// gen counts the changes that may change an Attribute answer (snat.Versioned): the SNAT table asks
	// again for its open flows only after one, not every second. Bumped under mu, after the change.
	gen atomic.Uint64
	// log is which address each of the last changeLog generations changed (snat.Changes), so a Tick after
	// a pod came or went asks again only for the flows from its addresses.
	log [changeLog]change
}

// changeLog is how many changes the History remembers by address: at 1 Hz Ticks, a node would have to
// replace over 500 pods a second (two changes each, the old pod's end and the new one's start) for a Tick
// to find it forgot some and ask again for every flow. 1,024 entries of 32 bytes are 32 KiB.
const changeLog = 1024

type change struct {
	gen uint64
	a   netip.Addr
}

// changed records a change of a's answers as a new generation (h.mu held).
func (h *History) changed(a netip.Addr) {
	g := h.gen.Add(1)
	h.log[g%changeLog] = change{gen: g, a: a}
}

// Generation changes whenever an Attribute answer may have changed (a pod's hold started, ended or was
// renamed, an address became the node's or was forgotten).
func (h *History) Generation() uint64 { return h.gen.Load() }

// ChangedSince lists the addresses whose answers may have changed after generation gen (at least every
// one, some perhaps twice); false when the changes since are more than it remembers.
func (h *History) ChangedSince(gen uint64) ([]netip.Addr, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.gen.Load()
	if now < gen || now-gen > changeLog {
		return nil, false
	}
	out := make([]netip.Addr, 0, now-gen)
	for g := gen + 1; g <= now; g++ {
		c := h.log[g%changeLog]
		if c.gen != g {
			return nil, false
		}
		out = append(out, c.a)
	}
	return out, true
}

// NewHistory returns an empty history for the node named node.
func NewHistory(node string) *History {
	return &History{node: snat.Workload{Name: node, Kind: snat.KindNode}, nodeIP: map[netip.Addr]struct{}{},
		byIP: map[netip.Addr][]hold{}}
}

// SetNodeAddress marks a as the node's own: its processes' and every host-network pod's flows come from it,
// and the node's address is never a pod's, so they are all the node's (kind "node").
func (h *History) SetNodeAddress(a netip.Addr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.nodeIP[a.Unmap()]; !ok {
		h.nodeIP[a.Unmap()] = struct{}{}
		h.changed(a.Unmap())
	}
}

// Hold records that pod uid, of workload w, holds a since from. The same pod again only updates its
// workload (its owner may have been resolved since); a new pod ends the previous holder's hold at from,
// if the watch had not seen it end yet.
func (h *History) Hold(a netip.Addr, uid types.UID, w snat.Workload, from time.Time) {
	a = a.Unmap()
	h.mu.Lock()
	defer h.mu.Unlock()
	hs := h.byIP[a]
	for i := range hs {
		if hs[i].uid == uid {
			if hs[i].workload != w {
				hs[i].workload = w
				h.changed(a)
			}
			return
		}
	}
	if n := len(hs); n > 0 && hs[n-1].to.IsZero() {
		hs[n-1].to = from
	}
	if _, known := h.byIP[a]; !known && len(h.byIP) >= MaxAddresses {
		h.forgetOne()
	}
	hs = append(hs, hold{uid: uid, workload: w, from: from})
	if len(hs) > HoldersPerAddress {
		hs = append(hs[:0], hs[len(hs)-HoldersPerAddress:]...)
	}
	h.byIP[a] = hs
	h.changed(a)
}

// Release records that pod uid stopped holding a at (the watch saw it deleted, or it ended: a pod that
// Succeeded or Failed has no sandbox, so its address is free).
func (h *History) Release(a netip.Addr, uid types.UID, at time.Time) {
	a = a.Unmap()
	h.mu.Lock()
	defer h.mu.Unlock()
	hs := h.byIP[a]
	for i := range hs {
		if hs[i].uid == uid && hs[i].to.IsZero() {
			hs[i].to = at
			h.changed(a)
		}
	}
}

// forgetOne drops the address whose last holder ended longest ago (none while every address is held).
func (h *History) forgetOne() {
	var oldest netip.Addr
	var at time.Time
	for a, hs := range h.byIP {
		last := hs[len(hs)-1].to
		if !last.IsZero() && (!oldest.IsValid() || last.Before(at)) {
			oldest, at = a, last
		}
	}
	if oldest.IsValid() {
		delete(h.byIP, oldest)
		h.changed(oldest)
	}
}

// Attribute names the workload that held a when a flow from it was first seen. The holder is the pod whose
// hold started last at or before firstSeen: a flow cannot start before its pod did, and a pod that started
// later got the address after the flow began. If that pod's hold had ended by firstSeen, the address was
// free then, so the flow is a pod's the watch has not seen yet: KindUnknown (the Table asks again at its
// first Tick after Generation changed, while the flow is open, so it is named once the watch catches up).
// First-seen is the flow's NEW event, or the dump that found it when it began before the agent started:
// such a flow is attributed to the holder at that dump, since conntrack records no start time unless
// net.netfilter.nf_conntrack_timestamp is on.
func (h *History) Attribute(a netip.Addr, firstSeen time.Time) snat.Workload {
	a = a.Unmap()
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.nodeIP[a]; ok {
		return h.node
	}
	hs := h.byIP[a]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].from.After(firstSeen) {
			continue
		}
		if !hs[i].to.IsZero() && !hs[i].to.After(firstSeen) {
			return snat.UnknownWorkload
		}
		return hs[i].workload
	}
	return snat.UnknownWorkload
}

// Addresses is how many addresses are remembered (for the bound's tests and the debug log).
func (h *History) Addresses() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.byIP)
}
