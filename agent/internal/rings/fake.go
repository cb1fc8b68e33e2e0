package rings

import (
	"fmt"
	"sync"

	"github.com/safchain/ethtool"
)

// FakeEthtool is an in-memory stand-in for NICs no test machine has (mana, mlx5_core, ena, mlx4_en). Each
// device stores a set ring through Store, which models the driver's own adjustment (rounding, clamping).
type FakeEthtool struct {
	mu      sync.Mutex
	devices map[string]*FakeDevice
}

// FakeDevice is one fake NIC.
type FakeDevice struct {
	Driver string
	Ring   ethtool.Ring
	// Store returns what the driver keeps for a requested size; nil keeps it as is.
	Store func(dir string, requested uint32) uint32
	Sets  int // SetRing calls that reached the device
}

// NewFakeEthtool returns an empty fake.
func NewFakeEthtool() *FakeEthtool { return &FakeEthtool{devices: map[string]*FakeDevice{}} }

// Add registers a device.
func (f *FakeEthtool) Add(name string, d *FakeDevice) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.devices[name] = d
}

// Device returns a registered device.
func (f *FakeEthtool) Device(name string) *FakeDevice {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.devices[name]
}

func (f *FakeEthtool) get(name string) (*FakeDevice, error) {
	d, ok := f.devices[name]
	if !ok {
		return nil, fmt.Errorf("fake ethtool: no device %s", name)
	}
	return d, nil
}

// DriverName implements links.DriverNamer.
func (f *FakeEthtool) DriverName(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, err := f.get(name)
	if err != nil {
		return "", err
	}
	return d.Driver, nil
}

// GetRing implements Ethtool.
func (f *FakeEthtool) GetRing(name string) (ethtool.Ring, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, err := f.get(name)
	if err != nil {
		return ethtool.Ring{}, err
	}
	return d.Ring, nil
}

// SetRing implements Ethtool, refusing sizes above the device max as drivers do (EINVAL).
func (f *FakeEthtool) SetRing(name string, r ethtool.Ring) (ethtool.Ring, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, err := f.get(name)
	if err != nil {
		return ethtool.Ring{}, err
	}
	if r.RxPending > d.Ring.RxMaxPending || r.TxPending > d.Ring.TxMaxPending {
		return ethtool.Ring{}, fmt.Errorf("fake ethtool: %s: ring above max: invalid argument", name)
	}
	d.Sets++
	rx, tx := r.RxPending, r.TxPending
	if d.Store != nil {
		rx, tx = d.Store("rx", rx), d.Store("tx", tx)
	}
	d.Ring.RxPending, d.Ring.TxPending = rx, tx
	return r, nil
}
