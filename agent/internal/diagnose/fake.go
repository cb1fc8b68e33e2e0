package diagnose

import (
	"fmt"
	"sync"

	"github.com/wirespeed-io/wirespeed/agent/internal/rings"
	"github.com/wirespeed-io/wirespeed/agent/internal/softnet"
)

// FakeNICs is an in-memory Sources for what cannot exist on a test machine: mana, mlx5_core and ENA
// NICs and their `ethtool -S` counters. Every other source is delegated to Base (the real kernel, or nil
// for a node with no other counters moving), so a test can combine a fake VF with the real softnet table.
type FakeNICs struct {
	Base Sources

	mu    sync.Mutex
	links map[string]*FakeNIC
	order []string
}

// FakeNIC is one fake NIC: its driver, ring and counters, which a test bumps between samples.
type FakeNIC struct {
	Driver   string
	Role     string
	RxRing   uint32
	RxMax    uint32
	Counters map[string]uint64
	RxMissed uint64
}

// NewFakeNICs returns a fake delegating non-NIC sources to base.
func NewFakeNICs(base Sources) *FakeNICs { return &FakeNICs{Base: base, links: map[string]*FakeNIC{}} }

// Add registers a NIC.
func (f *FakeNICs) Add(name string, n *FakeNIC) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n.Counters == nil {
		n.Counters = map[string]uint64{}
	}
	// A real driver reports every counter of its table from the start, at zero until something happens.
	for _, c := range rings.Drivers[n.Driver].Counters {
		if _, ok := n.Counters[c.Name]; !ok {
			n.Counters[c.Name] = 0
		}
	}
	f.links[name] = n
	f.order = append(f.order, name)
}

// Bump adds n to a counter of a NIC ("rx_missed_errors" is the kernel's netdev counter).
func (f *FakeNICs) Bump(name, counter string, n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if counter == "rx_missed_errors" {
		f.links[name].RxMissed += n
		return
	}
	f.links[name].Counters[counter] += n
}

// Softnet implements Sources.
func (f *FakeNICs) Softnet() ([]softnet.CPUStat, error) {
	if f.Base == nil {
		return []softnet.CPUStat{{CPU: 0}}, nil
	}
	return f.Base.Softnet()
}

// Links implements Sources: the fake NICs, after Base's links.
func (f *FakeNICs) Links() ([]Link, error) {
	var out []Link
	if f.Base != nil {
		base, err := f.Base.Links()
		if err != nil {
			return nil, err
		}
		out = base
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range f.order {
		n := f.links[name]
		out = append(out, Link{Name: name, Driver: n.Driver, Role: n.Role, RxMissed: n.RxMissed})
	}
	return out, nil
}

// DriverStats implements Sources.
func (f *FakeNICs) DriverStats(link string) (map[string]uint64, error) {
	f.mu.Lock()
	n, ok := f.links[link]
	if ok {
		out := make(map[string]uint64, len(n.Counters))
		for k, v := range n.Counters {
			out[k] = v
		}
		f.mu.Unlock()
		return out, nil
	}
	f.mu.Unlock()
	if f.Base == nil {
		return nil, fmt.Errorf("fake: no NIC %s", link)
	}
	return f.Base.DriverStats(link)
}

// RXRing implements Sources.
func (f *FakeNICs) RXRing(link string) (uint32, uint32, error) {
	f.mu.Lock()
	n, ok := f.links[link]
	f.mu.Unlock()
	if ok {
		return n.RxRing, n.RxMax, nil
	}
	if f.Base == nil {
		return 0, 0, fmt.Errorf("fake: no NIC %s", link)
	}
	return f.Base.RXRing(link)
}

// Protocols implements Sources.
func (f *FakeNICs) Protocols() (Protocols, error) {
	if f.Base == nil {
		return Protocols{}, nil
	}
	return f.Base.Protocols()
}

// Conntrack implements Sources.
func (f *FakeNICs) Conntrack() (*Conntrack, error) {
	if f.Base == nil {
		return nil, nil
	}
	return f.Base.Conntrack()
}

// Sysctl implements Sources.
func (f *FakeNICs) Sysctl(name string) (int64, error) {
	if f.Base == nil {
		return 0, fmt.Errorf("fake: no sysctl %s", name)
	}
	return f.Base.Sysctl(name)
}
