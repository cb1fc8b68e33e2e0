package qemu

// The agent's Bottlerocket bootstrap-container mode on a real NIC driver (issue 21). Bottlerocket cannot run a
// boot script, so wirespeed's Bottlerocket user data (the golden render
// tests/golden/userdata/qemu-bootstrap-bottlerocket.toml, from qemu-bootstrap.json beside it; tests/
// test_userdata_bottlerocket.py keeps the two in step) runs the agent image as a bootstrap container. The guest
// gets what Bottlerocket gives that container: the `user-data` setting base64-decoded into
// /.bottlerocket/bootstrap-containers/current/user-data (the bootstrap-containers service writes it there and
// host-ctr bind-mounts the directory: bottlerocket-os/bottlerocket-core-kit, sources/api/bootstrap-containers and
// sources/host-ctr), and the image's entrypoint run with no arguments, as host-ctr runs it (the setting has no
// command field). ethtool -g and the kernel's own MTU (sysfs) are the witnesses; the agent's report is a second
// opinion. The host has no Bottlerocket, containerd or host-ctr: the container runtime is what is left out.

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

const bottlerocketGolden = "../../../tests/golden/userdata/qemu-bootstrap-bottlerocket.toml"

// bootstrapContainer is settings.bootstrap-containers.<name> as Bottlerocket's API models it.
type bootstrapContainer struct {
	Source    string `toml:"source"`
	Mode      string `toml:"mode"`
	Essential bool   `toml:"essential"`
	UserData  string `toml:"user-data"`
}

type bottlerocketSettings struct {
	Settings struct {
		Kubernetes struct {
			NodeLabels map[string]string `toml:"node-labels"`
		} `toml:"kubernetes"`
		Kernel struct {
			Sysctl map[string]string `toml:"sysctl"`
		} `toml:"kernel"`
		BootstrapContainers map[string]bootstrapContainer `toml:"bootstrap-containers"`
	} `toml:"settings"`
}

// bootstrapUserData reads the golden Bottlerocket settings and returns the wirespeed container's decoded
// user-data: the profile the agent applies.
func bootstrapUserData(t *testing.T) []byte {
	t.Helper()
	var s bottlerocketSettings
	meta, err := toml.DecodeFile(bottlerocketGolden, &s)
	if err != nil {
		t.Fatalf("the golden Bottlerocket settings (UPDATE_GOLDEN=1 pytest tests/userdata/test_userdata_bottlerocket.py): %v", err)
	}
	if undecoded := meta.Undecoded(); len(undecoded) > 0 {
		t.Errorf("settings this test does not know (a new setting in the render: model it here): %v", undecoded)
	}
	if got := s.Settings.Kubernetes.NodeLabels["wirespeed.io/profile"]; got != "qemu-bootstrap" {
		t.Errorf("node label wirespeed.io/profile = %q, want qemu-bootstrap (the DaemonSet selects on it)", got)
	}
	c, ok := s.Settings.BootstrapContainers["wirespeed-tuning"]
	if !ok {
		t.Fatalf("%s has no settings.bootstrap-containers.wirespeed-tuning", bottlerocketGolden)
	}
	// mode always: rings and MTU are lost at reboot. essential false: a failure never halts the boot.
	if c.Mode != "always" || c.Essential {
		t.Errorf("bootstrap container mode %q essential %v, want always / false", c.Mode, c.Essential)
	}
	if got := s.Settings.Kernel.Sysctl["net.core.netdev_max_backlog"]; got != "32768" {
		t.Errorf("settings.kernel.sysctl netdev_max_backlog = %q, want 32768 (sysctls stay with Bottlerocket)", got)
	}
	data, err := base64.StdEncoding.DecodeString(c.UserData)
	if err != nil {
		t.Fatalf("bootstrap container user-data is not base64 (Bottlerocket refuses it): %v", err)
	}
	return data
}

const bottlerocketScenario = `
ws_wait e1000e-link 300 ws_has_iface e1000e
ifc=$(ws_ifaces e1000e)
ip link set "$ifc" up
echo "WS link $ifc"
ws_mtu() { echo "WS mtu $1 $(cat /sys/class/net/$ifc/mtu)"; }
ws_mtu defaults
ws_rings defaults "$ifc"
ws_container() { # PHASE ARGS...: the image's entrypoint; its stdout (the status report) as a block, then its exit
	phase=$1; shift
	echo "WS BEGIN report $phase"
	/wirespeed-agent "$@" 2>/tmp/agent-$phase.log
	rc=$?
	echo "WS END"
	echo "WS agent-exit $phase $rc"
	echo "WS BEGIN agent-log $phase"; cat /tmp/agent-$phase.log; echo "WS END"
}
ws_container refused bootstrap --user-data /refused.json
ws_mtu refused
ws_rings refused "$ifc"
ws_container first
ws_mtu first
ws_rings first "$ifc"
ws_container reboot
ws_mtu reboot
ws_rings reboot "$ifc"
`

func TestBottlerocketBootstrapContainerOnE1000e(t *testing.T) {
	if testing.Short() && !inCI() {
		t.Skip("-short: the real-driver QEMU boot takes about 15 s of CPU; CI always runs it")
	}
	requireTool(t, "qemu-system-x86_64", "qemu-system-x86 (bookworm-backports: QEMU >= 8 emulates igb)")
	requireStaticBusybox(t)
	userData := bootstrapUserData(t)
	agent := buildAgent(t)
	// Rings and an MTU the schema refuses (below 1,280): the whole profile is refused, nothing half-applied.
	refused := profileJSON(t, map[string]any{
		"schema_version": 1, "name": "refused", "interfaces": map[string]any{"roles": allRoles},
		"rings": map[string]any{"e1000e": map[string]int{"rx": 4096, "tx": 4096}}, "mtu": map[string]int{"value": 576},
	})
	g := Boot(t, Spec{
		Modules: []string{"e1000e"},
		QEMU:    []string{"-netdev", "user,id=n0,restrict=on", "-device", "e1000e,netdev=n0,romfile="},
		Agent:   agent,
		Files: map[string][]byte{
			".bottlerocket/bootstrap-containers/current/user-data": userData,
			"refused.json": refused,
		},
		Script: bottlerocketScenario,
	})
	g.Expect("boot")
	ifc := g.Expect("link").Fields[0]
	defaults := Rings{MaxRX: 4096, MaxTX: 4096, RX: 256, TX: 256}
	g.Expect("mtu", "defaults", "1500")
	_, r := g.ExpectRings("defaults")
	wantRings(t, "defaults", ifc, r, defaults)

	// A profile the agent refuses: exit 2 before touching anything (essential=false lets the boot go on).
	g.Expect("report", "refused")
	if exit := g.Expect("agent-exit", "refused"); exit.Fields[1] != "2" {
		t.Errorf("refused profile: exit %s, want 2", exit.Fields[1])
	}
	if log := g.Expect("agent-log", "refused").Body; !slices.ContainsFunc(log, func(l string) bool {
		return strings.Contains(l, "profile rejected; nothing applied") && strings.Contains(l, "mtu")
	}) {
		t.Errorf("refused profile: the log does not say it was rejected for its MTU:\n%s", strings.Join(log, "\n"))
	}
	g.Expect("mtu", "refused", "1500")
	_, r = g.ExpectRings("refused")
	wantRings(t, "after the refused profile (nothing applied)", ifc, r, defaults)

	// The entrypoint with no arguments, as host-ctr runs a bootstrap container: the mounted user data applies.
	first := expectAgentRun(t, g, "first")
	if first.Exit != 0 || first.Report.State != status.StateApplied || first.Report.Profile != "qemu-bootstrap" {
		t.Errorf("first: exit %d state %q profile %q (%s), want 0 applied qemu-bootstrap",
			first.Exit, first.Report.State, first.Report.Profile, first.Report.Reason)
	}
	g.Expect("mtu", "first", "8900")
	_, r = g.ExpectRings("first")
	// 8192 asked, max 4096: clamped; TX 1001 rounded up to e1000e's multiple of 8.
	tuned := Rings{MaxRX: 4096, MaxTX: 4096, RX: 4096, TX: 1008}
	wantRings(t, "after the bootstrap container", ifc, r, tuned)
	wantReportRings(t, "first", first.Report, ifc, [2]int{4096, 1008}, r)
	if m := findIface(t, first.Report, ifc).MTU; m == nil || *m != (status.Value{Desired: 8900, Current: 8900}) {
		t.Errorf("first: report MTU %+v, want 8900/8900", m)
	}
	wantChanges := []string{"mtu 1500->8900", "rx-ring 256->4096", "tx-ring 256->1008"}
	got := applied(first.Log, ifc)
	slices.Sort(got)
	if !slices.Equal(got, wantChanges) {
		t.Errorf("first: applied %v, want %v", got, wantChanges)
	}

	// mode always runs it at every boot: on a node already tuned it writes nothing (a resize drops traffic).
	again := expectAgentRun(t, g, "reboot")
	g.Expect("mtu", "reboot", "8900")
	_, r = g.ExpectRings("reboot")
	wantRings(t, "second run", ifc, r, tuned)
	if w := applied(again.Log, ifc); again.Exit != 0 || again.Report.State != status.StateApplied || len(w) != 0 {
		t.Errorf("second run: exit %d state %q applied %v; want 0, applied, no write", again.Exit, again.Report.State, w)
	}
	g.Finish()
}

// TestBottlerocketGoldenCarriesTheProfile needs no guest: the container's user-data is a profile the agent's own
// schema accepts, with the rings and MTU the boot case expects and no sysctls (Bottlerocket sets those).
func TestBottlerocketGoldenCarriesTheProfile(t *testing.T) {
	p, err := profile.Parse(bootstrapUserData(t))
	if err != nil {
		t.Fatalf("the bootstrap container's user-data is not a profile the agent takes: %v", err)
	}
	if ring := p.Rings["e1000e"]; ring.RX == nil || ring.TX == nil || *ring.RX != 8192 || *ring.TX != 1001 {
		t.Errorf("e1000e rings %+v, want rx 8192 tx 1001 (qemu-bootstrap.json)", ring)
	}
	if p.MTU == nil || p.MTU.Value != 8900 || !slices.Equal(p.MTU.Drivers, []string{"e1000e"}) {
		t.Errorf("MTU %+v, want 8900 on e1000e", p.MTU)
	}
	if len(p.Sysctls) != 0 {
		t.Errorf("sysctls %v in the container's user-data; they belong to settings.kernel.sysctl", p.Sysctls)
	}
}
