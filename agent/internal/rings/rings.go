package rings

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/safchain/ethtool"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// Ethtool is the ring part of the ethtool ioctl; *ethioctl.Reader implements it (with safchain/ethtool's Ring type), FakeEthtool stands in for
// NICs that cannot exist on a test machine.
type Ethtool interface {
	GetRing(intf string) (ethtool.Ring, error)
	SetRing(intf string, ring ethtool.Ring) (ethtool.Ring, error)
}

// Change is one value the Applier wrote (or, in dry-run, would write).
type Change struct {
	Setting  string // "rx-ring" | "tx-ring"
	From, To int
}

// Link is the link instance rings are applied to: a name and an ifindex. A VF removed and re-added comes
// back with a new ifindex (often under the same name), and is a new device as far as the driver's memory
// of ring sizes goes.
type Link struct {
	Name   string
	Index  int
	Driver string
}

// Applier applies ring sizes. It remembers, per link instance, requested sizes the device kept as a
// different value, so a device that will not store a size is written once, not on every reconcile, and
// is reported as refusing it (status.Ring.Refused) rather than silently counted as tuned. The memory is
// per link, never per driver: one NIC that stores less (a firmware limit, a smaller queue) must not lower
// the target of every other NIC with the same driver.
type Applier struct {
	ET  Ethtool
	Log *slog.Logger

	mu   sync.Mutex
	kept map[instance]map[request]int
}

type instance struct {
	name  string
	index int
}

// request is one direction's write: the size asked for and the device max it was computed against (a
// different max means a different request, worth trying again).
type request struct {
	dir              string
	requested, limit int
}

// Apply brings link's rings to the profile's size for its driver. rx/tx describe the outcome (nil when the
// profile leaves that direction alone); changes lists what was written.
func (a *Applier) Apply(link Link, want profile.RingSize, dryRun bool) (rx, tx *status.Ring, changes []Change, err error) {
	if want.RX == nil && want.TX == nil {
		return nil, nil, nil, nil
	}
	driver := link.Driver
	d, known := Drivers[driver]
	if known && d.RX == nil && d.TX == nil {
		return nil, nil, nil, fmt.Errorf("driver %s has no NIC rings to set; remove rings.%s from the profile", driver, driver)
	}
	cur, err := a.ET.GetRing(link.Name)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read rings of %s: %w", link.Name, err)
	}
	id := instance{link.Name, link.Index}
	var rxReq, txReq request
	// A device reporting max 0 for a direction has no ring there to size.
	if want.RX != nil && cur.RxMaxPending > 0 {
		rxReq = request{"rx", Size(*want.RX, int(cur.RxMaxPending), d.RX, d.Rounding), int(cur.RxMaxPending)}
		rx = a.observe(id, rxReq, int(cur.RxPending))
	}
	if want.TX != nil && cur.TxMaxPending > 0 {
		txReq = request{"tx", Size(*want.TX, int(cur.TxMaxPending), d.TX, d.Rounding), int(cur.TxMaxPending)}
		tx = a.observe(id, txReq, int(cur.TxPending))
	}
	next := cur
	if needsWrite(rx) {
		changes = append(changes, Change{"rx-ring", rx.Current, rx.Desired})
		next.RxPending = uint32(rx.Desired)
	}
	if needsWrite(tx) {
		changes = append(changes, Change{"tx-ring", tx.Current, tx.Desired})
		next.TxPending = uint32(tx.Desired)
	}
	if len(changes) == 0 || dryRun {
		return rx, tx, changes, nil
	}
	if _, err := a.ET.SetRing(link.Name, next); err != nil {
		return rx, tx, nil, fmt.Errorf("set rings of %s (%s) to rx %d tx %d: %w", link.Name, driver, next.RxPending, next.TxPending, err)
	}
	after, err := a.ET.GetRing(link.Name)
	if err != nil {
		return rx, tx, changes, fmt.Errorf("read back rings of %s: %w", link.Name, err)
	}
	// Only the directions written learn anything; a refused one left as it was keeps its memory.
	if needsWrite(rx) {
		rx.Current = int(after.RxPending)
		a.remember(link, rxReq, rx)
	}
	if needsWrite(tx) {
		tx.Current = int(after.TxPending)
		a.remember(link, txReq, tx)
	}
	return rx, tx, changes, nil
}

// observe describes one direction before any write: Refused when this link already kept a different
// size for the same request and still holds it, so writing again would only interrupt traffic.
func (a *Applier) observe(id instance, req request, current int) *status.Ring {
	r := &status.Ring{Desired: req.requested, Current: current, Max: req.limit}
	a.mu.Lock()
	defer a.mu.Unlock()
	if kept, ok := a.kept[id][req]; ok && kept == current && current != req.requested {
		r.Refused = true
	}
	return r
}

func needsWrite(r *status.Ring) bool { return r != nil && !r.Refused && r.Current != r.Desired }

// remember records what the device kept after a write. A different value than requested is what this
// device does with this request: it is reported as refused, and not written again while the link instance
// holds it (a driver with an undocumented rounding rule would otherwise be rewritten in a loop).
func (a *Applier) remember(link Link, req request, r *status.Ring) {
	id := instance{link.Name, link.Index}
	a.mu.Lock()
	if r.Current == r.Desired {
		delete(a.kept[id], req)
		if len(a.kept[id]) == 0 {
			delete(a.kept, id)
		}
		a.mu.Unlock()
		return
	}
	if a.kept == nil {
		a.kept = map[instance]map[request]int{}
	}
	if a.kept[id] == nil {
		a.kept[id] = map[request]int{}
	}
	a.kept[id][req] = r.Current
	a.mu.Unlock()
	r.Refused = true
	if a.Log != nil {
		a.Log.Warn("device kept a different ring size than requested; reported as drift, not rewritten",
			"link", link.Name, "ifindex", link.Index, "driver", link.Driver, "direction", req.dir,
			"requested", r.Desired, "kept", r.Current)
	}
}

// Forget drops what the Applier remembers about one link instance; call it when the link goes away (a
// re-added VF is a new instance and starts from the full target).
func (a *Applier) Forget(name string, index int) {
	a.mu.Lock()
	delete(a.kept, instance{name, index})
	a.mu.Unlock()
}

// Retain forgets every link instance for which keep returns false (those no longer present after a
// full listing).
func (a *Applier) Retain(keep func(name string, index int) bool) {
	a.mu.Lock()
	for id := range a.kept {
		if !keep(id.name, id.index) {
			delete(a.kept, id)
		}
	}
	a.mu.Unlock()
}

// Remembered reports how many link instances the Applier holds a kept size for (tests use it to prove
// the memory does not outlive the links).
func (a *Applier) Remembered() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.kept)
}
