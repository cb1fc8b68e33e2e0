package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// veth has no rings (ETHTOOL_GRINGPARAM: EOPNOTSUPP): a ring entry for it is the "device it cannot tune",
// which must be reported while the MTU beside it is still applied and the exit stays 0. Real rings are
// proven on real drivers in the QEMU guest (test/qemu).
const bootstrapProfile = `{"name":"lab","interfaces":{"roles":["virtual"],"include":["wst*"]},"mtu":{"value":1400},
"rings":{"veth":{"rx":512}},"sysctls":{"net.core.netdev_max_backlog":32768.0}}`

// The Bottlerocket bootstrap-container mode against real links in a network namespace: the user-data file
// is the profile, one JSON line reports what the node has, exit 0 unless the input is bad.
func TestBootstrapEndToEnd(t *testing.T) {
	linkstest.RequireNetnsPrivilege(t)
	bin := buildAgent(t)
	const ns = "wst-agent-boot"
	netnsWithVeth(t, ns)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo") // no writer: a blocking open would hang the boot
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, profile string
		userData      string // overrides the profile file (a directory, a missing file)
		exit, mtu     int
		backlog       string
		report        bool
	}{
		{name: "bad profile touches nothing", profile: `{"name":"lab","mtu":{"value":1400},"sysctls":{"net.core.netdev_max_backlog":999}}`, exit: 2, mtu: 1500, backlog: "1000\n"},
		{name: "directory refused", userData: dir, exit: 2, mtu: 1500, backlog: "1000\n"},
		{name: "FIFO refused at once", userData: fifo, exit: 2, mtu: 1500, backlog: "1000\n"},
		{name: "missing file refused", userData: filepath.Join(dir, "absent"), exit: 2, mtu: 1500, backlog: "1000\n"},
		{name: "applies; an untunable device is reported, exit 0", profile: bootstrapProfile, exit: 0, mtu: 1400, backlog: "32768\n", report: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sh(t, "ip", "-n", ns, "link", "set", "wstm0", "mtu", "1500")
			profilePath, procSys := files(t, c.profile, map[string]string{"net.core.netdev_max_backlog": "1000"})
			if c.userData != "" {
				profilePath = c.userData
			}
			cmd := exec.Command("ip", "netns", "exec", ns, bin, "bootstrap", "--user-data", profilePath, "--proc-sys-root", procSys)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != c.exit {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, c.exit, stderr.String())
			}
			if got := mtuOf(t, ns, "wstm0"); got != c.mtu {
				t.Errorf("MTU %d, want %d", got, c.mtu)
			}
			if b, _ := os.ReadFile(filepath.Join(procSys, "net/core/netdev_max_backlog")); string(b) != c.backlog {
				t.Errorf("backlog %q, want %q", b, c.backlog)
			}
			if !c.report {
				if stdout.Len() != 0 || !strings.Contains(stderr.String(), "nothing applied") {
					t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
				}
				return
			}
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			var rep status.Report
			if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rep) != nil {
				t.Fatalf("want one JSON report line, got %q", stdout.String())
			}
			if rep.State != status.StateDegraded || rep.Sysctls["net.core.netdev_max_backlog"].Current != 32768 {
				t.Fatalf("report %+v", rep)
			}
			for _, i := range rep.Interfaces {
				if i.MTU == nil || i.MTU.Current != 1400 || !strings.Contains(i.Error, "GRINGPARAM") {
					t.Errorf("interface %+v: want MTU 1400 applied and the ring failure reported", i)
				}
			}
		})
	}
}

// With no arguments and no Bottlerocket user data the agent still asks for --profile (a DaemonSet
// misconfiguration must not silently turn into a one-shot run).
func TestNoArgumentsOutsideBottlerocket(t *testing.T) {
	if isRegularFile(bottlerocketUserData) {
		t.Skipf("%s exists: this host is a Bottlerocket bootstrap container, where no arguments means bootstrap mode", bottlerocketUserData)
	}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), nil, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--profile is required") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
}
