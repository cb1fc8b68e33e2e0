// The backlog lab is a bench, not a CI test: on a loaded 2-vCPU machine only some of its tails hold a
// retransmission (the rest are the probe starved of CPU by the burst sender), so its attribution is by time and
// a run can see none. Run it with: go test -tags probelab -run TestProbeLabBacklog ./cmd/wirespeed-agent
//go:build probelab

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setHostBacklog writes the host's net.core.netdev_max_backlog (global: a non-init namespace has none) and
// restores the value it found when the test ends.
func setHostBacklog(t *testing.T, v int) {
	t.Helper()
	const path = "/proc/sys/net/core/netdev_max_backlog"
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Errorf("restore netdev_max_backlog %s: %v", strings.TrimSpace(string(old)), err)
		}
	})
	if err := os.WriteFile(path, []byte(fmt.Sprint(v)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func buildBurstgen(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "burstgen")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "../burstgen")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build burstgen: %v\n%s", err, b)
	}
	return out
}

// slowReceivePath is the microburst lab's receive path (bench/microburst-lab/lab.py, nft_ruleset): 200
// prerouting rules that never match, so each packet costs microseconds on the receiving CPU, and the bursts'
// port dropped after them (the backlog is before prerouting: its drops happen first).
func slowReceivePath() string {
	var b strings.Builder
	b.WriteString("table inet wsprobe_slow {\n  chain pre {\n    type filter hook prerouting priority 0; policy accept;\n")
	for i := range 200 {
		// 192.0.2.0/24 is TEST-NET-1 (RFC 5737): no lab packet comes from there.
		fmt.Fprintf(&b, "    ip saddr 192.0.2.%d udp dport %d counter drop\n", i%250+1, 10000+i)
	}
	b.WriteString("    udp dport 9000 drop\n  }\n}\n")
	return b.String()
}

// labBacklog is a small net.core.netdev_max_backlog (the kernel's default is 1,000, net/core/dev.c): the
// microburst lab's bursts overflow 1,000 for a few milliseconds each, 100 for most of each burst, so the
// probe's requests meet a full backlog often enough in a 4 s run.
const labBacklog = 100

// (b, backlog) Microbursts overflow the receiving CPU's backlog at a small netdev_max_backlog, as the
// microburst lab shows at the default; the probe's requests dropped there become tails, and
// the probe names the backlog as their cause: softnet_stat's dropped column rose in each interval the tails
// began in. Bursts run only in the middle of the probe, so the backlog is named by timing, not by a counter
// that rose all along. softnet_stat is the host's, shared by both namespaces, so this lab cannot tell the
// sides apart: the side needs the peer's counters (issue 30, item 2).
func TestProbeLabBacklogDropsAreNamedAsTheCause(t *testing.T) {
	lab := newProbeLab(t)
	if n, _ := os.ReadFile("/sys/devices/system/cpu/online"); strings.TrimSpace(string(n)) == "0" {
		t.Skip("needs two CPUs: the sender on one, the receive path steered to the other")
	}
	burstgen := buildBurstgen(t)
	hostSysctlLock(t)
	setHostBacklog(t, labBacklog)
	// RPS steers everything the server's veth receives to CPU 1; the sender runs on CPU 0.
	sh(t, "ip", "netns", "exec", lab.server, "sh", "-c", "echo 2 > /sys/class/net/wsps/queues/rx-0/rps_cpus")
	cmd := exec.Command("ip", "netns", "exec", lab.server, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(slowReceivePath())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v\n%s", err, out)
	}
	lab.serve(t)
	// 8 streams at 200/s: enough requests meet the full backlog in the second of bursts.
	// Pinned with the sender, the probe sends when the scheduler preempts it mid-burst, into a full backlog.
	p := lab.probeCmd("5s", "8", "200")
	p.Args = append([]string{p.Args[0], "netns", "exec", lab.client, "taskset", "-c", "0"}, p.Args[4:]...)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	sh(t, "ip", "netns", "exec", lab.client, "taskset", "-c", "0", burstgen, "send", "--netns", lab.client,
		"--dst", labServerAddr+":9000", "--bursts", "20", "--burst-size", "30000", "--gap", "100ms", "--frame", "64")
	r := lab.parse(t, p)
	t.Logf("round trips %d, tails %d (with retransmit %d), retransmits %d, causes %v, intervals %+v",
		r.RoundTrips, r.Tails, r.TailsWithRetransmit, r.Retransmits, r.Causes, r.TailIntervals)
	if !r.CountersRead {
		t.Fatalf("counters not read: %s", r.CountersError)
	}
	if r.TailsWithRetransmit == 0 || r.Causes["backlog"] < r.TailsWithRetransmit {
		t.Fatalf("want tails with a retransmission, each named backlog: %d with retransmit, causes %v",
			r.TailsWithRetransmit, r.Causes)
	}
	for _, ti := range r.TailIntervals {
		if ti.Cause == "backlog" && (ti.Drops["backlog"] == 0 || ti.StartSeconds < 1) {
			t.Errorf("interval at %gs named backlog with drops %v (bursts began at 1.5 s)", ti.StartSeconds, ti.Drops)
		}
	}
}
