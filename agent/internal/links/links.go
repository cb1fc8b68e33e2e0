// Package links discovers the node's network links, classifies them by role (SR-IOV VF, primary, virtual),
// decides which ones the profile selects, and watches netlink for links coming and going.
//
// Every netlink call goes through Netlink, a struct of function fields: production binds it to a real
// handle, tests bind it to a handle inside a network namespace they create, or wrap a function to break
// a subscription the ways the library reports failures (linkstest.BreakFirstSubscription).
package links

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
)

// Netlink is the seam between the agent and the kernel's rtnetlink.
type Netlink struct {
	LinkList      func() ([]netlink.Link, error)
	LinkByName    func(name string) (netlink.Link, error)
	LinkSetMTU    func(link netlink.Link, mtu int) error
	LinkMaxMTU    func(index int) (int, error) // IFLA_MAX_MTU; nil: unknown
	LinkSubscribe func(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error
}

// NewNetlink binds the seam to h (nil: the caller's namespace) and subscribes in ns (nil: the caller's).
func NewNetlink(h *netlink.Handle, ns *netns.NsHandle) Netlink {
	if h == nil {
		h = &netlink.Handle{}
	}
	return Netlink{
		LinkList:   h.LinkList,
		LinkByName: h.LinkByName,
		LinkSetMTU: h.LinkSetMTU,
		LinkMaxMTU: maxMTU(ns),
		LinkSubscribe: func(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error {
			if ns != nil {
				opts.Namespace = ns
			}
			return netlink.LinkSubscribeWithOptions(ch, done, opts)
		},
	}
}

// DriverNamer reports a link's kernel driver (`ethtool -i`); *ethioctl.Reader implements it.
type DriverNamer interface {
	DriverName(intf string) (string, error)
}

// Link is one link as the agent sees it.
type Link struct {
	Name        string
	Index       int
	Type        string // netlink link kind: device, veth, bridge, bond, dummy...
	Driver      string
	Role        string // profile.RoleSRIOVVF | RolePrimary | RoleVirtual
	RoleReason  string
	MTU         int
	MasterIndex int
	Bus         string // parent device bus ("pci", "vmbus"), "" when the link has no device
	Raw         netlink.Link
}

// Sysfs reads the few facts netlink does not carry (SR-IOV physfn, the bound driver). Root is normally /sys.
// Sysfs shows the namespace that mounted it, so links in another namespace are judged by netlink alone.
type Sysfs struct{ Root string }

func (s Sysfs) exists(name, rel string) bool {
	if s.Root == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(s.Root, "class/net", name, rel))
	return err == nil
}

func (s Sysfs) driver(name string) string {
	if s.Root == "" {
		return ""
	}
	target, err := os.Readlink(filepath.Join(s.Root, "class/net", name, "device/driver"))
	if err != nil {
		return ""
	}
	return filepath.Base(target)
}

// Discoverer lists and classifies links.
type Discoverer struct {
	NL      Netlink
	Drivers DriverNamer
	Sysfs   Sysfs
}

// List returns every link, classified.
func (d Discoverer) List() ([]Link, error) {
	raw, err := d.NL.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	byIndex := make(map[int]netlink.Link, len(raw))
	for _, l := range raw {
		byIndex[l.Attrs().Index] = l
	}
	out := make([]Link, 0, len(raw))
	for _, l := range raw {
		out = append(out, d.describe(l, byIndex))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// Get returns one link by name, classified; its master (if any) is looked up too.
func (d Discoverer) Get(name string) (Link, error) {
	l, err := d.NL.LinkByName(name)
	if err != nil {
		return Link{}, fmt.Errorf("link %s: %w", name, err)
	}
	byIndex := map[int]netlink.Link{l.Attrs().Index: l}
	if m := l.Attrs().MasterIndex; m != 0 {
		all, err := d.NL.LinkList()
		if err != nil {
			return Link{}, fmt.Errorf("list links for master of %s: %w", name, err)
		}
		for _, o := range all {
			if o.Attrs().Index == m {
				byIndex[m] = o
			}
		}
	}
	return d.describe(l, byIndex), nil
}

func (d Discoverer) describe(l netlink.Link, byIndex map[int]netlink.Link) Link {
	a := l.Attrs()
	out := Link{
		Name: a.Name, Index: a.Index, Type: l.Type(), MTU: a.MTU, MasterIndex: a.MasterIndex,
		Bus: d.bus(l), Raw: l,
	}
	if d.Drivers != nil {
		if name, err := d.Drivers.DriverName(a.Name); err == nil {
			out.Driver = name
		}
	}
	if out.Driver == "" {
		out.Driver = d.Sysfs.driver(a.Name)
	}
	var master netlink.Link
	if a.MasterIndex != 0 {
		master = byIndex[a.MasterIndex]
	}
	out.Role, out.RoleReason = d.classify(l, out.Bus, master)
	return out
}

// bus names the bus of the device behind a link: IFLA_PARENT_DEV_BUS_NAME (Linux 5.14+), else sysfs.
func (d Discoverer) bus(l netlink.Link) string {
	if b := l.Attrs().ParentDevBus; b != "" {
		return b
	}
	if d.Sysfs.exists(l.Attrs().Name, "device") {
		if target, err := os.Readlink(filepath.Join(d.Sysfs.Root, "class/net", l.Attrs().Name, "device/subsystem")); err == nil {
			return filepath.Base(target)
		}
		return "unknown"
	}
	return ""
}

// Master kinds that aggregate or switch ports: a device enslaved to one of these is not a VF.
var aggregatingMasters = []string{"bridge", "bond", "team", "vrf", "openvswitch", "ipvlan", "macvlan"}

func (d Discoverer) classify(l netlink.Link, bus string, master netlink.Link) (role, reason string) {
	name := l.Attrs().Name
	if bus == "" {
		return profile.RoleVirtual, fmt.Sprintf("no backing device (%s)", l.Type())
	}
	if d.Sysfs.exists(name, "device/physfn") {
		return profile.RoleSRIOVVF, "PCI virtual function (device/physfn exists)"
	}
	// Azure accelerated networking: the Mellanox/MANA VF is enslaved to hv_netvsc eth0, a device of its own.
	if master != nil && !slices.Contains(aggregatingMasters, master.Type()) && d.bus(master) != "" {
		return profile.RoleSRIOVVF, fmt.Sprintf("enslaved to device-backed %s", master.Attrs().Name)
	}
	return profile.RolePrimary, fmt.Sprintf("backed by a %s device", bus)
}

// Select applies the profile's interface selector to a link.
func Select(sel profile.Selector, l Link) (selected bool, reason string) {
	if !slices.Contains(sel.Roles, l.Role) {
		return false, fmt.Sprintf("role %s not selected (profile roles: %s)", l.Role, strings.Join(sel.Roles, ", "))
	}
	if len(sel.Drivers) > 0 && !slices.Contains(sel.Drivers, l.Driver) {
		return false, fmt.Sprintf("driver %q not selected (profile drivers: %s)", l.Driver, strings.Join(sel.Drivers, ", "))
	}
	if len(sel.Include) > 0 {
		if _, ok := firstMatch(sel.Include, l.Name); !ok {
			return false, fmt.Sprintf("name matches no include glob (%s)", strings.Join(sel.Include, ", "))
		}
	}
	if g, ok := firstMatch(sel.Exclude, l.Name); ok {
		return false, fmt.Sprintf("name matches exclude glob %q", g)
	}
	return true, fmt.Sprintf("role %s, driver %s", l.Role, l.Driver)
}

// NameExcluded reports whether the selector rules a link out by name alone, before anything is read from
// the kernel: pod veths come and go all day and need no further look.
func NameExcluded(sel profile.Selector, name string) bool {
	if len(sel.Include) > 0 {
		if _, ok := firstMatch(sel.Include, name); !ok {
			return true
		}
	}
	_, excluded := firstMatch(sel.Exclude, name)
	return excluded
}

func firstMatch(globs []string, name string) (string, bool) {
	for _, g := range globs {
		if ok, err := path.Match(g, name); err == nil && ok {
			return g, true
		}
	}
	return "", false
}

// ErrSubscriptionClosed is reported when the kernel side of a subscription ends without an error callback.
var ErrSubscriptionClosed = errors.New("netlink link subscription closed")
