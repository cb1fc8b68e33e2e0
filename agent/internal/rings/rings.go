package rings

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/safchain/ethtool"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// Ethtool is the ring part of the ethtool ioctl; *ethtool.Ethtool implements it, FakeEthtool stands in for
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

// Applier applies ring sizes. It remembers, per driver, requested sizes that the device stored as a
// different value, so a driver with an undocumented rounding rule is written once, not on every reconcile.
type Applier struct {
	ET  Ethtool
	Log *slog.Logger

	mu        sync.Mutex
	effective map[effectiveKey]int
}

type effectiveKey struct {
	driver, dir      string
	requested, limit int
}

// Apply brings link's rings to the profile's size for its driver. rx/tx describe the outcome (nil when the
// profile leaves that direction alone); changes lists what was written.
func (a *Applier) Apply(link, driver string, want profile.RingSize, dryRun bool) (rx, tx *status.Ring, changes []Change, err error) {
	if want.RX == nil && want.TX == nil {
		return nil, nil, nil, nil
	}
	d, known := Drivers[driver]
	if known && d.RX == nil && d.TX == nil {
		return nil, nil, nil, fmt.Errorf("driver %s has no NIC rings to set; remove rings.%s from the profile", driver, driver)
	}
	cur, err := a.ET.GetRing(link)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read rings of %s: %w", link, err)
	}
	var rxDesired, txDesired int
	// A device reporting max 0 for a direction has no ring there to size.
	if want.RX != nil && cur.RxMaxPending > 0 {
		rxDesired = a.desired(driver, "rx", *want.RX, int(cur.RxMaxPending), d.RX, d.Rounding)
		rx = &status.Ring{Desired: rxDesired, Current: int(cur.RxPending), Max: int(cur.RxMaxPending)}
	}
	if want.TX != nil && cur.TxMaxPending > 0 {
		txDesired = a.desired(driver, "tx", *want.TX, int(cur.TxMaxPending), d.TX, d.Rounding)
		tx = &status.Ring{Desired: txDesired, Current: int(cur.TxPending), Max: int(cur.TxMaxPending)}
	}
	next := cur
	if rx != nil && rx.Current != rx.Desired {
		changes = append(changes, Change{"rx-ring", rx.Current, rx.Desired})
		next.RxPending = uint32(rx.Desired)
	}
	if tx != nil && tx.Current != tx.Desired {
		changes = append(changes, Change{"tx-ring", tx.Current, tx.Desired})
		next.TxPending = uint32(tx.Desired)
	}
	if len(changes) == 0 || dryRun {
		return rx, tx, changes, nil
	}
	if _, err := a.ET.SetRing(link, next); err != nil {
		return rx, tx, nil, fmt.Errorf("set rings of %s (%s) to rx %d tx %d: %w", link, driver, next.RxPending, next.TxPending, err)
	}
	after, err := a.ET.GetRing(link)
	if err != nil {
		return rx, tx, changes, fmt.Errorf("read back rings of %s: %w", link, err)
	}
	if rx != nil {
		rx.Current = int(after.RxPending)
		a.remember(driver, "rx", *want.RX, int(cur.RxMaxPending), rx)
	}
	if tx != nil {
		tx.Current = int(after.TxPending)
		a.remember(driver, "tx", *want.TX, int(cur.TxMaxPending), tx)
	}
	return rx, tx, changes, nil
}

func (a *Applier) desired(driver, dir string, want, deviceMax int, lim *Limits, rule Rounding) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if v, ok := a.effective[effectiveKey{driver, dir, want, deviceMax}]; ok {
		return v
	}
	return Size(want, deviceMax, lim, rule)
}

// remember records that the device stored a different value than requested: that value is what the
// driver does with this request, so it becomes the desired value from now on.
func (a *Applier) remember(driver, dir string, want, deviceMax int, r *status.Ring) {
	if r.Current == r.Desired {
		return
	}
	a.mu.Lock()
	if a.effective == nil {
		a.effective = map[effectiveKey]int{}
	}
	a.effective[effectiveKey{driver, dir, want, deviceMax}] = r.Current
	a.mu.Unlock()
	if a.Log != nil {
		a.Log.Warn("device stored a different ring size than requested; accepting it as effective",
			"driver", driver, "direction", dir, "requested", r.Desired, "effective", r.Current)
	}
	r.Desired = r.Current
}
