package links_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vishvananda/netlink"
	"go.uber.org/goleak"

	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Links a test machine cannot have (an Azure VF under hv_netvsc, a PCI VF): netlink objects shaped like
// the kernel's, and a sysfs tree shaped like /sys.
func TestClassify(t *testing.T) {
	sys := t.TempDir()
	mk := func(name string, rel ...string) {
		for _, r := range rel {
			if err := os.MkdirAll(filepath.Join(sys, "class/net", name, r), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("enp1s0v0", "device/physfn")
	mk("enp2s0", "device")

	dev := func(name string, index, master int, bus string) netlink.Link {
		return &netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: name, Index: index, MasterIndex: master, ParentDevBus: bus}}
	}
	eth0 := dev("eth0", 2, 0, "vmbus")
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0", Index: 9}}
	all := []netlink.Link{
		dev("lo", 1, 0, ""),
		eth0,
		dev("enP30832s1", 3, 2, "pci"), // Mellanox VF enslaved to hv_netvsc eth0
		dev("enp1s0v0", 4, 0, "pci"),   // igbvf: device/physfn
		dev("enp2s0", 5, 0, ""),        // old kernel without IFLA_PARENT_DEV_BUS_NAME: sysfs says device
		dev("ens5", 6, 9, "pci"),       // a NIC in a bridge is a primary, not a VF
		br,
		&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "veth1", Index: 10}},
	}
	d := links.Discoverer{
		NL:    links.Netlink{LinkList: func() ([]netlink.Link, error) { return all, nil }},
		Sysfs: links.Sysfs{Root: sys},
	}
	got, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"lo": profile.RoleVirtual, "eth0": profile.RolePrimary, "enP30832s1": profile.RoleSRIOVVF,
		"enp1s0v0": profile.RoleSRIOVVF, "enp2s0": profile.RolePrimary, "ens5": profile.RolePrimary,
		"br0": profile.RoleVirtual, "veth1": profile.RoleVirtual,
	}
	for _, l := range got {
		t.Run(l.Name, func(t *testing.T) {
			if l.Role != want[l.Name] {
				t.Fatalf("role %s (%s), want %s", l.Role, l.RoleReason, want[l.Name])
			}
		})
	}
}

func TestSelect(t *testing.T) {
	def, err := profile.Parse([]byte(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	lab := profile.Selector{Roles: []string{"virtual"}, Include: []string{"wst*"}, Exclude: []string{"wst-skip*"}}
	mlx := profile.Selector{Roles: []string{"sriov-vf"}, Drivers: []string{"mlx5_core", "mana"}}
	cases := []struct {
		name   string
		sel    profile.Selector
		link   links.Link
		want   bool
		reason string
	}{
		{"default selects a VF", def.Interfaces, links.Link{Name: "enP1s1", Role: "sriov-vf", Driver: "mlx5_core"}, true, "role sriov-vf, driver mlx5_core"},
		{"default selects a primary", def.Interfaces, links.Link{Name: "ens5", Role: "primary", Driver: "ena"}, true, "role primary, driver ena"},
		{"default skips veth", def.Interfaces, links.Link{Name: "veth12", Role: "virtual", Driver: "veth"}, false, "role virtual not selected (profile roles: sriov-vf, primary)"},
		{"default excludes cilium devices even with a device", def.Interfaces, links.Link{Name: "cilium_host", Role: "primary"}, false, `name matches exclude glob "cilium_*"`},
		{"default excludes lxc", def.Interfaces, links.Link{Name: "lxc1234", Role: "primary"}, false, `name matches exclude glob "lxc*"`},
		{"driver list", mlx, links.Link{Name: "eth1", Role: "sriov-vf", Driver: "ena"}, false, `driver "ena" not selected (profile drivers: mlx5_core, mana)`},
		{"driver list match", mlx, links.Link{Name: "eth1", Role: "sriov-vf", Driver: "mana"}, true, "role sriov-vf, driver mana"},
		{"include glob", lab, links.Link{Name: "other0", Role: "virtual"}, false, "name matches no include glob (wst*)"},
		{"include and exclude", lab, links.Link{Name: "wst-skip0", Role: "virtual"}, false, `name matches exclude glob "wst-skip*"`},
		{"lab link", lab, links.Link{Name: "wst0", Role: "virtual", Driver: "dummy"}, true, "role virtual, driver dummy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, reason := links.Select(c.sel, c.link)
			if got != c.want || reason != c.reason {
				t.Fatalf("Select = %v %q, want %v %q", got, reason, c.want, c.reason)
			}
		})
	}
}

// Real links in a fresh namespace: driver from the ethtool ioctl, role from netlink.
func TestDiscoverInNetns(t *testing.T) {
	ns := linkstest.New(t)
	ns.AddVeth(t, "wstv0", "wstv1")
	ns.AddBridge(t, "wstb0")
	got, err := ns.Discoverer().List()
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ driver, role string }
	want := map[string]row{
		"lo": {"", profile.RoleVirtual}, "wstv0": {"veth", profile.RoleVirtual},
		"wstv1": {"veth", profile.RoleVirtual}, "wstb0": {"bridge", profile.RoleVirtual},
	}
	if len(got) != len(want) {
		t.Fatalf("found %d links, want %d: %+v", len(got), len(want), got)
	}
	for _, l := range got {
		w, ok := want[l.Name]
		if !ok {
			t.Errorf("unexpected link %s", l.Name)
			continue
		}
		if l.Role != w.role || (w.driver != "" && l.Driver != w.driver) {
			t.Errorf("%s: driver %q role %s, want %q %s", l.Name, l.Driver, l.Role, w.driver, w.role)
		}
	}
	one, err := ns.Discoverer().Get("wstb0")
	if err != nil || one.Driver != "bridge" {
		t.Fatalf("Get(wstb0) = %+v, %v", one, err)
	}
}

func TestNameExcluded(t *testing.T) {
	def, err := profile.Parse([]byte(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	lab := profile.Selector{Include: []string{"wst*"}, Exclude: []string{"wst-skip*"}}
	cases := []struct {
		name string
		sel  profile.Selector
		link string
		want bool
	}{
		{"pod veth", def.Interfaces, "veth1a2b3c", true},
		{"cilium lxc", def.Interfaces, "lxc12345", true},
		{"a VF name", def.Interfaces, "enP30832s1", false},
		{"not included", lab, "eth0", true},
		{"included", lab, "wst0", false},
		{"included then excluded", lab, "wst-skip1", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := links.NameExcluded(c.sel, c.link); got != c.want {
				t.Fatalf("NameExcluded(%s) = %v, want %v", c.link, got, c.want)
			}
		})
	}
}
