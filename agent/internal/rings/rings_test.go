package rings

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/safchain/ethtool"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// The embedded driver table must be the catalog's file, byte for byte: one home for these numbers.
func TestEmbeddedDriversMatchCatalog(t *testing.T) {
	want, err := os.ReadFile("../../../components/wirespeed/data/nic_drivers.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(nicDriversJSON, want) {
		t.Fatal("agent/internal/rings/nic_drivers.json differs from components/wirespeed/data/nic_drivers.json: " +
			"run `make regen` (it copies the file here)")
	}
}

// Decoding keeps every figure the agent uses: spot-check one driver per rounding rule against the values
// the kernel sources give (the catalog cites them).
func TestDriversDecodedFromCatalog(t *testing.T) {
	cases := []struct {
		name string
		want Driver
	}{
		{"mlx5_core", Driver{RX: &Limits{Min: 16, Max: 8192}, TX: &Limits{Min: 64, Max: 8192}, Rounding: UpPowerOfTwo, MTUMax: 3900}},
		{"ena", Driver{RX: &Limits{Min: 256, Max: 16384}, TX: &Limits{Min: 256, Max: 1024}, Rounding: DownPowerOfTwo, MTUMax: 9001}},
		{"e1000e", Driver{RX: &Limits{Min: 64, Max: 4096}, TX: &Limits{Min: 64, Max: 4096}, Rounding: MultipleOf8, MTUMax: 9212}},
		{"hv_netvsc", Driver{Rounding: NoRounding, MTUMax: 9000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Drivers[c.name]
			got.Counters = nil // TestDriverCounters
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Drivers[%s] = %+v, want %+v", c.name, got, c.want)
			}
		})
	}
	for _, name := range []string{"mlx4_en", "mana", "igb", "igbvf", "virtio_net"} {
		if _, ok := Drivers[name]; !ok {
			t.Errorf("driver %s missing from the decoded table", name)
		}
	}
}

// The counters diagnose reads come from the catalog with their cause: one per cause kind, and the lab
// drivers that have none.
func TestDriverCounters(t *testing.T) {
	cases := []struct {
		driver, counter string
		cause           Cause
	}{
		{"mana", "hc_rx_discards_no_wqe", CauseRXRingOverflow},
		{"mlx5_core", "rx_out_of_buffer", CauseRXRingOverflow},
		{"e1000e", "rx_missed_errors", CauseRXRingOverflow},
		{"ena", "bw_in_allowance_exceeded", CauseInstanceAllowance},
		{"ena", "pps_allowance_exceeded", CauseInstanceAllowance},
		{"ena", "conntrack_allowance_exceeded", CauseInstanceAllowance},
		{"ena", "linklocal_allowance_exceeded", CauseNotANodeSetting},
	}
	for _, c := range cases {
		t.Run(c.driver+"/"+c.counter, func(t *testing.T) {
			for _, got := range Drivers[c.driver].Counters {
				if got.Name == c.counter {
					if got.Cause != c.cause || got.Meaning == "" {
						t.Fatalf("%+v: want cause %s and a meaning", got, c.cause)
					}
					return
				}
			}
			t.Fatalf("%s has no counter %s: %+v", c.driver, c.counter, Drivers[c.driver].Counters)
		})
	}
	for _, name := range []string{"igbvf", "virtio_net", "hv_netvsc"} {
		if n := len(Drivers[name].Counters); n != 0 {
			t.Errorf("%s: %d counters, want none", name, n)
		}
	}
}

func TestDecodeDrivers(t *testing.T) {
	cases := []struct {
		name, doc, err string
	}{
		{"fields the agent does not use are ignored",
			`{"comment":"c","drivers":{"x":{"rx":{"default":{"6.13":1024},"min":64,"max":8192,"default_before_6_13":512},` +
				`"tx":null,"rounding":"none","mtu_max":1500,"sources":["s"],"future":true}}}`, ""},
		{"unknown rounding", `{"drivers":{"x":{"rounding":"up_to_odd","mtu_max":1500}}}`,
			`driver x: rounding "up_to_odd" is not one the agent implements`},
		{"min above max", `{"drivers":{"x":{"rx":{"min":64,"max":32},"rounding":"none","mtu_max":1500}}}`,
			"driver x: rx min 64 max 32: want 0 < min <= max"},
		{"no mtu", `{"drivers":{"x":{"rounding":"none"}}}`, "driver x: mtu_max 0: want a positive MTU"},
		{"no drivers", `{"drivers":{}}`, "no drivers"},
		{"unknown counter cause", `{"drivers":{"x":{"rounding":"none","mtu_max":1500,"counters":[{"name":"c","cause":"gremlins"}]}}}`,
			`driver x: counters[0] c: cause "gremlins" is not one the agent knows`},
		{"counter listed twice", `{"drivers":{"x":{"rounding":"none","mtu_max":1500,"counters":[` +
			`{"name":"c","cause":"rx_ring_overflow"},{"name":"c","cause":"rx_ring_overflow"}]}}}`,
			`driver x: counters[1]: name "c" is empty or listed twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := decodeDrivers([]byte(c.doc))
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if want := (Driver{RX: &Limits{Min: 64, Max: 8192}, Rounding: NoRounding, MTUMax: 1500}); !reflect.DeepEqual(d["x"], want) {
					t.Fatalf("decoded %+v, want %+v", d["x"], want)
				}
				return
			}
			if err == nil || err.Error() != c.err {
				t.Fatalf("err %v, want %q", err, c.err)
			}
		})
	}
}

func TestSize(t *testing.T) {
	d := func(name string) (*Limits, Rounding) { return Drivers[name].RX, Drivers[name].Rounding }
	cases := []struct {
		name      string
		driver    string
		want, max int
		expect    int
	}{
		{"mlx5 exact power of two", "mlx5_core", 8192, 8192, 8192},
		{"mlx5 rounds up", "mlx5_core", 3000, 8192, 4096},
		{"mlx5 clamps to device max", "mlx5_core", 16384, 8192, 8192},
		{"mlx5 raises to min", "mlx5_core", 8, 8192, 16},
		{"mana rounds up", "mana", 1500, 8192, 2048},
		{"mana min 128", "mana", 64, 8192, 128},
		{"mana smaller device max", "mana", 8192, 4096, 4096},
		{"ena rounds down", "ena", 12000, 16384, 8192},
		{"ena clamps to instance max", "ena", 16384, 8192, 8192},
		{"ena min 256", "ena", 64, 16384, 256},
		{"mlx4 rounds up", "mlx4_en", 1025, 8192, 2048},
		{"mlx4 rx min 256", "mlx4_en", 100, 8192, 256},
		{"e1000e aligns to 8", "e1000e", 1001, 4096, 1008},
		{"e1000e min 64", "e1000e", 60, 4096, 64},
		{"igbvf max", "igbvf", 4100, 4096, 4096},
		{"virtio rounds up then clamps", "virtio_net", 1000, 1024, 1024},
		{"virtio odd device max rounds down", "virtio_net", 1024, 1000, 512},
		{"unknown driver clamps only", "unknown", 5000, 4000, 4000},
		{"unknown driver keeps odd value", "unknown", 1001, 4096, 1001},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lim, rule := d(c.driver)
			if got := Size(c.want, c.max, lim, rule); got != c.expect {
				t.Fatalf("Size(%d, max %d, %s) = %d, want %d", c.want, c.max, c.driver, got, c.expect)
			}
		})
	}
}

func ptr(n int) *int { return &n }

// Rounding rules the fake devices store requests by, as the real drivers do.
func storePow2Up(_ string, n uint32) uint32 { return uint32(ceilPow2(int(n))) }

func TestApplierWithFakeNICs(t *testing.T) {
	cases := []struct {
		name        string
		driver      string
		ring        ethtool.Ring
		store       func(string, uint32) uint32
		want        profile.RingSize
		expectRX    *status.Ring
		expectTX    *status.Ring
		expectSets  int
		expectFinal [2]uint32
	}{
		{
			name:   "mlx5 VF at driver default goes to 8192",
			driver: "mlx5_core",
			ring:   ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 8192, RxPending: 1024, TxPending: 1024},
			store:  storePow2Up, want: profile.RingSize{RX: ptr(8192), TX: ptr(8192)},
			expectRX: &status.Ring{Desired: 8192, Current: 8192, Max: 8192}, expectTX: &status.Ring{Desired: 8192, Current: 8192, Max: 8192},
			expectSets: 1, expectFinal: [2]uint32{8192, 8192},
		},
		{
			name:   "mana rounds 3000 up to 4096, tx left alone",
			driver: "mana",
			ring:   ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 16384, RxPending: 512, TxPending: 256},
			store:  storePow2Up, want: profile.RingSize{RX: ptr(3000)},
			expectRX:   &status.Ring{Desired: 4096, Current: 4096, Max: 8192},
			expectSets: 1, expectFinal: [2]uint32{4096, 256},
		},
		{
			name:     "ena clamps to the instance's reported max",
			driver:   "ena",
			ring:     ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 1024, RxPending: 1024, TxPending: 1024},
			want:     profile.RingSize{RX: ptr(16384), TX: ptr(1024)},
			expectRX: &status.Ring{Desired: 8192, Current: 8192, Max: 8192}, expectTX: &status.Ring{Desired: 1024, Current: 1024, Max: 1024},
			expectSets: 1, expectFinal: [2]uint32{8192, 1024},
		},
		{
			name:     "mlx4 already at desired: no write",
			driver:   "mlx4_en",
			ring:     ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 8192, RxPending: 4096, TxPending: 512},
			want:     profile.RingSize{RX: ptr(4000), TX: ptr(512)},
			expectRX: &status.Ring{Desired: 4096, Current: 4096, Max: 8192}, expectTX: &status.Ring{Desired: 512, Current: 512, Max: 8192},
			expectSets: 0, expectFinal: [2]uint32{4096, 512},
		},
		{
			name:       "unknown driver keeps a different value: refused, not rewritten",
			driver:     "acme_nic",
			ring:       ethtool.Ring{RxMaxPending: 4096, TxMaxPending: 4096, RxPending: 512, TxPending: 512},
			store:      func(_ string, n uint32) uint32 { return n &^ 63 }, // multiples of 64, unknown to the table
			want:       profile.RingSize{RX: ptr(1000)},
			expectRX:   &status.Ring{Desired: 1000, Current: 960, Max: 4096, Refused: true},
			expectSets: 1, expectFinal: [2]uint32{960, 512},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := NewFakeEthtool()
			fake.Add("vf0", &FakeDevice{Driver: c.driver, Ring: c.ring, Store: c.store})
			a := &Applier{ET: fake}
			rx, tx, _, err := a.Apply(Link{"vf0", 7, c.driver}, c.want, false)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rx, c.expectRX) || !reflect.DeepEqual(tx, c.expectTX) {
				t.Fatalf("rx %+v tx %+v, want rx %+v tx %+v", rx, tx, c.expectRX, c.expectTX)
			}
			// A second reconcile must find nothing to do: no rewrite loop.
			rx2, tx2, changes, err := a.Apply(Link{"vf0", 7, c.driver}, c.want, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) != 0 || !reflect.DeepEqual(rx2, c.expectRX) || !reflect.DeepEqual(tx2, c.expectTX) {
				t.Fatalf("second apply changed %v (rx %+v tx %+v)", changes, rx2, tx2)
			}
			dev := fake.Device("vf0")
			if dev.Sets != c.expectSets {
				t.Errorf("SetRing reached the device %d times, want %d", dev.Sets, c.expectSets)
			}
			if got := [2]uint32{dev.Ring.RxPending, dev.Ring.TxPending}; got != c.expectFinal {
				t.Errorf("device rings %v, want %v", got, c.expectFinal)
			}
		})
	}
}

// keepAtMost models a device whose firmware stores no more than limit descriptors although it reports a
// larger max (a smaller queue on one VF of a driver).
func keepAtMost(limit uint32) func(string, uint32) uint32 {
	return func(_ string, n uint32) uint32 { return min(n, limit) }
}

// One NIC that keeps a smaller ring must not lower the target of another NIC with the same driver, and
// must show as refused (drift), not as tuned.
func TestApplierMemoryIsPerLink(t *testing.T) {
	fake := NewFakeEthtool()
	atDefault := ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 8192, RxPending: 1024, TxPending: 1024}
	fake.Add("vf0", &FakeDevice{Driver: "mlx5_core", Ring: atDefault, Store: keepAtMost(4096)})
	fake.Add("vf1", &FakeDevice{Driver: "mlx5_core", Ring: atDefault})
	a := &Applier{ET: fake}
	want := profile.RingSize{RX: ptr(8192)}
	vf0, vf1 := Link{"vf0", 7, "mlx5_core"}, Link{"vf1", 8, "mlx5_core"}

	rx0, _, _, err := a.Apply(vf0, want, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&status.Ring{Desired: 8192, Current: 4096, Max: 8192, Refused: true}); !reflect.DeepEqual(rx0, want) {
		t.Fatalf("vf0 rx %+v, want %+v", rx0, want)
	}
	rx1, _, _, err := a.Apply(vf1, want, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&status.Ring{Desired: 8192, Current: 8192, Max: 8192}); !reflect.DeepEqual(rx1, want) {
		t.Fatalf("vf1 rx %+v, want %+v: vf0's smaller ring lowered the target of its driver", rx1, want)
	}
	if got := fake.Device("vf1").Ring.RxPending; got != 8192 {
		t.Fatalf("vf1 device ring %d, want 8192", got)
	}

	// The refusing device is not rewritten on the next reconcile, and still reports the refusal.
	rx0, _, changes, err := a.Apply(vf0, want, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 0 || fake.Device("vf0").Sets != 1 || !rx0.Refused || rx0.Desired != 8192 || rx0.Current != 4096 {
		t.Fatalf("second apply to vf0: changes %v, sets %d, rx %+v", changes, fake.Device("vf0").Sets, rx0)
	}

	// Someone changes the ring by hand: it differs from what the device kept, so it is written again.
	fake.Device("vf0").Ring.RxPending = 1024
	if _, _, changes, _ := a.Apply(vf0, want, false); len(changes) != 1 || fake.Device("vf0").Sets != 2 {
		t.Fatalf("after a manual change: changes %v, sets %d", changes, fake.Device("vf0").Sets)
	}

	// vf0 re-added (same name, new ifindex) is a new device: it is asked for the full target again.
	fake.Device("vf0").Ring = atDefault
	fake.Device("vf0").Store = nil
	rx0, _, _, err = a.Apply(Link{"vf0", 9, "mlx5_core"}, want, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&status.Ring{Desired: 8192, Current: 8192, Max: 8192}); !reflect.DeepEqual(rx0, want) {
		t.Fatalf("re-added vf0 rx %+v, want %+v", rx0, want)
	}
}

func TestApplierForgetsLinksThatGoAway(t *testing.T) {
	fake := NewFakeEthtool()
	fake.Add("vf0", &FakeDevice{Driver: "mana", Store: keepAtMost(2048),
		Ring: ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 16384, RxPending: 512, TxPending: 256}})
	fake.Add("vf1", &FakeDevice{Driver: "mana", Store: keepAtMost(2048),
		Ring: ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 16384, RxPending: 512, TxPending: 256}})
	a := &Applier{ET: fake}
	for _, l := range []Link{{"vf0", 7, "mana"}, {"vf1", 8, "mana"}} {
		if _, _, _, err := a.Apply(l, profile.RingSize{RX: ptr(8192)}, false); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.Remembered(); got != 2 {
		t.Fatalf("remembered %d links, want 2", got)
	}
	a.Forget("vf0", 7)
	if got := a.Remembered(); got != 1 {
		t.Fatalf("after Forget: remembered %d links, want 1", got)
	}
	a.Retain(func(name string, index int) bool { return name == "vf1" && index != 8 })
	if got := a.Remembered(); got != 0 {
		t.Fatalf("after Retain: remembered %d links, want 0", got)
	}
}

func TestApplierDryRunNeverWrites(t *testing.T) {
	fake := NewFakeEthtool()
	fake.Add("vf0", &FakeDevice{Driver: "mlx5_core", Ring: ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 8192, RxPending: 1024, TxPending: 1024}})
	a := &Applier{ET: fake}
	rx, _, changes, err := a.Apply(Link{"vf0", 7, "mlx5_core"}, profile.RingSize{RX: ptr(8192)}, true)
	if err != nil {
		t.Fatal(err)
	}
	if fake.Device("vf0").Sets != 0 {
		t.Fatal("dry run wrote to the device")
	}
	if want := []Change{{"rx-ring", 1024, 8192}}; !reflect.DeepEqual(changes, want) {
		t.Fatalf("changes %v, want %v", changes, want)
	}
	if rx.Desired != 8192 || rx.Current != 1024 {
		t.Fatalf("rx %+v should show the drift", rx)
	}
}

func TestApplierRefusesHvNetvsc(t *testing.T) {
	fake := NewFakeEthtool()
	fake.Add("eth0", &FakeDevice{Driver: "hv_netvsc", Ring: ethtool.Ring{RxMaxPending: 16384, TxMaxPending: 16384, RxPending: 1024, TxPending: 1024}})
	a := &Applier{ET: fake}
	if _, _, _, err := a.Apply(Link{"eth0", 2, "hv_netvsc"}, profile.RingSize{RX: ptr(8192)}, false); err == nil {
		t.Fatal("applied NIC ring numbers to hv_netvsc")
	}
	if fake.Device("eth0").Sets != 0 {
		t.Fatal("wrote to hv_netvsc")
	}
}

func TestApplierReportsSetFailure(t *testing.T) {
	fake := NewFakeEthtool()
	// The device claims max 8192 but refuses anything above 4096 (a firmware limit): the error names it.
	fake.Add("vf0", &FakeDevice{Driver: "mana", Ring: ethtool.Ring{RxMaxPending: 8192, TxMaxPending: 16384, RxPending: 512, TxPending: 256}})
	fake.Device("vf0").Ring.RxMaxPending = 8192
	a := &Applier{ET: &refusingEthtool{fake}}
	_, _, _, err := a.Apply(Link{"vf0", 7, "mana"}, profile.RingSize{RX: ptr(8192)}, false)
	if err == nil {
		t.Fatal("want error")
	}
}

type refusingEthtool struct{ *FakeEthtool }

func (r *refusingEthtool) SetRing(string, ethtool.Ring) (ethtool.Ring, error) {
	return ethtool.Ring{}, os.ErrPermission
}
