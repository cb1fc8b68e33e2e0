package reconcile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"log/slog"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"go.uber.org/goleak"

	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/rings"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustProfile(t testing.TB, doc string) *profile.Profile {
	t.Helper()
	p, err := profile.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// procSys is a /proc/sys-shaped temporary tree.
func procSys(t testing.TB, values map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, v := range values {
		p := filepath.Join(root, strings.ReplaceAll(name, ".", "/"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The lab selector: virtual links named wst* (a test namespace has no NICs).
const labProfile = `{"name":"lab","interfaces":{"roles":["virtual"],"include":["wst*"]},
	"mtu":{"value":1400},"sysctls":{"net.core.netdev_max_backlog":32768}}`

func TestReconcileAllInNetns(t *testing.T) {
	ns := linkstest.New(t)
	ns.AddVeth(t, "wsta0", "wsta1")
	ns.AddVeth(t, "other0", "other1")
	root := procSys(t, map[string]string{"net.core.netdev_max_backlog": "1000"})
	var logs bytes.Buffer
	r := New(Config{
		Profile: mustProfile(t, labProfile), Links: ns.Discoverer(), Ethtool: ns.Ethtool, ProcSysRoot: root,
		Log: slog.New(slog.NewJSONHandler(&logs, nil)),
	})

	rep, out := r.All()
	if out.Written != 3 { // two MTUs and one sysctl
		t.Fatalf("wrote %d values, want 3; report %+v", out.Written, rep)
	}
	for name, want := range map[string]int{"wsta0": 1400, "wsta1": 1400, "other0": 1500, "other1": 1500} {
		if got := ns.MTU(t, name); got != want {
			t.Errorf("%s MTU %d, want %d", name, got, want)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(root, "net/core/netdev_max_backlog")); string(got) != "32768\n" {
		t.Errorf("backlog file %q", got)
	}
	if rep.State != status.StateApplied || rep.Drifted() {
		t.Errorf("state %s drifted %v: %s", rep.State, rep.Drifted(), rep.Reason)
	}
	var names []string
	for _, i := range rep.Interfaces {
		names = append(names, i.Name)
		if i.MTU == nil || i.MTU.Current != 1400 || !i.Selected {
			t.Errorf("%s: %+v", i.Name, i)
		}
	}
	if strings.Join(names, ",") != "wsta0,wsta1" && strings.Join(names, ",") != "wsta1,wsta0" {
		t.Errorf("report lists %v, want only the selected links", names)
	}
	// Every change is logged as msg=applied with link, driver, setting, from, to.
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "applied" && rec["link"] == "wsta0" {
			found = rec["driver"] == "veth" && rec["setting"] == "mtu" && rec["from"] == 1500.0 && rec["to"] == 1400.0
		}
	}
	if !found {
		t.Errorf("no applied log for wsta0 mtu 1500->1400 in:\n%s", logs.String())
	}

	// A second pass finds nothing to do.
	if _, out := r.All(); out.Written != 0 {
		t.Fatalf("second reconcile wrote %d values", out.Written)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	ns := linkstest.New(t)
	ns.AddVeth(t, "wstd0", "wstd1")
	root := procSys(t, map[string]string{"net.core.netdev_max_backlog": "1000"})
	r := New(Config{Profile: mustProfile(t, labProfile), Links: ns.Discoverer(), Ethtool: ns.Ethtool, ProcSysRoot: root, DryRun: true})
	rep, out := r.All()
	if out.Written != 0 || ns.MTU(t, "wstd0") != 1500 {
		t.Fatalf("dry run wrote %d values; MTU %d", out.Written, ns.MTU(t, "wstd0"))
	}
	if got, _ := os.ReadFile(filepath.Join(root, "net/core/netdev_max_backlog")); string(got) != "1000\n" {
		t.Errorf("dry run wrote the sysctl: %q", got)
	}
	if rep.State != status.StateDryRun || !rep.Drifted() {
		t.Fatalf("state %s drifted %v", rep.State, rep.Drifted())
	}
	if v := rep.Sysctls["net.core.netdev_max_backlog"]; v.Desired != 32768 || v.Current != 1000 {
		t.Fatalf("sysctl %+v", v)
	}
}

func TestDegradedWhenSysctlMissing(t *testing.T) {
	ns := linkstest.New(t)
	root := procSys(t, map[string]string{})
	r := New(Config{Profile: mustProfile(t, labProfile), Links: ns.Discoverer(), Ethtool: ns.Ethtool, ProcSysRoot: root})
	rep, _ := r.All()
	if rep.State != status.StateDegraded || len(rep.Errors) != 1 || !strings.Contains(rep.Reason, "net.core.netdev_max_backlog") {
		t.Fatalf("state %s reason %q errors %v", rep.State, rep.Reason, rep.Errors)
	}
}

// Rings on NICs that cannot exist here (an Azure Mellanox VF under hv_netvsc): netlink objects shaped like
// the kernel's and FakeEthtool for the device.
func TestReconcileRingsOnFakeAzureVF(t *testing.T) {
	fake := rings.NewFakeEthtool()
	fake.Add("eth0", &rings.FakeDevice{Driver: "hv_netvsc"})
	fake.Add("enP1s1", &rings.FakeDevice{Driver: "mlx5_core", Ring: ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 8192, RxPending: 1024, TxPending: 1024}})
	all := []netlink.Link{
		&netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: "eth0", Index: 2, ParentDevBus: "vmbus", MTU: 1500}},
		&netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: "enP1s1", Index: 3, MasterIndex: 2, ParentDevBus: "pci", MTU: 1500}},
	}
	d := links.Discoverer{NL: links.Netlink{LinkList: func() ([]netlink.Link, error) { return all, nil }}, Drivers: fake}
	p := mustProfile(t, `{"name":"throughput","rings":{"mlx5_core":{"rx":8192,"tx":4000}}}`)
	r := New(Config{Profile: p, Links: d, Ethtool: fake, ProcSysRoot: procSys(t, nil)})
	rep, out := r.All()
	if out.Written != 2 || rep.State != status.StateApplied {
		t.Fatalf("wrote %d, state %s: %s", out.Written, rep.State, rep.Reason)
	}
	vf := rep.Interfaces[1]
	if vf.Name != "enP1s1" || vf.Role != profile.RoleSRIOVVF ||
		*vf.RX != (status.Ring{Desired: 8192, Current: 8192, Max: 8192}) || *vf.TX != (status.Ring{Desired: 4096, Current: 4096, Max: 8192}) {
		t.Fatalf("VF status %+v rx %+v tx %+v", vf, vf.RX, vf.TX)
	}
	if eth0 := rep.Interfaces[0]; eth0.Role != profile.RolePrimary || eth0.RX != nil {
		t.Fatalf("eth0 %+v", eth0)
	}
	if _, out := r.All(); out.Written != 0 || fake.Device("enP1s1").Sets != 1 {
		t.Fatalf("second pass wrote %d; device saw %d sets", out.Written, fake.Device("enP1s1").Sets)
	}
}

// Two VFs of one driver where only one keeps a smaller ring (a firmware queue limit): the other still gets
// the full target, and the one that refused is reported (degraded with the reason, drift in the report),
// not rewritten every reconcile, and forgotten once it goes away.
func TestRingRefusedByOneVFOfADriver(t *testing.T) {
	fake := rings.NewFakeEthtool()
	atDefault := ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 8192, RxPending: 1024, TxPending: 1024}
	fake.Add("enP1s1", &rings.FakeDevice{Driver: "mlx5_core", Ring: atDefault,
		Store: func(_ string, n uint32) uint32 { return min(n, 4096) }})
	fake.Add("enP2s2", &rings.FakeDevice{Driver: "mlx5_core", Ring: atDefault})
	vf := func(name string, index int) netlink.Link {
		return &netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: name, Index: index, ParentDevBus: "pci", MTU: 1500}}
	}
	all := []netlink.Link{vf("enP1s1", 3), vf("enP2s2", 4)}
	d := links.Discoverer{NL: links.Netlink{LinkList: func() ([]netlink.Link, error) { return all, nil }}, Drivers: fake}
	p := mustProfile(t, `{"name":"throughput","rings":{"mlx5_core":{"rx":8192}}}`)
	r := New(Config{Profile: p, Links: d, Ethtool: fake, ProcSysRoot: procSys(t, nil)})

	rep, _ := r.All()
	const reason = "enP1s1: rx ring: the device kept 4096 when 8192 was written (device max 8192); " +
		"not written again while it keeps that size"
	if rep.State != status.StateDegraded || rep.Reason != "1 problem(s): "+reason || !rep.Drifted() {
		t.Fatalf("state %s drifted %v reason %q", rep.State, rep.Drifted(), rep.Reason)
	}
	byName := map[string]status.Interface{}
	for _, i := range rep.Interfaces {
		byName[i.Name] = i
	}
	if got, want := *byName["enP1s1"].RX, (status.Ring{Desired: 8192, Current: 4096, Max: 8192, Refused: true}); got != want {
		t.Errorf("enP1s1 rx %+v, want %+v", got, want)
	}
	if got, want := *byName["enP2s2"].RX, (status.Ring{Desired: 8192, Current: 8192, Max: 8192}); got != want {
		t.Errorf("enP2s2 rx %+v, want %+v (the other VF of the driver must get the full target)", got, want)
	}

	rep2, out := r.All()
	if out.Written != 0 || fake.Device("enP1s1").Sets != 1 || rep2.Reason != rep.Reason {
		t.Fatalf("second pass wrote %d (device saw %d sets), reason %q", out.Written, fake.Device("enP1s1").Sets, rep2.Reason)
	}

	// The refusing VF is removed and comes back with a new ifindex and a healthy queue: full target.
	all = []netlink.Link{vf("enP2s2", 4)}
	r.All()
	if n := r.applier.Remembered(); n != 0 {
		t.Fatalf("ring memory of a removed link kept: %d instances", n)
	}
	fake.Device("enP1s1").Ring, fake.Device("enP1s1").Store = atDefault, nil
	all = []netlink.Link{vf("enP1s1", 9), vf("enP2s2", 4)}
	rep3, _ := r.All()
	if rep3.State != status.StateApplied || rep3.Drifted() {
		t.Fatalf("after re-add: state %s drifted %v: %s", rep3.State, rep3.Drifted(), rep3.Reason)
	}
}

func TestThrottle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	th := newThrottle(100 * time.Millisecond)
	vf, eth1 := instance{"vf", 7}, instance{"eth1", 3}
	readded := instance{"vf", 8} // the same name back with a new ifindex: a VF re-added by host servicing
	names := func(keys []instance) string {
		var out []string
		for _, k := range keys {
			out = append(out, k.name)
		}
		return strings.Join(out, ",")
	}
	steps := []struct {
		name string
		do   func() any
		want any
	}{
		{"first event runs at once", func() any { return th.trigger(vf, ms(0)) }, true},
		{"another link is independent", func() any { return th.trigger(eth1, ms(1)) }, true},
		{"second event inside the window waits", func() any { return th.trigger(vf, ms(10)) }, false},
		{"a storm inside the window waits", func() any {
			for i := 11; i < 99; i++ {
				if th.trigger(vf, ms(i)) {
					return true
				}
			}
			return false
		}, false},
		{"pending run falls due at the window's end", func() any { at, _ := th.next(); return at }, ms(100)},
		{"nothing due early", func() any { return len(th.due(ms(99))) }, 0},
		{"one coalesced run", func() any { return names(th.due(ms(100))) }, "vf"},
		{"nothing pending after it", func() any { _, ok := th.next(); return ok }, false},
		{"event right after the coalesced run waits again", func() any { return th.trigger(vf, ms(150)) }, false},
		{"which runs a window after the coalesced run", func() any { at, _ := th.next(); return at }, ms(200)},
		{"late timer still runs it once", func() any { return names(th.due(ms(400))) }, "vf"},
		{"idle keys are forgotten", func() any { th.due(ms(600)); return len(th.last) }, 0},
		{"and run at once next time", func() any { return th.trigger(vf, ms(700)) }, true},
		{"its own write echoes back and waits", func() any { return th.trigger(vf, ms(705)) }, false},
		{"a re-added instance runs at once, inside the old one's window", func() any {
			th.forget(vf)
			return th.trigger(readded, ms(710))
		}, true},
		{"the removed instance has nothing pending", func() any { _, ok := th.next(); return ok }, false},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Fatalf("%s: got %v, want %v", s.name, got, s.want)
		}
	}
}

// A device whose IFLA_MAX_MTU is below the profile's MTU gets its max (the kernel would refuse more).
// Virtual links all report 65,535, so the device limit is injected through the seam.
func TestMTUCappedAtDeviceMax(t *testing.T) {
	ns := linkstest.New(t)
	ns.AddVeth(t, "wstc0", "wstc1")
	d := ns.Discoverer()
	d.NL.LinkMaxMTU = func(int) (int, error) { return 1300, nil }
	r := New(Config{Profile: mustProfile(t, labProfile), Links: d, Ethtool: ns.Ethtool, ProcSysRoot: procSys(t, map[string]string{"net.core.netdev_max_backlog": "1000"})})
	rep, _ := r.All()
	if got := ns.MTU(t, "wstc0"); got != 1300 {
		t.Fatalf("MTU %d, want the device max 1300", got)
	}
	for _, i := range rep.Interfaces {
		if i.MTU == nil || *i.MTU != (status.Value{Desired: 1300, Current: 1300}) {
			t.Fatalf("%s MTU %+v", i.Name, i.MTU)
		}
	}
}
