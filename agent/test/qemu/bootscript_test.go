package qemu

// The EKS boot-time tuning script on real NIC drivers (issue 8, part 1). The script is the committed golden
// render tests/golden/userdata/qemu-real-drivers.sh (rendered by wirespeed.userdata from
// qemu-real-drivers.json beside it; tests/userdata/test_userdata_script.py keeps the two in step), run by busybox sh in
// the guest exactly as cloud-init runs the text/x-shellscript part on an AL2023 node. ethtool -g, not the
// script's own log, is the witness of the ring sizes.

import (
	"os"
	"slices"
	"strings"
	"testing"
)

const bootScriptGolden = "../../../tests/golden/userdata/qemu-real-drivers.sh"

const bootScriptScenario = `
ws_wait e1000e-link 300 ws_has_iface e1000e
ws_wait igb-link 300 ws_has_iface igb
e=$(ws_ifaces e1000e)
pf=$(ws_ifaces igb)
echo 2 >/sys/class/net/$pf/device/sriov_numvfs
ws_wait vfs 600 ws_iface_count_is igbvf 2
vfs=$(ws_ifaces igbvf | tr '\n' ' ')
for i in $e $pf $vfs; do ip link set "$i" up; done
echo "WS links $e $pf $vfs"
echo "WS sysctl before $(cat /proc/sys/net/core/netdev_max_backlog)"
ws_boot() { # PHASE [PATH]: run the boot script as cloud-init would, its stdout as a block, then its exit code
	echo "WS BEGIN bootscript $1"
	PATH=${2:-$PATH} sh /bootscript.sh 2>&1
	rc=$?
	echo "WS END"
	echo "WS bootscript-exit $1 $rc"
}
ws_boot first
echo "WS sysctl after $(cat /proc/sys/net/core/netdev_max_backlog)"
for i in $e $pf $vfs; do ws_rings after "$i"; done
ws_boot second
for i in $e $pf $vfs; do ws_rings again "$i"; done
echo 2 >/proc/sys/net/core/netdev_max_backlog
ws_boot no-ethtool /bin
`

// expectBootScript reads one run's log block and its exit code; the script must always exit 0.
func expectBootScript(t *testing.T, g *Guest, phase string) []string {
	t.Helper()
	body := g.Expect("bootscript", phase).Body
	if exit := g.Expect("bootscript-exit", phase); exit.Fields[1] != "0" {
		t.Errorf("%s: boot script exited %s, want 0 (it must never fail the boot)", phase, exit.Fields[1])
	}
	var out []string
	for _, l := range body {
		out = append(out, strings.TrimPrefix(l, "wirespeed-tuning: "))
	}
	return out
}

func wantLines(t *testing.T, phase string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: boot script log lacks %q; it said:\n%s", phase, w, strings.Join(got, "\n"))
		}
	}
}

func TestBootScriptOnRealDrivers(t *testing.T) {
	if testing.Short() && !inCI() {
		t.Skip("-short: the real-driver QEMU boot takes about 20 s of CPU; CI always runs it")
	}
	script, err := os.ReadFile(bootScriptGolden)
	if err != nil {
		t.Fatalf("the golden boot script (render it: UPDATE_GOLDEN=1 pytest tests/userdata/test_userdata_script.py): %v", err)
	}
	g := Boot(t, Spec{
		Modules: []string{"e1000e", "igb", "igbvf"},
		QEMU: []string{
			"-netdev", "user,id=n0,restrict=on", "-device", "e1000e,netdev=n0,romfile=",
			"-device", "pcie-root-port,id=rp0,chassis=1,slot=1",
			"-netdev", "user,id=n1,restrict=on", "-device", "igb,netdev=n1,bus=rp0,romfile=",
		},
		Files:  map[string][]byte{"bootscript.sh": script},
		Script: bootScriptScenario,
	})
	g.Expect("boot")
	links := g.Expect("links").Fields
	if len(links) != 4 {
		t.Fatalf("want e1000e, igb PF and 2 VFs, guest has %v", links)
	}
	e, pf, vfs := links[0], links[1], links[2:]
	g.Expect("sysctl", "before", "1000")

	first := expectBootScript(t, g, "first")
	wantLines(t, "first", first,
		"applying profile qemu-real-drivers",
		"sysctl net.core.netdev_max_backlog: 1000 -> 32768",
		"sysctl: wrote /etc/sysctl.d/99-wirespeed-tuning.conf",
		// 8192 asked, the device max is 4096: clamped.
		e+" (e1000e): rx ring 256 -> 4096 (asked 4096, max 4096)",
		e+" (e1000e): tx ring 256 -> 2048 (asked 2048, max 4096)",
		// The profile has no igb entry: the PF is left alone.
		pf+" (igb): no ring sizes for this driver in the profile, left alone",
		"lo: skipped, name matches an exclude glob",
		"done",
	)
	for _, vf := range vfs {
		// igbvf starts at 1024 (igbvf_probe); TX 1001 is rounded to the driver's multiple of 8 before writing.
		wantLines(t, "first", first,
			vf+" (igbvf): rx ring 1024 -> 4096 (asked 4096, max 4096)",
			vf+" (igbvf): tx ring 1024 -> 1008 (asked 1008, max 4096)")
	}
	g.Expect("sysctl", "after", "32768")
	want := map[string]Rings{
		e:  {MaxRX: 4096, MaxTX: 4096, RX: 4096, TX: 2048},
		pf: {MaxRX: 4096, MaxTX: 4096, RX: 256, TX: 256},
	}
	for _, vf := range vfs {
		want[vf] = Rings{MaxRX: 4096, MaxTX: 4096, RX: 4096, TX: 1008}
	}
	for range links {
		iface, r := g.ExpectRings("after")
		wantRings(t, "after the boot script", iface, r, want[iface])
	}

	second := expectBootScript(t, g, "second")
	wantLines(t, "second (idempotent)", second,
		"sysctl net.core.netdev_max_backlog: already 32768",
		"sysctl: /etc/sysctl.d/99-wirespeed-tuning.conf already up to date",
		e+" (e1000e): rings already rx 4096 tx 2048 (max rx 4096 tx 4096)")
	for _, vf := range vfs {
		wantLines(t, "second (idempotent)", second, vf+" (igbvf): rings already rx 4096 tx 1008 (max rx 4096 tx 4096)")
	}
	for _, l := range second {
		if strings.Contains(l, "->") {
			t.Errorf("second run changed something: %q", l)
		}
	}
	for range links {
		iface, r := g.ExpectRings("again")
		wantRings(t, "after the second run", iface, r, want[iface])
	}

	// PATH without /sbin: no ethtool. Sysctls still apply, rings are left to the agent, the boot goes on.
	noEthtool := expectBootScript(t, g, "no-ethtool")
	wantLines(t, "no-ethtool", noEthtool,
		"sysctl net.core.netdev_max_backlog: 2 -> 32768",
		e+" (e1000e): ethtool not found, rings left to the node agent",
		"done")
	g.Finish()
}
