// Package mtu decides and applies the opt-in MTU. MTU is only safe inside one VNet/VPC (gateways, peering
// and the internet stay at 1,500), so nothing happens unless the profile sets it.
package mtu

import (
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/rings"
)

// Desired returns the MTU the profile wants on a link with this driver, and false when the profile leaves
// the link's MTU alone. A known driver's practical maximum (catalog mtu_max, e.g. Mellanox 3,900 in Azure)
// caps the value: asking for more would fail or, worse, work locally and black-hole traffic off the VNet.
// deviceMax (IFLA_MAX_MTU, 0 if unknown) caps it too, as a device's reported ring max caps its rings.
func Desired(p *profile.Profile, driver string, deviceMax int) (int, bool) {
	if p.MTU == nil {
		return 0, false
	}
	if len(p.MTU.Drivers) > 0 && !slices.Contains(p.MTU.Drivers, driver) {
		return 0, false
	}
	v := p.MTU.Value
	if d, ok := rings.Drivers[driver]; ok && d.MTUMax > 0 && v > d.MTUMax {
		v = d.MTUMax
	}
	if deviceMax > 0 && v > deviceMax {
		v = deviceMax
	}
	return v, true
}

// Ensure sets the link's MTU when it differs. setMTU is the netlink seam (links.Netlink.LinkSetMTU).
func Ensure(setMTU func(netlink.Link, int) error, link netlink.Link, want int, dryRun bool) (before int, changed bool, err error) {
	before = link.Attrs().MTU
	if before == want {
		return before, false, nil
	}
	if dryRun {
		return before, true, nil
	}
	// The kernel refuses values outside the device's [min_mtu, max_mtu] with EINVAL; that is the error.
	if err := setMTU(link, want); err != nil {
		return before, false, fmt.Errorf("set MTU of %s from %d to %d: %w", link.Attrs().Name, before, want, err)
	}
	return before, true, nil
}
