package qemu

// Real-driver proof for the agent (issue 3, part 8): each case boots Debian's generic kernel under QEMU
// (TCG) with an emulated NIC, runs the static wirespeed-agent in the guest, and checks the ring sizes
// with the real ethtool binary (the agent's own report is only a second opinion). Facts each case rests
// on, measured on linux-image-6.1.0-50-amd64 + QEMU 10.0 and cited from the kernel source:
//
//   - e1000e: default 256/256, max 4096/4096; e1000e_set_ringparam clamps, then ALIGNs up to a multiple of 8
//     (drivers/net/ethernet/intel/e1000e/ethtool.c, REQ_RX/TX_DESCRIPTORS_MULTIPLE), so 1001 becomes 1008.
//   - virtio-net-pci: the device's rx_queue_size/tx_queue_size are both the max and the default (the driver
//     starts at the full size); QEMU caps tx_queue_size at 256 for non-vhost-user backends
//     (hw/net/virtio-net.c). Resizing needs VIRTIO_F_RING_RESET: QEMU 7.2+ offers it (queue_reset, default
//     on) and Linux 6.0+ uses it (virtnet_set_ringparam -> virtqueue_resize). With queue_reset=off the
//     resize fails with ENOENT; a length that is not a power of two fails with ENOMEM (split rings must be
//     a power of two, drivers/virtio/virtio_ring.c), so the agent must round before writing.
//   - igbvf: max 4096/4096 but probe sets 1024/1024 (igbvf_probe "ring size defaults", netdev.c), not the
//     IGBVF_DEFAULT_RXD/TXD 256 of igbvf.h; a recreated VF comes back at 1024.
//   - igb PF: default 256/256, max 4096/4096 (igb.h IGB_DEFAULT_RXD/TXD, IGB_MAX_RXD/TXD).

import (
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// buildAgent compiles the agent as a static binary: the guest has no libc.
func buildAgent(t *testing.T) string {
	t.Helper()
	requireTool(t, "go", "golang (Go toolchain)")
	bin := filepath.Join(t.TempDir(), "wirespeed-agent")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/wirespeed-agent")
	cmd.Dir = "../.." // the agent module root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/wirespeed-agent: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Section(".interp") != nil {
		t.Fatalf("%s is dynamically linked; the guest needs a static binary (CGO_ENABLED=0)", bin)
	}
	return bin
}

// profileJSON renders a profile document (the contract in components/wirespeed/data/profile.schema.json).
func profileJSON(t *testing.T, p map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// allRoles selects a link whatever role the agent gives it; scenarios that are about roles narrow it.
var allRoles = []string{"sriov-vf", "primary", "virtual"}

func ringProfile(name string, roles []string, drivers []string, rings map[string][2]int) map[string]any {
	r := map[string]any{}
	for drv, rxtx := range rings {
		r[drv] = map[string]int{"rx": rxtx[0], "tx": rxtx[1]}
	}
	sel := map[string]any{"roles": roles}
	if len(drivers) > 0 {
		sel["drivers"] = drivers
	}
	return map[string]any{
		"schema_version": 1,
		"name":           name,
		"description":    "real-driver QEMU test profile",
		"interfaces":     sel,
		"rings":          r,
	}
}

// AgentRun is one `--once` run of the agent in the guest.
type AgentRun struct {
	Report status.Report
	Exit   int
	Log    []map[string]any // slog JSON records from stderr
}

// expectAgentRun reads the report block, exit code and log block ws_agent prints for phase.
func expectAgentRun(t *testing.T, g *Guest, phase string) AgentRun {
	t.Helper()
	var run AgentRun
	rep := g.Expect("report", phase)
	if err := json.Unmarshal([]byte(strings.Join(rep.Body, "\n")), &run.Report); err != nil {
		t.Fatalf("phase %s: agent stdout is not a status.Report: %v\n%s", phase, err, strings.Join(rep.Body, "\n"))
	}
	exit := g.Expect("agent-exit", phase)
	n, err := strconv.Atoi(exit.Fields[1])
	if err != nil {
		t.Fatalf("phase %s: exit code %q", phase, exit.Fields[1])
	}
	run.Exit = n
	run.Log = parseAgentLog(t, g.Expect("agent-log", phase).Body)
	return run
}

func parseAgentLog(t *testing.T, lines []string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("agent log line is not slog JSON (the CLI contract): %q", l)
			continue
		}
		recs = append(recs, rec)
	}
	return recs
}

// applied returns the "applied" log records for link, as "setting from->to" strings.
func applied(log []map[string]any, link string) []string {
	var out []string
	for _, r := range log {
		if r["msg"] == "applied" && r["link"] == link {
			out = append(out, fmt.Sprintf("%v %v->%v", r["setting"], r["from"], r["to"]))
		}
	}
	return out
}

func findIface(t *testing.T, r status.Report, name string) status.Interface {
	t.Helper()
	for _, i := range r.Interfaces {
		if i.Name == name {
			return i
		}
	}
	t.Fatalf("report has no interface %s: %+v", name, r.Interfaces)
	return status.Interface{}
}

func wantRings(t *testing.T, phase, iface string, got, want Rings) {
	t.Helper()
	if got != want {
		t.Errorf("%s: ethtool -g %s = %+v, want %+v", phase, iface, got, want)
	}
}

// wantReportRings checks the agent's own view of one link against what ethtool showed.
func wantReportRings(t *testing.T, phase string, r status.Report, iface string, desired [2]int, eth Rings) {
	t.Helper()
	i := findIface(t, r, iface)
	if !i.Selected {
		t.Errorf("%s: %s not selected: %s", phase, iface, i.Reason)
		return
	}
	wantRX := status.Ring{Desired: desired[0], Current: eth.RX, Max: eth.MaxRX}
	wantTX := status.Ring{Desired: desired[1], Current: eth.TX, Max: eth.MaxTX}
	if i.RX == nil || *i.RX != wantRX {
		t.Errorf("%s: report %s rx = %+v, want %+v (ethtool: %+v)", phase, iface, i.RX, wantRX, eth)
	}
	if i.TX == nil || *i.TX != wantTX {
		t.Errorf("%s: report %s tx = %+v, want %+v (ethtool: %+v)", phase, iface, i.TX, wantTX, eth)
	}
}

func TestRealNICDrivers(t *testing.T) {
	if testing.Short() && !inCI() {
		t.Skip("-short: the real-driver QEMU boots take about 90 s of CPU; CI always runs them")
	}
	// Prerequisites first: locally a missing QEMU skips before the agent build, in CI it fails.
	requireTool(t, "qemu-system-x86_64", "qemu-system-x86 (bookworm-backports: QEMU >= 8 emulates igb)")
	requireStaticBusybox(t)
	agent := buildAgent(t)
	tests := []struct {
		name string
		run  func(t *testing.T, agent string)
	}{
		{"e1000e clamps to the device max and keeps the driver's multiple of 8", testE1000eRings},
		{"virtio-net rx_queue_size=1024 clamps RX to 1024 and TX to 256, rounds to a power of two", testVirtioRings},
		{"e1000e PCI hot-unplug and re-add via QMP is re-tuned by the running agent", testHotplug},
		{"igb SR-IOV VFs recreated through sriov_numvfs are re-tuned by the running agent", testSRIOV},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, agent) })
	}
}

func testE1000eRings(t *testing.T, agent string) {
	g := Boot(t, Spec{
		Modules: []string{"e1000e"},
		QEMU:    []string{"-netdev", "user,id=n0,restrict=on", "-device", "e1000e,netdev=n0,romfile="},
		Agent:   agent,
		Files: map[string][]byte{
			"clamp.json": profileJSON(t, ringProfile("e1000e-clamp", allRoles, []string{"e1000e"}, map[string][2]int{"e1000e": {8192, 8192}})),
			"align.json": profileJSON(t, ringProfile("e1000e-align", allRoles, []string{"e1000e"}, map[string][2]int{"e1000e": {1000, 1001}})),
		},
		Script: `
ws_wait e1000e-link 300 ws_has_iface e1000e
ifc=$(ws_ifaces e1000e)
ip link set "$ifc" up
ws_rings defaults "$ifc"
ws_agent dry-run /clamp.json --once --dry-run
ws_rings after-dry-run "$ifc"
ws_agent clamp /clamp.json --once
ws_rings clamped "$ifc"
ws_agent align /align.json --once
ws_rings aligned "$ifc"
ws_agent align-again /align.json --once
ws_rings aligned-again "$ifc"
`,
	})
	g.Expect("boot")
	ifc, r := g.ExpectRings("defaults")
	wantRings(t, "defaults", ifc, r, Rings{MaxRX: 4096, MaxTX: 4096, RX: 256, TX: 256})

	dry := expectAgentRun(t, g, "dry-run")
	if dry.Report.State != status.StateDryRun || !dry.Report.Drifted() {
		t.Errorf("dry-run: state %q drifted=%v, want %q with drift", dry.Report.State, dry.Report.Drifted(), status.StateDryRun)
	}
	wantReportRings(t, "dry-run", dry.Report, ifc, [2]int{4096, 4096}, r)
	_, r = g.ExpectRings("after-dry-run")
	wantRings(t, "after-dry-run (nothing written)", ifc, r, Rings{MaxRX: 4096, MaxTX: 4096, RX: 256, TX: 256})

	clamp := expectAgentRun(t, g, "clamp")
	_, r = g.ExpectRings("clamped")
	wantRings(t, "clamped (8192 asked)", ifc, r, Rings{MaxRX: 4096, MaxTX: 4096, RX: 4096, TX: 4096})
	if clamp.Exit != 0 || clamp.Report.State != status.StateApplied {
		t.Errorf("clamp: exit %d state %q (%s), want 0 applied", clamp.Exit, clamp.Report.State, clamp.Report.Reason)
	}
	wantReportRings(t, "clamp", clamp.Report, ifc, [2]int{4096, 4096}, r)

	align := expectAgentRun(t, g, "align")
	_, r = g.ExpectRings("aligned")
	wantRings(t, "aligned (1000/1001 asked)", ifc, r, Rings{MaxRX: 4096, MaxTX: 4096, RX: 1000, TX: 1008})
	if align.Exit != 0 || align.Report.State != status.StateApplied {
		t.Errorf("align: exit %d state %q (%s), want 0 applied", align.Exit, align.Report.State, align.Report.Reason)
	}
	wantReportRings(t, "align", align.Report, ifc, [2]int{1000, 1008}, r)

	again := expectAgentRun(t, g, "align-again")
	_, r = g.ExpectRings("aligned-again")
	wantRings(t, "aligned-again", ifc, r, Rings{MaxRX: 4096, MaxTX: 4096, RX: 1000, TX: 1008})
	if w := applied(again.Log, ifc); len(w) != 0 || again.Exit != 0 {
		t.Errorf("second run of the same profile: exit %d, applied %v; want exit 0 and no write (a resize interrupts traffic)", again.Exit, w)
	}
	g.Finish()
}

func testVirtioRings(t *testing.T, agent string) {
	only := func(name, ifc string, rx, tx int) []byte {
		p := ringProfile(name, allRoles, []string{"virtio_net"}, map[string][2]int{"virtio_net": {rx, tx}})
		p["interfaces"].(map[string]any)["include"] = []string{ifc}
		return profileJSON(t, p)
	}
	g := Boot(t, Spec{
		Modules: []string{"virtio_pci", "virtio_net"},
		// Fixed PCI slots make probe order, hence eth0/eth1, deterministic; the guest double-checks.
		QEMU: []string{
			"-netdev", "user,id=n0,restrict=on", "-device", "virtio-net-pci,netdev=n0,addr=0x3,rx_queue_size=1024,queue_reset=on,romfile=",
			"-netdev", "user,id=n1,restrict=on", "-device", "virtio-net-pci,netdev=n1,addr=0x4,rx_queue_size=1024,queue_reset=off,romfile=",
		},
		Agent: agent,
		Files: map[string][]byte{
			"shrink.json":   only("virtio-shrink", "eth0", 512, 128),
			"clamp.json":    only("virtio-clamp", "eth0", 8192, 8192),
			"round.json":    only("virtio-round", "eth0", 300, 100),
			"no-reset.json": only("virtio-no-reset", "eth1", 512, 128),
		},
		Script: `
ws_wait virtio-links 300 ws_iface_count_is virtio_net 2
for i in eth0 eth1; do echo "WS nic $i $(basename $(readlink -f /sys/class/net/$i/device/..))"; ip link set $i up; done
ws_rings defaults eth0
ws_agent shrink /shrink.json --once
ws_rings shrunk eth0
ws_agent clamp /clamp.json --once
ws_rings clamped eth0
ws_agent round /round.json --once
ws_rings rounded eth0
ws_agent no-reset /no-reset.json --once
ws_rings no-reset eth1
`,
	})
	g.Expect("boot")
	g.Expect("nic", "eth0", "0000:00:03.0")
	g.Expect("nic", "eth1", "0000:00:04.0")
	_, r := g.ExpectRings("defaults")
	wantRings(t, "defaults (the device's queue sizes)", "eth0", r, Rings{MaxRX: 1024, MaxTX: 256, RX: 1024, TX: 256})

	steps := []struct {
		phase   string
		desired [2]int
		want    Rings
	}{
		{"shrink", [2]int{512, 128}, Rings{MaxRX: 1024, MaxTX: 256, RX: 512, TX: 128}},
		{"clamp", [2]int{1024, 256}, Rings{MaxRX: 1024, MaxTX: 256, RX: 1024, TX: 256}},
		{"round", [2]int{512, 128}, Rings{MaxRX: 1024, MaxTX: 256, RX: 512, TX: 128}},
	}
	ringPhase := map[string]string{"shrink": "shrunk", "clamp": "clamped", "round": "rounded"}
	for _, s := range steps {
		run := expectAgentRun(t, g, s.phase)
		_, r := g.ExpectRings(ringPhase[s.phase])
		wantRings(t, s.phase, "eth0", r, s.want)
		if run.Exit != 0 || run.Report.State != status.StateApplied {
			t.Errorf("%s: exit %d state %q (%s), want 0 applied", s.phase, run.Exit, run.Report.State, run.Report.Reason)
		}
		wantReportRings(t, s.phase, run.Report, "eth0", s.desired, r)
	}

	// Without VIRTIO_F_RING_RESET the kernel cannot resize: the agent must say so, not pretend.
	noReset := expectAgentRun(t, g, "no-reset")
	_, r = g.ExpectRings("no-reset")
	wantRings(t, "no-reset (unchanged)", "eth1", r, Rings{MaxRX: 1024, MaxTX: 256, RX: 1024, TX: 256})
	if noReset.Exit != 1 || noReset.Report.State != status.StateDegraded {
		t.Errorf("no-reset: exit %d state %q, want 1 %q", noReset.Exit, noReset.Report.State, status.StateDegraded)
	}
	if i := findIface(t, noReset.Report, "eth1"); i.Error == "" {
		t.Errorf("no-reset: report for eth1 carries no error: %+v", i)
	}
	g.Finish()
}

// hotplugScript freezes the running agent (SIGSTOP) around the re-add so ethtool can read the re-added
// NIC's rings before the agent acts: that is the proof it came back at driver defaults. The same process
// is then continued, never restarted, and must re-tune from the queued netlink link events.
const hotplugScript = `
ws_wait e1000e-link 300 ws_has_iface e1000e
ifc=$(ws_ifaces e1000e)
ip link set "$ifc" up
ws_rings defaults "$ifc"
ws_agent_start /profile.json
ws_wait tuned 600 ws_rings_are "$ifc" 4096 2048
ws_rings tuned "$ifc"
kill -STOP "$agent_pid"
echo "WS unplug-ready $ifc $(cat /sys/class/net/$ifc/ifindex)"
ws_wait unplugged 600 ws_no_iface e1000e
echo "WS unplugged"
ws_wait re-added 600 ws_has_iface e1000e
ifc=$(ws_ifaces e1000e)
echo "WS re-added $ifc $(cat /sys/class/net/$ifc/ifindex)"
ip link set "$ifc" up
ws_rings re-added "$ifc"
kill -CONT "$agent_pid"
ws_wait re-tuned 600 ws_rings_are "$ifc" 4096 2048
ws_rings re-tuned "$ifc"
ws_metrics re-tuned "$ifc" 4096 2048
ws_agent_alive
ws_agent second-opinion /profile.json --once --dry-run
ws_agent_stop
`

func testHotplug(t *testing.T, agent string) {
	nic := map[string]any{"driver": "e1000e", "id": "nic0", "netdev": "n0", "bus": "rp0", "romfile": ""}
	g := Boot(t, Spec{
		Modules: []string{"e1000e"},
		QEMU: []string{
			// ACPI PCI hot-plug on q35 (QEMU's default since 6.1, stated so a default change cannot
			// silently switch to native PCIe hot-plug and its 5 s attention-button delay).
			"-global", "ICH9-LPC.acpi-pci-hotplug-with-bridge-support=on",
			"-device", "pcie-root-port,id=rp0,chassis=1,slot=1",
			"-netdev", "user,id=n0,restrict=on",
			"-device", "e1000e,id=nic0,netdev=n0,bus=rp0,romfile=",
		},
		Agent: agent,
		Files: map[string][]byte{
			"profile.json": profileJSON(t, ringProfile("hotplug", allRoles, []string{"e1000e"}, map[string][2]int{"e1000e": {8192, 2048}})),
		},
		Script: hotplugScript,
	})
	g.Expect("boot")
	ifc, r := g.ExpectRings("defaults")
	wantRings(t, "defaults", ifc, r, Rings{MaxRX: 4096, MaxTX: 4096, RX: 256, TX: 256})
	g.Expect("agent-started")
	_, r = g.ExpectRings("tuned")
	wantRings(t, "tuned by the running agent", ifc, r, Rings{MaxRX: 4096, MaxTX: 4096, RX: 4096, TX: 2048})

	ready := g.Expect("unplug-ready")
	oldIndex := ready.Fields[1]
	q := g.QMP()
	if _, err := q.Execute("device_del", map[string]any{"id": "nic0"}); err != nil {
		t.Fatal(err)
	}
	g.Expect("unplugged")
	// QEMU frees the id only when the guest has ejected the device; device_add before that fails.
	ctx, cancel := context.WithTimeout(context.Background(), phaseTimeout)
	defer cancel()
	if _, err := q.WaitEvent(ctx, "DEVICE_DELETED", map[string]string{"device": "nic0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Execute("device_add", nic); err != nil {
		t.Fatal(err)
	}
	back := g.Expect("re-added")
	newIfc, newIndex := back.Fields[0], back.Fields[1]
	if newIndex == oldIndex {
		t.Errorf("re-added NIC kept ifindex %s: not a new device", newIndex)
	}
	_, r = g.ExpectRings("re-added")
	wantRings(t, "re-added (driver defaults, agent frozen)", newIfc, r, Rings{MaxRX: 4096, MaxTX: 4096, RX: 256, TX: 256})
	_, r = g.ExpectRings("re-tuned")
	wantRings(t, "re-tuned by the same agent process", newIfc, r, Rings{MaxRX: 4096, MaxTX: 4096, RX: 4096, TX: 2048})
	metrics := wantRingMetrics(t, g, "re-tuned", newIfc, "", Rings{MaxRX: 4096, MaxTX: 4096, RX: 4096, TX: 2048}, [2]int{4096, 2048})
	wantLinkEvents(t, metrics, "re-tuned", 1, 1)
	// The curated e1000e counters (nic_drivers.json) come through the real ETHTOOL_GSTATS ioctl (issue 11).
	for _, c := range []string{"rx_no_buffer_count", "rx_missed_errors"} {
		match := map[string]string{"interface": newIfc, "driver": "e1000e", "counter": c, "cause": "rx_ring_overflow"}
		if _, ok := sample(metrics, "wirespeed_agent_nic_driver_counter_total", match); !ok {
			t.Errorf("re-tuned: wirespeed_agent_nic_driver_counter_total%v missing", match)
		}
	}
	g.Expect("agent-alive")

	second := expectAgentRun(t, g, "second-opinion")
	if second.Report.Drifted() {
		t.Errorf("dry-run after re-tune reports drift: %+v", second.Report)
	}
	wantReportRings(t, "second-opinion", second.Report, newIfc, [2]int{4096, 2048}, r)

	g.Expect("agent-exit", "daemon", "0")
	daemonLog := parseAgentLog(t, g.Expect("agent-log", "daemon").Body)
	// The agent's own account must match what ethtool saw: from the driver default to the profile.
	want := []string{"rx-ring 256->4096", "tx-ring 256->2048"}
	if got := applied(daemonLog, newIfc); len(got) != 4 || !sameSet(got, want) {
		t.Errorf("daemon log for %s: applied %v, want exactly %v (twice: the first tune and the re-tune)", newIfc, got, want)
	}
	g.Finish()
}

const sriovScript = `
vf_indexes() { for v in $(ws_ifaces igbvf); do cat /sys/class/net/$v/ifindex; done | tr '\n' ' '; }
ws_wait igb-link 300 ws_has_iface igb
pf=$(ws_ifaces igb)
ip link set "$pf" up
echo "WS pf $pf $(cat /sys/class/net/$pf/device/sriov_totalvfs)"
ws_rings pf-defaults "$pf"
echo 2 >/sys/class/net/$pf/device/sriov_numvfs
ws_wait vfs 600 ws_iface_count_is igbvf 2
for v in $(ws_ifaces igbvf); do ip link set "$v" up; ws_rings vf-defaults "$v"; done
ws_agent_start /profile.json
for v in $(ws_ifaces igbvf); do ws_wait "tuned-$v" 600 ws_rings_are "$v" 4096 2048; ws_rings vf-tuned "$v"; done
for cycle in 1 2; do
	# Cycle 1 freezes the agent to prove the VFs come back at defaults; cycle 2 lets it race, as in Azure.
	[ $cycle = 1 ] && kill -STOP "$agent_pid"
	echo "WS vf-indexes $cycle $(vf_indexes)"
	echo 0 >/sys/class/net/$pf/device/sriov_numvfs
	ws_wait vfs-gone 600 ws_no_iface igbvf
	echo 2 >/sys/class/net/$pf/device/sriov_numvfs
	ws_wait vfs-back 600 ws_iface_count_is igbvf 2
	echo "WS vf-indexes-new $cycle $(vf_indexes)"
	for v in $(ws_ifaces igbvf); do ip link set "$v" up; done
	if [ $cycle = 1 ]; then
		for v in $(ws_ifaces igbvf); do ws_rings vf-recreated "$v"; done
		kill -CONT "$agent_pid"
	fi
	for v in $(ws_ifaces igbvf); do ws_wait "re-tuned-$v" 600 ws_rings_are "$v" 4096 2048; ws_rings "vf-re-tuned-$cycle" "$v"; done
done
for v in $(ws_ifaces igbvf); do ws_metrics "final-$v" "$v" 4096 2048; done
ws_rings pf-after "$pf"
ws_agent_alive
ws_agent second-opinion /profile.json --once --dry-run
ws_agent_stop
`

func testSRIOV(t *testing.T, agent string) {
	// Roles narrow to sriov-vf: the igb entry must not touch the PF, which proves role selection.
	profile := ringProfile("sriov", []string{"sriov-vf"}, nil, map[string][2]int{"igbvf": {8192, 2048}, "igb": {512, 512}})
	g := Boot(t, Spec{
		Modules: []string{"igb", "igbvf"},
		QEMU: []string{
			"-device", "pcie-root-port,id=rp0,chassis=1,slot=1",
			"-netdev", "user,id=n0,restrict=on",
			"-device", "igb,netdev=n0,bus=rp0,romfile=",
		},
		Agent:  agent,
		Files:  map[string][]byte{"profile.json": profileJSON(t, profile)},
		Script: sriovScript,
	})
	g.Expect("boot")
	pfMsg := g.Expect("pf")
	pf := pfMsg.Fields[0]
	if pfMsg.Fields[1] != "7" {
		t.Errorf("igb sriov_totalvfs = %s, want 7 (QEMU igb emulates an 82576 with 7 VFs)", pfMsg.Fields[1])
	}
	_, r := g.ExpectRings("pf-defaults")
	pfDefaults := Rings{MaxRX: 4096, MaxTX: 4096, RX: 256, TX: 256}
	wantRings(t, "pf-defaults", pf, r, pfDefaults)
	vfDefaults := Rings{MaxRX: 4096, MaxTX: 4096, RX: 1024, TX: 1024}
	tuned := Rings{MaxRX: 4096, MaxTX: 4096, RX: 4096, TX: 2048}
	var vfs []string
	for i := 0; i < 2; i++ {
		vf, r := g.ExpectRings("vf-defaults")
		vfs = append(vfs, vf)
		wantRings(t, "vf-defaults", vf, r, vfDefaults)
	}
	g.Expect("agent-started")
	for i := 0; i < 2; i++ {
		vf, r := g.ExpectRings("vf-tuned")
		wantRings(t, "vf-tuned", vf, r, tuned)
	}
	for cycle := 1; cycle <= 2; cycle++ {
		c := strconv.Itoa(cycle)
		old := g.Expect("vf-indexes", c).Fields[1:]
		recreated := g.Expect("vf-indexes-new", c).Fields[1:]
		for _, idx := range recreated {
			for _, o := range old {
				if idx == o {
					t.Errorf("cycle %d: VF ifindex %s survived sriov_numvfs 0 -> 2: not recreated", cycle, idx)
				}
			}
		}
		if cycle == 1 {
			for i := 0; i < 2; i++ {
				vf, r := g.ExpectRings("vf-recreated")
				wantRings(t, "vf-recreated (driver defaults, agent frozen)", vf, r, vfDefaults)
			}
		}
		for i := 0; i < 2; i++ {
			vf, r := g.ExpectRings("vf-re-tuned-" + c)
			wantRings(t, "vf-re-tuned cycle "+c, vf, r, tuned)
		}
	}
	for _, vf := range vfs {
		metrics := wantRingMetrics(t, g, "final-"+vf, vf, "sriov-vf", tuned, [2]int{4096, 2048})
		wantLinkEvents(t, metrics, "final-"+vf, 4, 4) // 2 VFs removed and re-added, twice
		// igbvf has no drop counter of its own (nic_drivers.json notes), so none is exported for a VF.
		if v, ok := sample(metrics, "wirespeed_agent_nic_driver_counter_total", map[string]string{"interface": vf}); ok {
			t.Errorf("final-%s: a driver counter (%v) exported for an igbvf VF, which has none curated", vf, v)
		}
	}
	_, r = g.ExpectRings("pf-after")
	wantRings(t, "pf-after (role primary, not selected)", pf, r, pfDefaults)
	g.Expect("agent-alive")

	second := expectAgentRun(t, g, "second-opinion")
	for _, vf := range vfs {
		i := findIface(t, second.Report, vf)
		if i.Role != "sriov-vf" || i.Driver != "igbvf" {
			t.Errorf("second-opinion: %s role %q driver %q, want sriov-vf igbvf", vf, i.Role, i.Driver)
		}
		wantReportRings(t, "second-opinion", second.Report, vf, [2]int{4096, 2048}, tuned)
	}
	if i := findIface(t, second.Report, pf); i.Selected || i.Role == "sriov-vf" {
		t.Errorf("second-opinion: PF %s selected=%v role %q; the profile selects only sriov-vf", pf, i.Selected, i.Role)
	}
	if second.Report.Drifted() {
		t.Errorf("dry-run after re-tune reports drift: %+v", second.Report)
	}
	g.Expect("agent-exit", "daemon", "0")
	daemonLog := parseAgentLog(t, g.Expect("agent-log", "daemon").Body)
	for _, vf := range vfs {
		// Initial tune plus two recreations, each from the igbvf probe default.
		want := []string{"rx-ring 1024->4096", "tx-ring 1024->2048"}
		got := applied(daemonLog, vf)
		if len(got) != 6 || !sameSet(got, want) {
			t.Errorf("daemon log for %s: applied %v, want %v three times", vf, got, want)
		}
	}
	g.Finish()
}

// metricLine is one sample of the Prometheus text format: name{label="value",...} number.
var metricLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
var metricLabel = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// sample finds the value of metric name whose labels include every pair in match.
func sample(lines []string, name string, match map[string]string) (float64, bool) {
	for _, l := range lines {
		m := metricLine.FindStringSubmatch(l)
		if m == nil || m[1] != name {
			continue
		}
		labels := map[string]string{}
		for _, kv := range metricLabel.FindAllStringSubmatch(m[2], -1) {
			labels[kv[1]] = kv[2]
		}
		ok := true
		for k, v := range match {
			if labels[k] != v {
				ok = false
			}
		}
		if ok {
			v, err := strconv.ParseFloat(m[3], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// wantLinkEvents checks the running agent counted at least the link adds and removals the scenario caused
// (at least: a re-listed link may count again after a netlink error).
func wantLinkEvents(t *testing.T, lines []string, phase string, added, removed int) {
	t.Helper()
	for kind, want := range map[string]int{"added": added, "removed": removed} {
		if got, ok := sample(lines, "wirespeed_agent_link_events_total", map[string]string{"kind": kind}); !ok || got < float64(want) {
			t.Errorf("%s: wirespeed_agent_link_events_total{kind=%q} = %v (present %v), want >= %d", phase, kind, got, ok, want)
		}
	}
}

// wantRingMetrics checks what the running agent exports for iface against what ethtool showed: the issue's
// "metrics say exactly what it applied". role "" leaves the role label unchecked.
func wantRingMetrics(t *testing.T, g *Guest, phase, iface, role string, eth Rings, desired [2]int) []string {
	t.Helper()
	lines := g.Expect("metrics", phase).Body
	for _, d := range []struct {
		dir                   string
		desired, current, max int
	}{{"rx", desired[0], eth.RX, eth.MaxRX}, {"tx", desired[1], eth.TX, eth.MaxTX}} {
		labels := map[string]string{"interface": iface, "direction": d.dir}
		if role != "" {
			labels["role"] = role
		}
		for name, want := range map[string]int{
			"wirespeed_agent_ring_desired_entries": d.desired,
			"wirespeed_agent_ring_current_entries": d.current,
			"wirespeed_agent_ring_max_entries":     d.max,
		} {
			if got, ok := sample(lines, name, labels); !ok || got != float64(want) {
				t.Errorf("%s: %s%v = %v (present %v), want %d", phase, name, labels, got, ok, want)
			}
		}
	}
	for _, name := range []string{"wirespeed_agent_drift", "wirespeed_agent_degraded"} {
		if got, ok := sample(lines, name, nil); !ok || got != 0 {
			t.Errorf("%s: %s = %v (present %v), want 0", phase, name, got, ok)
		}
	}
	if h := g.Expect("healthz", phase); h.Fields[1] != "ok" {
		t.Errorf("%s: /healthz %s, want ok", phase, h.Fields[1])
	}
	return lines
}

// sameSet reports whether got is non-empty and holds only values from want, and every want value.
func sameSet(got, want []string) bool {
	seen := map[string]bool{}
	for _, g := range got {
		seen[g] = true
	}
	if len(seen) != len(want) {
		return false
	}
	for _, w := range want {
		if !seen[w] {
			return false
		}
	}
	return true
}
