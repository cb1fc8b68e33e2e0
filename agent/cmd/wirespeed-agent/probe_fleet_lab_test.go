// The continuous probe's backlog lab, a bench like probe_backlog_lab_test.go (and for its reason): run it with
// go test -tags probelab -run TestProbeLabFleet ./cmd/wirespeed-agent
//go:build probelab

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/numbers"
)

// frozenProc is a procfs stand-in for a node whose drop counters do not move: softnet_stat and the protocol
// counters copied once from the host. Both lab nodes share one kernel, whose softnet_stat is global, so
// without it either side would see the other's backlog drops as its own; the probing node reads this copy,
// which stands for a node whose own receive path the bursts do not hit (they go to the other namespace).
func frozenProc(t *testing.T, ns string) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "net"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "1", "net"), 0o755))
	must(os.Symlink("1", filepath.Join(dir, "self")))
	softnet, err := os.ReadFile("/proc/net/softnet_stat")
	must(err)
	must(os.WriteFile(filepath.Join(dir, "net", "softnet_stat"), softnet, 0o644))
	for _, f := range []string{"snmp", "netstat", "snmp6"} {
		b := sh(t, "ip", "netns", "exec", ns, "cat", "/proc/net/"+f)
		must(os.WriteFile(filepath.Join(dir, "1", "net", f), []byte(b), 0o644))
	}
	return dir
}

// fleetAgent starts the daemon in ns with --dry-run (it reads the profile's sysctls, writes none) and the
// continuous probe of the one peer given, and waits until it serves the probe.
func fleetAgent(t *testing.T, bin, ns, name, addr, peer string, extra ...string) {
	t.Helper()
	profile := filepath.Join(t.TempDir(), "profile.json")
	if err := os.WriteFile(profile, []byte(labProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"netns", "exec", ns, "taskset", "-c", "0", bin, "--profile", profile, "--dry-run", "--kube=false",
		"--snat=false", "--listen", addr + labMetricsPort, "--node-name", name, "--probe", "--probe-static-peers", peer,
		"--probe-streams", "8", "--probe-rate", "200", "--probe-interval", "500ms", "--probe-round", "6s"}
	cmd := exec.Command("ip", append(args, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	var log bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "probe: continuous mode") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: the continuous probe did not start within 15 s", name)
	}
}

// labMetricsPort is each lab daemon's --listen port, on its namespace's address.
var labMetricsPort = ":" + strconv.Itoa(numbers.MetricsPort)

var tailsSeries = regexp.MustCompile(`(?m)^wirespeed_agent_probe_tails_total\{cause="([a-z_]+)",peer_node="([a-z]+)",side="([a-z]+)"\} (\d+)`)

// scrapeTails reads wirespeed_agent_probe_tails_total from the agent's /metrics in ns, as "cause/side" -> tails.
func scrapeTails(t *testing.T, ns, addr string) (map[string]uint64, string) {
	t.Helper()
	out := sh(t, "ip", "netns", "exec", ns, "curl", "-sf", "http://"+addr+labMetricsPort+"/metrics")
	m := map[string]uint64{}
	for _, g := range tailsSeries.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseUint(g[4], 10, 64)
		m[g[1]+"/"+g[3]] += n
	}
	var probeLines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "wirespeed_agent_probe_") && !strings.Contains(l, "_bucket") {
			probeLines = append(probeLines, l)
		}
	}
	return m, strings.Join(probeLines, "\n")
}

// The continuous mode on the backlog injector: both namespaces run the daemon with --probe, each probing the
// other. The bursts overflow the backlog of the server namespace's receive path (RPS to CPU 1, the slow
// nftables prerouting chain, netdev_max_backlog 100) during the first round. The client node (frozen
// counters: its backlog did not drop) names its tails backlog on the peer side, from the counters the server
// answered; the server node names the tails of its own probe (whose answers it receives on that same path)
// backlog on the local side.
func TestProbeLabFleetNamesTheBacklogOnTheRightSide(t *testing.T) {
	lab := newProbeLab(t)
	if n, _ := os.ReadFile("/sys/devices/system/cpu/online"); strings.TrimSpace(string(n)) == "0" {
		t.Skip("needs two CPUs: the sender on one, the receive path steered to the other")
	}
	burstgen := buildBurstgen(t)
	hostSysctlLock(t)
	setHostBacklog(t, labBacklog)
	sh(t, "ip", "netns", "exec", lab.server, "sh", "-c", "echo 2 > /sys/class/net/wsps/queues/rx-0/rps_cpus")
	cmd := exec.Command("ip", "netns", "exec", lab.server, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(slowReceivePath())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v\n%s", err, out)
	}
	frozen := frozenProc(t, lab.client)
	fleetAgent(t, lab.bin, lab.server, "server", labServerAddr, "client="+labClientAddr+"@z1")
	fleetAgent(t, lab.bin, lab.client, "client", labClientAddr, "server="+labServerAddr+"@z2", "--probe-proc-root", frozen)
	time.Sleep(1500 * time.Millisecond)
	sh(t, "ip", "netns", "exec", lab.client, "taskset", "-c", "0", burstgen, "send", "--netns", lab.client,
		"--dst", labServerAddr+":9000", "--bursts", "20", "--burst-size", "30000", "--gap", "100ms", "--frame", "64")
	time.Sleep(6 * time.Second) // the first round (6 s from start) has ended and been counted
	client, clientLines := scrapeTails(t, lab.client, labClientAddr)
	server, serverLines := scrapeTails(t, lab.server, labServerAddr)
	t.Logf("client node's probe metrics:\n%s", clientLines)
	t.Logf("server node's probe metrics:\n%s", serverLines)
	if client["backlog/peer"] == 0 {
		t.Fatalf("client: no tail named backlog on the peer side: %v", client)
	}
	if client["backlog/local"] != 0 || client["backlog/both"] != 0 {
		t.Fatalf("client: backlog on its own side though its counters are frozen: %v", client)
	}
	if server["backlog/peer"] != 0 || server["backlog/both"] != 0 {
		t.Fatalf("server: backlog named on the client's side, whose counters did not move: %v", server)
	}
	if server["backlog/local"] == 0 {
		t.Logf("server: no tail of its own probe fell in the bursts this run (%v); not asserted", server)
	}
	// diagnose on the client node shows the same round's tails and their cause and side.
	dcmd := exec.Command("ip", "netns", "exec", lab.client, lab.bin, "diagnose", "--interval", "100ms", "--snat=false",
		"--proc-root", frozen, "--probe-from", "http://"+labClientAddr+labMetricsPort+"/probe")
	raw, err := dcmd.CombinedOutput()
	out := string(raw)
	if code := dcmd.ProcessState.ExitCode(); err != nil && code != diagnoseFindings {
		t.Fatalf("diagnose: %v\n%s", err, out)
	}
	t.Logf("client node's diagnose:\n%s", out)
	if !regexp.MustCompile(`probe, last round .* tails, .*\(backlog on peer side \d+\)`).MatchString(out) {
		t.Fatalf("diagnose does not show the round's backlog tails on the peer side:\n%s", out)
	}
	if !strings.Contains(clientLines, `wirespeed_agent_probe_rtt_seconds_count{peer_node="server",peer_zone="z2",zones="cross"}`) {
		t.Fatalf("client: no rtt histogram for the peer in zone z2, cross-zone:\n%s", clientLines)
	}
}
