package rings

import (
	"encoding/json"
)

// The Go side of wirespeed.sizing.queues.Need, the one decision of "enough" for a ring: a ring holds a stall
// when what the driver runs with it (its rounding, clamped to its limits) is at least the packets that arrive
// during the stall, held to the driver's max; an unset ring is the driver's default; the recommendation is the
// default when that holds, else the smallest ring the driver keeps unchanged that does. TestEnoughMatchesVectors
// holds these equal to the Python through tests/vectors/sizing_rings.json, which is generated from it.

// Defaults are a driver's default ring sizes (the older one where it changed upstream, as the Python assumes).
type Defaults struct {
	RX, TX int
}

// DriverDefaults are the defaults nic_drivers.json gives as plain numbers, by driver. Decoded apart from
// Drivers so that the rest of the agent stays indifferent to how the catalog writes a default.
var DriverDefaults = decodeDefaults(nicDriversJSON)

func decodeDefaults(data []byte) map[string]Defaults {
	var doc struct {
		Drivers map[string]struct {
			RX *struct {
				Default json.Number `json:"default"`
			} `json:"rx"`
			TX *struct {
				Default json.Number `json:"default"`
			} `json:"tx"`
		} `json:"drivers"`
	}
	out := map[string]Defaults{}
	if json.Unmarshal(data, &doc) != nil {
		return out
	}
	for name, d := range doc.Drivers {
		if d.RX == nil || d.TX == nil {
			continue
		}
		rx, errRX := d.RX.Default.Int64()
		tx, errTX := d.TX.Default.Int64()
		if errRX == nil && errTX == nil {
			out[name] = Defaults{RX: int(rx), TX: int(tx)}
		}
	}
	return out
}

// Effective is the ring the driver runs when asked for value.
func Effective(value int, lim *Limits, rule Rounding) int {
	return Size(value, lim.Max, lim, rule)
}

// Holds says whether a ring of value (what the driver runs with it) holds packets, held to the driver's max.
func Holds(value, packets int, lim *Limits, rule Rounding) bool {
	return Effective(value, lim, rule) >= min(packets, lim.Max)
}

// Recommended is the ring to ask for so that packets fit: the default when it holds them, else the smallest
// ring the driver keeps unchanged that does (a down-rounding driver is asked for the next power of two up).
func Recommended(packets, def int, lim *Limits, rule Rounding) int {
	if Holds(def, packets, lim, rule) {
		return def
	}
	ask := rule
	if rule == DownPowerOfTwo {
		ask = UpPowerOfTwo
	}
	return Effective(Size(packets, lim.Max, lim, ask), lim, rule)
}
