// Package rings sizes and applies NIC RX/TX descriptor rings through the ethtool ioctl (never by running
// ethtool): the profile's value per driver, clamped to what the device reports as its max, rounded the way
// the driver would round it, and written only when it differs (a resize interrupts traffic briefly).
package rings

import "math/bits"

// Rounding is how a driver adjusts a requested ring size before using it.
type Rounding string

const (
	UpPowerOfTwo   Rounding = "up_power_of_two"   // mlx5_core, mlx4_en, mana, virtio_net
	DownPowerOfTwo Rounding = "down_power_of_two" // ena
	MultipleOf8    Rounding = "multiple_of_8"     // e1000e, igb, igbvf: ALIGN(n, 8)
	NoRounding     Rounding = "none"
)

// Limits are one direction's descriptor counts.
type Limits struct{ Default, Min, Max int }

// Driver holds the facts the agent needs about one NIC driver.
type Driver struct {
	RX, TX   *Limits // nil: the driver has no NIC rings to set (hv_netvsc)
	Rounding Rounding
	MTUMax   int
}

// Drivers mirrors components/wirespeed/data/nic_drivers.json, the one home of these numbers: each driver's
// entry there cites the upstream file and symbol behind every value. TestDriverTableMatchesCatalog fails
// when the two differ.
var Drivers = map[string]Driver{
	// drivers/net/ethernet/mellanox/mlx5/core/en_ethtool.c; seed 000 (ethtool -g on AKS: RX 1024 of 8192)
	"mlx5_core": {RX: &Limits{1024, 16, 8192}, TX: &Limits{1024, 64, 8192}, Rounding: UpPowerOfTwo, MTUMax: 3900},
	// drivers/net/ethernet/mellanox/mlx4/mlx4_en.h
	"mlx4_en": {RX: &Limits{1024, 256, 8192}, TX: &Limits{1024, 64, 8192}, Rounding: UpPowerOfTwo, MTUMax: 3900},
	// drivers/net/ethernet/microsoft/mana/mana_ethtool.c, include/net/mana/mana.h
	"mana": {RX: &Limits{512, 128, 8192}, TX: &Limits{256, 128, 16384}, Rounding: UpPowerOfTwo, MTUMax: 9000},
	// drivers/net/ethernet/amazon/ena/ena_ethtool.c; docs.aws.amazon.com network_mtu.html (9,001)
	"ena": {RX: &Limits{1024, 256, 16384}, TX: &Limits{1024, 256, 1024}, Rounding: DownPowerOfTwo, MTUMax: 9001},
	// drivers/net/ethernet/intel/e1000e/e1000.h, ethtool.c
	"e1000e": {RX: &Limits{256, 64, 4096}, TX: &Limits{256, 64, 4096}, Rounding: MultipleOf8, MTUMax: 9212},
	// drivers/net/ethernet/intel/igb/igb.h, igb_ethtool.c
	"igb": {RX: &Limits{256, 64, 4096}, TX: &Limits{256, 64, 4096}, Rounding: MultipleOf8, MTUMax: 9216},
	// drivers/net/ethernet/intel/igbvf/igbvf.h, ethtool.c; netdev.c igbvf_probe sets the 1024 defaults
	"igbvf": {RX: &Limits{1024, 64, 4096}, TX: &Limits{1024, 64, 4096}, Rounding: MultipleOf8, MTUMax: 9216},
	// drivers/net/virtio_net.c (virtnet_set_ringparam); qemu hw/net/virtio-net.c (rx<=1024, tx<=256)
	"virtio_net": {RX: &Limits{256, 64, 1024}, TX: &Limits{256, 64, 256}, Rounding: UpPowerOfTwo, MTUMax: 65535},
	// network-facts.md: hv_netvsc "rings" are buffer sections, never NIC descriptors
	"hv_netvsc": {Rounding: NoRounding, MTUMax: 9000},
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
