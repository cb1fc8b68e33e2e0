package snat

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"
)

// fakeHold is one fakeAttributor entry.
type fakeHold = struct {
	w    Workload
	from time.Time
}

// versionedFake is fakeAttributor (named as a fake: the holders are given, not watched) that says when and
// where it changed, as the pod watch's History does, and counts how often it is asked.
type versionedFake struct {
	holds   fakeAttributor
	gen     uint64
	changes []netip.Addr // changes[g-1] is the address generation g changed
	asked   int
}

func (v *versionedFake) ChangedSince(gen uint64) ([]netip.Addr, bool) {
	return slices.Clone(v.changes[gen:]), true
}

func (v *versionedFake) Attribute(a netip.Addr, firstSeen time.Time) Workload {
	v.asked++
	return v.holds.Attribute(a, firstSeen)
}

func (v *versionedFake) Generation() uint64 { return v.gen }

func (v *versionedFake) set(a netip.Addr, w Workload, from time.Time) {
	v.holds[a] = fakeHold{w, from}
	v.gen++
	v.changes = append(v.changes, a)
}

// onlyVersioned hides ChangedSince: a Table then asks for every open flow after each change.
type onlyVersioned struct{ v *versionedFake }

func (o onlyVersioned) Attribute(a netip.Addr, firstSeen time.Time) Workload {
	return o.v.Attribute(a, firstSeen)
}

func (o onlyVersioned) Generation() uint64 { return o.v.Generation() }

// plain hides Generation: a Table is then asked for every open flow at every Tick.
type plain struct{ a Attributor }

func (p plain) Attribute(a netip.Addr, firstSeen time.Time) Workload {
	return p.a.Attribute(a, firstSeen)
}

func attributedTable(a Attributor, top int, tcpHold, udpHold time.Duration) *Table {
	return NewTable(Config{Classifier: NewClassifier(nil, false), TCPHold: tcpHold, UDPHold: udpHold, Top: 5,
		PeakWindow: time.Hour, MaxTracked: 1 << 16, Attributor: a, WorkloadTop: top}, t0)
}

func TestAVersionedAttributorIsAskedAgainOnlyAfterItChanged(t *testing.T) {
	pod, late := netip.MustParseAddr("10.244.1.10"), netip.MustParseAddr("10.244.1.12")
	attr := &versionedFake{holds: fakeAttributor{pod: {payments, t0}}}
	tab := attributedTable(attr, 5, 10*time.Second, 10*time.Second)
	tab.New(from("10.244.1.10", 1, 1000, "52.1.2.3:443"), at(1))
	tab.New(from("10.244.1.10", 2, 1001, "52.1.2.3:443"), at(1))
	tab.New(from("10.244.1.12", 3, 3000, "52.1.2.3:443"), at(1)) // a pod the watch does not know yet
	want := map[string]int{"checkout/payments-api (Deployment) 52.1.2.3:443/tcp": 2,
		"unknown (no pod on this node held the address) 52.1.2.3:443/tcp": 1}
	if got := byWorkload(tab.Tick(at(2))); !reflect.DeepEqual(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	asked := attr.asked
	if got := byWorkload(tab.Tick(at(3))); !reflect.DeepEqual(got, want) || attr.asked != asked {
		t.Fatalf("unchanged attributor: %v, asked %d more times", got, attr.asked-asked)
	}
	// The watch learns of the pod: it is named at the next Tick, its flow moved from unknown; only the flow
	// from its address is asked for again.
	attr.set(late, export, t0)
	want = map[string]int{"checkout/payments-api (Deployment) 52.1.2.3:443/tcp": 2,
		"batch/export (CronJob) 52.1.2.3:443/tcp": 1}
	if got := byWorkload(tab.Tick(at(4))); !reflect.DeepEqual(got, want) || attr.asked != asked+1 {
		t.Fatalf("after the watch learnt of the pod: %v (asked %d times), want %v", got, attr.asked-asked, want)
	}
	if len(tab.groupAt) != 2 || len(tab.wids) != 2 {
		t.Fatalf("the unknown pair and workload are not forgotten: %d pairs, %d workloads", len(tab.groupAt), len(tab.wids))
	}
	// A close while the attributor is unchanged keeps the open flow's answer, without asking.
	asked = attr.asked
	tab.Destroy(from("10.244.1.12", 3, 3000, "52.1.2.3:443"), at(5))
	if got := byWorkload(tab.Tick(at(6))); !reflect.DeepEqual(got, want) || attr.asked != asked {
		t.Fatalf("after the close: %v (asked %d more times), want %v", got, attr.asked-asked, want)
	}
}

// model is the per-workload accounting computed the plain way, for the randomized test: every open flow
// asked at each Tick, every held port kept as its own record with the workload it had at its close.
type model struct {
	attr Attributor
	open map[key]Flow
	seen map[key]time.Time
	held []struct {
		until int64
		w     Workload
		dest  string
	}
}

func (m *model) destroy(f Flow, now, until int64) {
	k := f.key()
	if until > now {
		m.held = append(m.held, struct {
			until int64
			w     Workload
			dest  string
		}{until, m.attr.Attribute(f.OrigSrc, m.seen[k]), destLabel(f)})
	}
	delete(m.open, k)
	delete(m.seen, k)
}

func destLabel(f Flow) string {
	d, _ := NewClassifier(nil, false).Destination(f)
	return d.String()
}

// uses is every (workload, destination) pair's ports in use at second now, busiest first.
func (m *model) uses(now int64) []WorkloadUse {
	m.held = slices.DeleteFunc(m.held, func(h struct {
		until int64
		w     Workload
		dest  string
	}) bool {
		return h.until <= now
	})
	type pair struct {
		w    Workload
		dest string
	}
	n := map[pair]int{}
	for k, f := range m.open {
		n[pair{m.attr.Attribute(f.OrigSrc, m.seen[k]), destLabel(f)}]++
	}
	for _, h := range m.held {
		n[pair{h.w, h.dest}]++
	}
	var out []WorkloadUse
	for p, c := range n {
		out = append(out, WorkloadUse{Workload: p.w, Destination: p.dest, InUse: c})
	}
	slices.SortFunc(out, func(a, b WorkloadUse) int {
		return cmp.Or(cmp.Compare(b.InUse, a.InUse), cmp.Compare(a.Destination, b.Destination),
			cmp.Compare(a.Workload.Namespace, b.Workload.Namespace), cmp.Compare(a.Workload.Name, b.Workload.Name),
			cmp.Compare(a.Workload.Kind, b.Workload.Kind))
	})
	return out
}

// heldPairs is how many distinct (second, workload, destination) holds there are: what Tracked counts.
func (m *model) heldPairs() int {
	seen := map[string]bool{}
	for _, h := range m.held {
		seen[fmt.Sprint(h.until, h.w, h.dest)] = true
	}
	return len(seen)
}

// expect is what a Snapshot with WorkloadTop top and busiest destination maxDest says of uses.
func expect(uses []WorkloadUse, top int, maxDest string) (named []WorkloadUse, other int, pressed []WorkloadUse) {
	for i, u := range uses {
		if i < top {
			named = append(named, u)
		} else {
			other += u.InUse
		}
		if u.Destination == maxDest && len(pressed) < pressedWorkloads {
			pressed = append(pressed, u)
		}
	}
	return named, other, pressed
}

// churn drives tables and the model through one second: new flows, closes (TCP and UDP, quiet for up to
// 5 s, so held ports arrive out of second order), and now and then a change of who holds an address.
type churn struct {
	rng    *rand.Rand
	addrs  []netip.Addr
	attr   *versionedFake
	tables []*Table
	m      *model
	live   []Flow
	id     uint32
}

var churnWorkloads = []Workload{payments, export, {Namespace: "data", Name: "pg", Kind: "StatefulSet"},
	{Name: "node-1", Kind: KindNode}}

func (c *churn) second(s int) {
	now := at(float64(s))
	for range c.rng.IntN(8) {
		c.id++
		proto := []uint8{ProtoTCP, ProtoUDP}[c.rng.IntN(2)]
		f := Flow{ID: c.id, Proto: proto, OrigSrc: c.addrs[c.rng.IntN(len(c.addrs))], OrigSrcPort: uint16(c.id),
			OrigDstPort: 443, Peer: netip.AddrPortFrom(netip.AddrFrom4([4]byte{52, 0, 0, byte(1 + c.rng.IntN(6))}), 443)}
		for _, tab := range c.tables {
			tab.New(f, now)
		}
		c.m.open[f.key()], c.m.seen[f.key()] = f, now
		c.live = append(c.live, f)
	}
	for range c.rng.IntN(8) {
		if len(c.live) == 0 {
			break
		}
		i := c.rng.IntN(len(c.live))
		f := c.live[i]
		c.live = slices.Delete(c.live, i, i+1)
		quiet := c.rng.IntN(6)
		f.Quiet = time.Duration(quiet) * time.Second
		for _, tab := range c.tables {
			tab.Destroy(f, now)
		}
		span := map[uint8]int{ProtoTCP: 10, ProtoUDP: 7}[f.Proto]
		c.m.destroy(f, int64(s), int64(s-quiet+span))
	}
	if c.rng.IntN(4) == 0 { // a pod comes (possibly dated before flows already seen) or is renamed
		w := churnWorkloads[c.rng.IntN(len(churnWorkloads))]
		c.attr.set(c.addrs[c.rng.IntN(len(c.addrs))], w, at(float64(s+1-c.rng.IntN(4))))
	}
}

func TestAttributionStaysExactUnderChurnWithFakeAttributor(t *testing.T) {
	const top = 4
	c := &churn{rng: rand.New(rand.NewPCG(29, 8)), attr: &versionedFake{holds: fakeAttributor{}}}
	for i := range 30 {
		a := netip.AddrFrom4([4]byte{10, 244, 2, byte(10 + i)})
		c.addrs = append(c.addrs, a)
		if i%5 != 0 {
			c.attr.set(a, churnWorkloads[i%len(churnWorkloads)], t0)
		}
	}
	c.m = &model{attr: c.attr, open: map[key]Flow{}, seen: map[key]time.Time{}}
	// The first table keeps answers and asks again for the changed addresses' flows, the second for every
	// flow after a change, the plain one for every open flow at every Tick.
	versioned, asked := attributedTable(c.attr, top, 10*time.Second, 7*time.Second), 0
	c.tables = []*Table{versioned, attributedTable(onlyVersioned{c.attr}, top, 10*time.Second, 7*time.Second),
		attributedTable(plain{c.attr}, top, 10*time.Second, 7*time.Second)}
	packed, both := 0, 0
	for s := 1; s <= 300; s++ {
		c.second(s)
		before := c.attr.asked
		sv := versioned.Tick(at(float64(s)))
		asked += c.attr.asked - before
		for _, other := range c.tables[1:] {
			if so := other.Tick(at(float64(s))); !reflect.DeepEqual(sv, so) {
				t.Fatalf("second %d: versioned %+v, the other %+v", s, sv, so)
			}
		}
		named, other, pressed := expect(c.m.uses(int64(s)), top, sv.MaxDestination)
		if !reflect.DeepEqual(sv.Workloads, named) || sv.OtherWorkloadInUse != other ||
			!reflect.DeepEqual(sv.MaxWorkloads, pressed) {
			t.Fatalf("second %d: %v other %d pressed %v, want %v other %d pressed %v", s, sv.Workloads,
				sv.OtherWorkloadInUse, sv.MaxWorkloads, named, other, pressed)
		}
		if got, want := versioned.heldBy.pairs, c.m.heldPairs(); got != want {
			t.Fatalf("second %d: %d (second, pair) entries held, want %d", s, got, want)
		}
		srcs := map[netip.Addr]bool{}
		for _, f := range c.m.open {
			srcs[f.OrigSrc] = true
		}
		if got := versioned.srcs.at.len(); got != len(srcs) || versioned.open.len() != len(c.m.open) {
			t.Fatalf("second %d: %d open flows from %d addresses kept, want %d from %d", s, versioned.open.len(),
				got, len(c.m.open), len(srcs))
		}
		both += versioned.heldBy.listedAndPacked()
		for i := range versioned.heldBy.slots {
			packed += len(versioned.heldBy.slots[i].packed)
		}
	}
	if versioned.heldBy.pairs == 0 || asked == 0 {
		t.Fatalf("the run held no ports (%d) or never asked again (%d)", versioned.heldBy.pairs, asked)
	}
	// The held ports went through the wheel's packed entries, and out-of-order holds met a packed pair.
	if packed == 0 || both == 0 {
		t.Fatalf("the run never packed held ports (%d bytes) or never held a packed pair again (%d)", packed, both)
	}
}

func TestAnOpenFlowsSourceAddressIsKeptAsItCame(t *testing.T) {
	for _, a := range []netip.Addr{netip.MustParseAddr("10.244.1.10"), netip.MustParseAddr("::ffff:10.244.1.10"),
		netip.MustParseAddr("fd00:10:244::7"), {}} {
		if got := addrOf(a).addr(); got != a {
			t.Errorf("%v came back as %v", a, got)
		}
	}
}
