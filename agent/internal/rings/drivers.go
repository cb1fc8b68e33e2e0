// Package rings sizes and applies NIC RX/TX descriptor rings through the ethtool ioctl (never by running
// ethtool): the profile's value per driver, clamped to what the device reports as its max, rounded the way
// the driver would round it, and written only when it differs (a resize interrupts traffic briefly).
package rings

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/bits"
)

// Rounding is how a driver adjusts a requested ring size before using it.
type Rounding string

const (
	UpPowerOfTwo   Rounding = "up_power_of_two"   // mlx5_core, mlx4_en, mana, virtio_net
	DownPowerOfTwo Rounding = "down_power_of_two" // ena
	MultipleOf8    Rounding = "multiple_of_8"     // e1000e, igb, igbvf: ALIGN(n, 8)
	NoRounding     Rounding = "none"
)

// Limits are one direction's descriptor counts. The driver's default is left out: the agent never needs
// it (a device reports its current size), so the catalog may describe it however it likes.
type Limits struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// Driver holds the facts the agent needs about one NIC driver.
type Driver struct {
	RX       *Limits   `json:"rx"` // nil: the driver has no NIC rings to set (hv_netvsc)
	TX       *Limits   `json:"tx"`
	Rounding Rounding  `json:"rounding"`
	MTUMax   int       `json:"mtu_max"`
	Counters []Counter `json:"counters"`
}

// Cause is what a rising driver counter reveals, and so which kind of fix applies.
type Cause string

const (
	CauseRXRingOverflow    Cause = "rx_ring_overflow"   // the RX ring was full: a larger ring in the profile
	CauseInstanceAllowance Cause = "instance_allowance" // the cloud's per-instance allowance: a larger size
	CauseNotANodeSetting   Cause = "not_a_node_setting" // a limit no node setting changes
)

// Counter is one drop or allowance counter, named as `ethtool -S` (ETHTOOL_GSTATS) names it.
type Counter struct {
	Name    string `json:"name"`
	Cause   Cause  `json:"cause"`
	Meaning string `json:"meaning"`
}

// nicDriversJSON is components/wirespeed/data/nic_drivers.json, the one home of these numbers (each
// driver's entry there cites the upstream file and symbol behind every value), copied here byte for byte
// by `make regen` because go:embed cannot reach outside the module. TestEmbeddedDriversMatchCatalog fails
// when the copy is stale.
//
//go:embed nic_drivers.json
var nicDriversJSON []byte

// Drivers is the catalog's driver table, by driver name as `ethtool -i` reports it.
var Drivers = mustDecodeDrivers(nicDriversJSON)

func mustDecodeDrivers(data []byte) map[string]Driver {
	d, err := decodeDrivers(data)
	if err != nil {
		panic(fmt.Sprintf("embedded nic_drivers.json: %v", err)) // a build input, covered by tests
	}
	return d
}

// decodeDrivers reads the catalog file. Fields the agent does not use (descriptions, sources, memory
// cost, anything added later) are ignored, so the catalog can grow without a Go change;
// what the agent does use is checked, so a typo cannot silently turn into "no rounding" or "no minimum".
func decodeDrivers(data []byte) (map[string]Driver, error) {
	var doc struct {
		Drivers map[string]Driver `json:"drivers"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, err
	}
	if len(doc.Drivers) == 0 {
		return nil, fmt.Errorf("no drivers")
	}
	for name, d := range doc.Drivers {
		switch d.Rounding {
		case UpPowerOfTwo, DownPowerOfTwo, MultipleOf8, NoRounding:
		default:
			return nil, fmt.Errorf("driver %s: rounding %q is not one the agent implements", name, d.Rounding)
		}
		for dir, lim := range map[string]*Limits{"rx": d.RX, "tx": d.TX} {
			if lim != nil && (lim.Min <= 0 || lim.Max < lim.Min) {
				return nil, fmt.Errorf("driver %s: %s min %d max %d: want 0 < min <= max", name, dir, lim.Min, lim.Max)
			}
		}
		seen := map[string]bool{}
		for i, c := range d.Counters {
			switch c.Cause {
			case CauseRXRingOverflow, CauseInstanceAllowance, CauseNotANodeSetting:
			default:
				return nil, fmt.Errorf("driver %s: counters[%d] %s: cause %q is not one the agent knows", name, i, c.Name, c.Cause)
			}
			if c.Name == "" || seen[c.Name] {
				return nil, fmt.Errorf("driver %s: counters[%d]: name %q is empty or listed twice", name, i, c.Name)
			}
			seen[c.Name] = true
		}
		if d.MTUMax <= 0 {
			return nil, fmt.Errorf("driver %s: mtu_max %d: want a positive MTU", name, d.MTUMax)
		}
	}
	return doc.Drivers, nil
}

// Size computes the ring size to ask a device for: want clamped to [min, deviceMax] and rounded by the
// driver's rule so that what the driver stores equals what we asked for (otherwise every reconcile would
// see drift and rewrite). lim may be nil for drivers the table does not know: then only deviceMax applies.
func Size(want int, deviceMax int, lim *Limits, rule Rounding) int {
	n := want
	if lim != nil && n < lim.Min {
		n = lim.Min
	}
	switch rule {
	case UpPowerOfTwo:
		n = ceilPow2(n)
	case DownPowerOfTwo:
		n = floorPow2(n)
	case MultipleOf8:
		n = (n + 7) &^ 7
	}
	if deviceMax > 0 && n > deviceMax {
		n = deviceMax
		switch rule {
		case UpPowerOfTwo, DownPowerOfTwo:
			n = floorPow2(n)
		case MultipleOf8:
			n &^= 7
		}
	}
	return n
}

func ceilPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

func floorPow2(n int) int {
	if n <= 1 {
		return n
	}
	return 1 << (bits.Len(uint(n)) - 1)
}
