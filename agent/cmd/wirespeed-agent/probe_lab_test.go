package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
)

// The probe lab: two named network namespaces as two nodes joined by a veth pair, the built binary serving
// in one (`probe --listen`) and probing from the other (`probe --peer ... --json`). Addresses are a private
// /30 that exists only inside the two namespaces.
const (
	labClientAddr = "10.214.0.1"
	labServerAddr = "10.214.0.2"
	labPort       = "9809"
)

type probeLab struct {
	bin, client, server string
}

func newProbeLab(t *testing.T) probeLab {
	t.Helper()
	linkstest.RequireNetnsPrivilege(t)
	lab := probeLab{bin: buildAgent(t), client: fmt.Sprintf("wsprobe-c%d", os.Getpid()), server: fmt.Sprintf("wsprobe-s%d", os.Getpid())}
	for _, ns := range []string{lab.client, lab.server} {
		_ = exec.Command("ip", "netns", "del", ns).Run() // a leftover from a killed run
		sh(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
		sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	sh(t, "ip", "-n", lab.client, "link", "add", "wspc", "type", "veth", "peer", "name", "wsps", "netns", lab.server)
	sh(t, "ip", "-n", lab.client, "addr", "add", labClientAddr+"/30", "dev", "wspc")
	sh(t, "ip", "-n", lab.server, "addr", "add", labServerAddr+"/30", "dev", "wsps")
	sh(t, "ip", "-n", lab.client, "link", "set", "wspc", "up")
	sh(t, "ip", "-n", lab.server, "link", "set", "wsps", "up")
	return lab
}

// serve starts `probe --listen` in the server namespace until the test ends, once it says it serves.
func (l probeLab) serve(t *testing.T) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", l.server, l.bin, "probe", "--listen", labServerAddr+":"+labPort)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "probe serving") {
				ready <- sc.Text()
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("probe server did not start within 10 s")
	}
}

// labReport is the part of the probe's JSON the lab asserts.
type labReport struct {
	RoundTrips          uint64            `json:"round_trips"`
	Tails               uint64            `json:"tails"`
	TailsWithRetransmit uint64            `json:"tails_with_retransmit"`
	TailRetransmits     uint64            `json:"tail_retransmits"`
	Retransmits         uint64            `json:"retransmits"`
	Errors              uint64            `json:"errors"`
	LastError           string            `json:"last_error"`
	Causes              map[string]uint64 `json:"causes"`
	CountersRead        bool              `json:"counters_read"`
	CountersError       string            `json:"counters_error"`
	TailIntervals       []struct {
		StartSeconds float64           `json:"start_seconds"`
		Tails        uint64            `json:"tails"`
		Drops        map[string]uint64 `json:"drops"`
		Cause        string            `json:"cause"`
	} `json:"tail_intervals"`
	Percentiles map[string]*float64
	Peers       []struct {
		Peer       string `json:"peer"`
		RoundTrips uint64 `json:"round_trips"`
		Tails      uint64 `json:"tails"`
	} `json:"peers"`
}

// probe runs the one-shot probe from the client namespace for 3 s: 4 streams at 50 round trips/s.
func (l probeLab) probe(t *testing.T) labReport {
	t.Helper()
	r := l.parse(t, l.probeCmd("3s", "4", "50"))
	// 4 streams x 50/s x 3 s = 600 if nothing waited; a loaded 2-core machine and the tails take some.
	if r.RoundTrips < 300 || r.RoundTrips > 604 {
		t.Fatalf("%d round trips, want 300..604 (600 planned)", r.RoundTrips)
	}
	return r
}

// probeCmd is the probe of the client namespace, streams at rate round trips/s each for duration; the
// caller starts it and hands it to parse.
func (l probeLab) probeCmd(duration, streams, rate string) *exec.Cmd {
	cmd := exec.Command("ip", "netns", "exec", l.client, l.bin, "probe", "--peer", labServerAddr+":"+labPort,
		"--streams", streams, "--rate", rate, "--duration", duration, "--interval", "500ms", "--json")
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	return cmd
}

// parse waits for a probe command (starting it if it was not) and reads its report.
func (l probeLab) parse(t *testing.T, cmd *exec.Cmd) labReport {
	t.Helper()
	var err error
	if cmd.Process == nil {
		err = cmd.Run()
	} else {
		err = cmd.Wait()
	}
	stdout, stderr := cmd.Stdout.(*bytes.Buffer), cmd.Stderr.(*bytes.Buffer)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	var r labReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("probe JSON: %v\n%s", err, stdout.String())
	}
	var raw struct {
		P map[string]*float64 `json:"percentiles_seconds"`
	}
	_ = json.Unmarshal(stdout.Bytes(), &raw)
	r.Percentiles = raw.P
	if len(r.Peers) != 1 || r.Peers[0].RoundTrips != r.RoundTrips || r.Peers[0].Tails != r.Tails {
		t.Fatalf("per-peer entry does not match the totals: %s", stdout.String())
	}
	return r
}

// retransSegs is the kernel's own count of retransmitted TCP segments in a namespace (/proc/net/snmp, Tcp
// RetransSegs): every TCP socket of the client namespace is the probe's, so its delta over a run is the
// retransmissions of the probe's sockets, counted independently of their TCP_INFO.
func retransSegs(t *testing.T, ns string) uint64 {
	t.Helper()
	lines := strings.Split(sh(t, "ip", "netns", "exec", ns, "cat", "/proc/net/snmp"), "\n")
	for i := 0; i+1 < len(lines); i++ {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "Tcp:" || len(values) != len(names) || values[0] != "Tcp:" {
			continue
		}
		for j, n := range names {
			if n == "RetransSegs" {
				v, err := strconv.ParseUint(values[j], 10, 64)
				if err != nil {
					t.Fatalf("RetransSegs %q: %v", values[j], err)
				}
				return v
			}
		}
	}
	t.Fatalf("no Tcp RetransSegs in %s's /proc/net/snmp", ns)
	return 0
}

// (a) A clean link: every round trip counted, none a tail, no socket retransmitted.
func TestProbeLabCleanLinkHasNoTails(t *testing.T) {
	lab := newProbeLab(t)
	lab.serve(t)
	before := retransSegs(t, lab.client)
	r := lab.probe(t)
	kernel := retransSegs(t, lab.client) - before
	if r.Tails != 0 || r.Retransmits != 0 || kernel != 0 || r.Errors != 0 || len(r.Causes) != 0 {
		t.Fatalf("clean link: %d tails, %d retransmits (kernel %d), %d errors (%s), causes %v",
			r.Tails, r.Retransmits, kernel, r.Errors, r.LastError, r.Causes)
	}
	if p := r.Percentiles["p50"]; p == nil || *p > 0.01 {
		t.Fatalf("p50 %v on a veth, want well under 10 ms", p)
	}
}

// dropRequests is the drop injector: in the server namespace's input hook, 3% of the probe's requests at
// random. `ip length 53` is exactly one request: IPv4 header 20 + TCP header 20 + the timestamp option 12
// (Linux sends it by default, net.ipv4.tcp_timestamps = 1, checked below) + the 1-byte request; the
// handshake, the 8-byte hellos and pure ACKs pass, so every drop is a request the client must retransmit.
const dropRequests = `table inet wsprobe {
  chain in {
    type filter hook input priority 0; policy accept;
    ip daddr ` + labServerAddr + ` tcp dport ` + labPort + ` ip length 53 numgen random mod 100 < 3 counter drop
  }
}
`

// nftDrops reads the injector's counter.
func nftDrops(t *testing.T, ns string) uint64 {
	t.Helper()
	out := sh(t, "ip", "netns", "exec", ns, "nft", "-j", "list", "chain", "inet", "wsprobe", "in")
	var doc struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("nft -j: %v\n%s", err, out)
	}
	for _, item := range doc.Nftables {
		var rule struct {
			Expr []map[string]json.RawMessage `json:"expr"`
		}
		if raw, ok := item["rule"]; !ok || json.Unmarshal(raw, &rule) != nil {
			continue
		}
		for _, e := range rule.Expr {
			var c struct{ Packets uint64 }
			if raw, ok := e["counter"]; ok && json.Unmarshal(raw, &c) == nil {
				return c.Packets
			}
		}
	}
	t.Fatalf("no counter in the injector's chain:\n%s", out)
	return 0
}

// (b) Dropped requests become tails, and the tails match the retransmissions the kernel counts. On a
// synchronous 1-byte stream a lost request is the only segment in flight: no later segment can bring
// duplicate ACKs for a fast retransmit, so only a timer resends it, the tail loss probe (with one packet out,
// 2 x SRTT + TCP_RTO_MIN; tcp_schedule_loss_probe, torvalds/linux net/ipv4/tcp_output.c) or the RTO (at least
// TCP_RTO_MIN = 200 ms). Either is past the 150 ms threshold, and the round trip cannot end before the resent
// request arrives. So, with D the injector's drops, T the tail round trips during which TCP_INFO's
// tcpi_total_retrans rose, RT the retransmissions during them, R the probe's retransmits (TCP_INFO of all
// its sockets) and K the namespace's Tcp RetransSegs delta:
//
//	R == K              the same retransmissions, counted per socket and per namespace
//	D <= RT <= R        every drop is resent within its tail; R adds only spurious RTOs (a >200 ms stall)
//	1 <= T <= RT        a tail holds at least one retransmission, more when a resend was dropped too
//
// Equality D == RT == R and T == D (IBM's "matched precisely") holds unless a resend was itself dropped
// (3% of the time) or the machine stalled past an RTO; the lab asserts only what always holds, and logs
// hostSysctlLock takes the lock every tool of this repository that writes a global sysctl takes
// (bench/benchlib.py HOST_SYSCTL_LOCK), so no microburst lab fills the host's backlogs meanwhile; held
// until the test ends.
func hostSysctlLock(t *testing.T) {
	t.Helper()
	const path = "/run/lock/wirespeed-host-sysctl.lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() }) // closing releases the lock
	deadline := time.Now().Add(120 * time.Second)
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("%s held by another run for 120 s", path)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// the rest.
func TestProbeLabDroppedRequestsAreTailsMatchingRetransmits(t *testing.T) {
	lab := newProbeLab(t)
	// softnet_stat is the host's: hold off labs that cause backlog drops, or their drops would name a cause.
	hostSysctlLock(t)
	if ts := strings.TrimSpace(sh(t, "ip", "netns", "exec", lab.client, "sysctl", "-n", "net.ipv4.tcp_timestamps")); ts != "1" {
		t.Fatalf("net.ipv4.tcp_timestamps = %s in the client namespace: the injector's ip length 53 assumes 1", ts)
	}
	cmd := exec.Command("ip", "netns", "exec", lab.server, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(dropRequests)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v\n%s", err, out)
	}
	lab.serve(t)
	before := retransSegs(t, lab.client)
	r := lab.probe(t)
	kernel := retransSegs(t, lab.client) - before
	drops := nftDrops(t, lab.server)
	t.Logf("round trips %d, drops %d, tails %d (with retransmit %d, holding %d retransmits), retransmits %d, kernel %d",
		r.RoundTrips, drops, r.Tails, r.TailsWithRetransmit, r.TailRetransmits, r.Retransmits, kernel)
	if r.Retransmits != kernel {
		t.Errorf("probe retransmits %d != the namespace's RetransSegs delta %d", r.Retransmits, kernel)
	}
	if drops == 0 || drops > r.TailRetransmits || r.TailRetransmits > r.Retransmits {
		t.Errorf("want 1 <= drops %d <= retransmits in tails %d <= retransmits %d", drops, r.TailRetransmits, r.Retransmits)
	}
	if r.TailsWithRetransmit == 0 || r.TailsWithRetransmit > r.TailRetransmits || r.TailsWithRetransmit > r.Tails {
		t.Errorf("want 1 <= tails with retransmit %d <= retransmits in tails %d, and <= tails %d",
			r.TailsWithRetransmit, r.TailRetransmits, r.Tails)
	}
	// nftables drops are no node setting: no drop counter the probe reads rises, so no cause is named.
	if !r.CountersRead || r.Causes["unexplained"] != r.Tails {
		t.Errorf("causes %v (counters read %v: %s), want every one of %d tails unexplained", r.Causes, r.CountersRead,
			r.CountersError, r.Tails)
	}
}

// The backlog injector, shared by the backlog, fleet and throughput-profile labs.

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
