// The backlog lab is a bench, not a CI test: on a loaded 2-vCPU machine only some of its tails hold a
// retransmission (the rest are the probe starved of CPU by the burst sender), so its attribution is by time and
// a run can see none. Run it with: go test -tags probelab -run TestProbeLabBacklog ./cmd/wirespeed-agent
//go:build probelab

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

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
