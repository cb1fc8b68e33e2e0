// The backlog lab's before/after, issue 30 item 4(c): the same bursts that make the probe's tails at a small
// netdev_max_backlog make none once the agent has applied the throughput profile. Unlike the backlog lab it
// asserts nothing that needs a burst to catch a request at the right moment (it counts the tails, the
// retransmissions of both sides and the softnet drops in bulk, with wide margins), so it runs with the others.

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// throughputProfile is the built-in profile as the DaemonSet ships it (make regen writes it from
// wirespeed.profiles.ASSUMPTIONS["throughput"]).
const throughputProfile = "../../../components/wirespeed/data/profiles/throughput.json"

// softnetDropped sums the dropped column (the second, hex) of /proc/net/softnet_stat over the CPUs: the
// packets the kernel dropped because a CPU's backlog held netdev_max_backlog (enqueue_to_backlog,
// torvalds/linux net/core/dev.c). It is the host's, whichever namespace reads it.
func softnetDropped(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/net/softnet_stat")
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("softnet_stat line %q: want at least 2 columns", line)
		}
		v, err := strconv.ParseUint(f[1], 16, 64)
		if err != nil {
			t.Fatalf("softnet_stat dropped %q: %v", f[1], err)
		}
		sum += v
	}
	return sum
}

// burstPhase is one arm: what the probe counted, and over its run the kernel's retransmitted segments of
// each namespace (Tcp RetransSegs: the client's are the probe's requests resent, the server's its answers
// resent) and the host's softnet backlog drops.
type burstPhase struct {
	report                       labReport
	clientRetrans, serverRetrans uint64
	backlogDrops                 uint64
}

// The burst pattern, identical in both arms (burstgen sends fixed-size bursts on an absolute schedule; there
// is no randomness to seed). 8,000 64-byte frames overflow a backlog of 100 behind the slow receive path for
// most of each burst (the sender outpaces the 200 nftables rules), yet fit a backlog of 32,768 with room to
// spare, and drain in tens of milliseconds: on the loaded 2-vCPU dev VM a burst took 11-38 ms to send and the
// probe's p99.99 with the profile applied was 28-67 ms, under half the 150 ms tail threshold, so the queueing the
// larger backlog adds does not become a tail. (30,000-frame bursts, the backlog lab's, took up to 105 ms to send
// and gave a p99.99 of 128 ms: too close.) 40 bursts 80 ms apart from 1.5 s run to 4.7 s of the 5 s probe.
var labBurst = []string{"--bursts", "40", "--burst-size", "8000", "--gap", "80ms", "--frame", "64"}

// runBursts runs the probe of the client namespace (8 streams x 200/s for 5 s, pinned with the sender, as the
// backlog lab does) and, from 1.5 s into it, the burst pattern into the server namespace's slow receive path.
func (l probeLab) runBursts(t *testing.T, burstgen string) burstPhase {
	t.Helper()
	client0, server0, drops0 := retransSegs(t, l.client), retransSegs(t, l.server), softnetDropped(t)
	p := l.probeCmd("5s", "8", "200")
	p.Args = append([]string{p.Args[0], "netns", "exec", l.client, "taskset", "-c", "0"}, p.Args[4:]...)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	args := append([]string{"ip", "netns", "exec", l.client, "taskset", "-c", "0", burstgen, "send", "--netns", l.client,
		"--dst", labServerAddr + ":9000"}, labBurst...)
	out := sh(t, args...)
	r := l.parse(t, p)
	ph := burstPhase{report: r, clientRetrans: retransSegs(t, l.client) - client0,
		serverRetrans: retransSegs(t, l.server) - server0, backlogDrops: softnetDropped(t) - drops0}
	t.Logf("burstgen %s", strings.TrimSpace(out))
	t.Logf("round trips %d, tails %d (with retransmit %d), retransmits %d (kernel: client %d, server %d), "+
		"softnet backlog drops %d, causes %v, p99 %v s, p99.99 %v s", r.RoundTrips, r.Tails, r.TailsWithRetransmit,
		r.Retransmits, ph.clientRetrans, ph.serverRetrans, ph.backlogDrops, r.Causes, deref(r.Percentiles["p99"]),
		deref(r.Percentiles["p9999"]))
	return ph
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// labSysctlRoot is a --proc-sys-root for an agent running in the lab namespace ns. A sysctl that namespace
// has (the per-namespace ones, net.ipv4.tcp_rmem say) is a symlink to /proc/sys/..., which the agent resolves
// in its own namespace: the lab's. A global one, of net.core's init_net-only table (netdev_max_backlog:
// net/core/sysctl_net_core.c registers it for init_net alone), exists only in the init namespace, where an
// agent on a node runs (hostNetwork); it is bind-mounted from the test's own /proc/sys, the init namespace's
// (a procfs sysctl inode keeps the table it was looked up in, so the mount reads and writes the host's value
// from any namespace), and its value is restored when the test ends, as is the mount removed.
func labSysctlRoot(t *testing.T, ns string, names ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, name := range names {
		rel := strings.ReplaceAll(name, ".", "/")
		host, dst := filepath.Join("/proc/sys", rel), filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if exec.Command("ip", "netns", "exec", ns, "test", "-e", host).Run() == nil {
			if err := os.Symlink(host, dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(host)
		if err != nil {
			t.Fatalf("%s is in neither %s nor the init namespace: %v", name, ns, err)
		}
		t.Cleanup(func() {
			if err := os.WriteFile(host, old, 0o644); err != nil {
				t.Errorf("restore %s %s: %v", name, strings.TrimSpace(string(old)), err)
			}
		})
		if err := os.WriteFile(dst, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount(host, dst, "", syscall.MS_BIND, ""); err != nil {
			t.Fatalf("bind-mount %s: %v", host, err)
		}
		t.Cleanup(func() {
			if err := syscall.Unmount(dst, 0); err != nil {
				t.Errorf("unmount %s: %v", dst, err)
			}
		})
	}
	return root
}

// applyThroughput runs the agent once (--once: one reconcile, the report on stdout) with the built-in
// throughput profile in the server namespace, the receiving node, and returns its report.
func (l probeLab) applyThroughput(t *testing.T) status.Report {
	t.Helper()
	b, err := os.ReadFile(throughputProfile)
	if err != nil {
		t.Fatal(err)
	}
	var prof struct {
		Name    string           `json:"name"`
		Sysctls map[string]int64 `json:"sysctls"`
	}
	if err := json.Unmarshal(b, &prof); err != nil || prof.Name != "throughput" || len(prof.Sysctls) == 0 {
		t.Fatalf("%s: name %q, sysctls %v (%v): want the throughput profile with sysctls", throughputProfile, prof.Name,
			prof.Sysctls, err)
	}
	var names []string
	for n := range prof.Sysctls {
		names = append(names, n)
	}
	root := labSysctlRoot(t, l.server, names...)
	cmd := exec.Command("ip", "netns", "exec", l.server, l.bin, "--once", "--profile", throughputProfile,
		"--proc-sys-root", root, "--listen", "", "--kube=false", "--snat=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("agent --once: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	var rep status.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	t.Logf("agent report: %s", stdout.String())
	return rep
}

// minExpectedTails is how many tails the after arm would expect at the before arm's tail rate if the profile
// changed nothing: Poisson odds of seeing none then are e^-10, under 1 in 20,000. Twelve runs on the loaded
// 2-vCPU dev VM (load average 10 to 13) had 51 to 96 tails before and expected 63 to 154 after.
const minExpectedTails = 10

// (c) The agent applies the throughput profile: the tails go to 0. The backlog lab's injector (slow receive
// path, RPS to CPU 1, netdev_max_backlog 100) makes tails named backlog; the real agent binary then runs once
// with the built-in throughput profile in the server namespace, the receiving node, and raises
// netdev_max_backlog to the profile's 32,768 itself; the same bursts then overflow nothing: no tail, no
// retransmission on either side, no softnet backlog drop. That is all of the profile the lab can see: its rings
// are for NIC drivers (ena, mana, mlx) and it excludes veth*, so no link of the namespace is selected.
func TestProbeLabThroughputProfileClearsBacklogTails(t *testing.T) {
	lab := newProbeLab(t)
	if n, _ := os.ReadFile("/sys/devices/system/cpu/online"); strings.TrimSpace(string(n)) == "0" {
		t.Fatal("needs two CPUs: the sender on one, the receive path steered to the other")
	}
	burstgen := buildBurstgen(t)
	hostSysctlLock(t)
	setHostBacklog(t, labBacklog) // restores the host's value when the test ends, after the agent raised it
	sh(t, "ip", "netns", "exec", lab.server, "sh", "-c", "echo 2 > /sys/class/net/wsps/queues/rx-0/rps_cpus")
	cmd := exec.Command("ip", "netns", "exec", lab.server, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(slowReceivePath())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v\n%s", err, out)
	}
	lab.serve(t)
	before := lab.runBursts(t, burstgen)
	checkBacklogTails(t, before)
	rep := lab.applyThroughput(t)
	const key, want = "net.core.netdev_max_backlog", 32768 // the profile's value (throughput.json)
	if v := rep.Sysctls[key]; rep.State != status.StateApplied || v.Desired != want || v.Current != want {
		t.Fatalf("agent report: state %s (%s), %s %+v; want applied at %d", rep.State, rep.Reason, key, v, want)
	}
	if b, _ := os.ReadFile("/proc/sys/net/core/netdev_max_backlog"); strings.TrimSpace(string(b)) != strconv.Itoa(want) {
		t.Fatalf("the host's netdev_max_backlog is %q after the agent applied %d", b, want)
	}
	after := lab.runBursts(t, burstgen)
	r := after.report
	if r.Tails != 0 || r.Retransmits != 0 || after.clientRetrans != 0 || after.serverRetrans != 0 ||
		after.backlogDrops != 0 || r.Errors != 0 || len(r.Causes) != 0 {
		t.Fatalf("with the throughput profile: %d tails, %d retransmits (kernel: client %d, server %d), %d softnet "+
			"backlog drops, %d errors (%s), causes %v; want none", r.Tails, r.Retransmits, after.clientRetrans,
			after.serverRetrans, after.backlogDrops, r.Errors, r.LastError, r.Causes)
	}
	// Not luck: at the before arm's rate, this many round trips would have held minExpectedTails or more.
	expected := float64(before.report.Tails) * float64(r.RoundTrips) / float64(before.report.RoundTrips)
	if expected < minExpectedTails {
		t.Fatalf("%d round trips with the profile would expect only %.1f tails at the rate before (%d in %d); want "+
			">= %d for 0 to mean the profile removed them", r.RoundTrips, expected, before.report.Tails,
			before.report.RoundTrips, minExpectedTails)
	}
	t.Logf("0 tails in %d round trips, where the rate before expected %.0f", r.RoundTrips, expected)
}

// checkBacklogTails asserts the before arm as the backlog lab does, and that its tails are the backlog's
// drops: the kernel resent at least as many segments, on one side or the other, as the probe counted tails
// by minExpectedTails (a dropped answer is resent by the server, so TCP_INFO of the probe's sockets sees only
// the dropped requests).
func checkBacklogTails(t *testing.T, ph burstPhase) {
	t.Helper()
	r := ph.report
	if !r.CountersRead {
		t.Fatalf("counters not read: %s", r.CountersError)
	}
	if r.Retransmits != ph.clientRetrans {
		t.Errorf("probe retransmits %d != the client namespace's RetransSegs delta %d", r.Retransmits, ph.clientRetrans)
	}
	if ph.backlogDrops == 0 || r.TailsWithRetransmit == 0 || r.Causes["backlog"] < r.TailsWithRetransmit ||
		r.Causes["backlog"] < minExpectedTails || ph.clientRetrans+ph.serverRetrans < minExpectedTails {
		t.Fatalf("before the profile: want softnet backlog drops, >= %d tails named backlog, each with a "+
			"retransmission counted: %d drops, %d tails with retransmit, causes %v, kernel retransmits %d + %d",
			minExpectedTails, ph.backlogDrops, r.TailsWithRetransmit, r.Causes, ph.clientRetrans, ph.serverRetrans)
	}
	for _, ti := range r.TailIntervals {
		if ti.Cause == "backlog" && (ti.Drops["backlog"] == 0 || ti.StartSeconds < 1) {
			t.Errorf("interval at %gs named backlog with drops %v (bursts began at 1.5 s)", ti.StartSeconds, ti.Drops)
		}
	}
}
