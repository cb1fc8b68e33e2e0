package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

func TestParseFlags(t *testing.T) {
	t.Setenv("NODE_NAME", "from-env")
	snatDefaults := snatOptions{on: true, hold: 240 * time.Second, top: 20, peakWindow: 24 * time.Hour,
		maxFlows: 262144, clearAfter: 5 * time.Minute, receiveBuffer: 4 << 20, byWorkload: true, workloadTop: 20}
	fleetDefaults := fleetOptions{port: 9809, peers: 8, streams: 4, rate: 1, threshold: 150 * time.Millisecond,
		interval: time.Second, round: time.Minute, nodeRefresh: 10 * time.Minute, procRoot: "/proc"}
	defaults := options{profile: "p.json", procSysRoot: "/proc/sys", sysRoot: "/sys", resync: 60 * time.Second,
		debounce: 100 * time.Millisecond, listen: ":9808", nodeName: "from-env", kube: true, snat: snatDefaults,
		fleet: fleetDefaults}
	cases := []struct {
		name string
		args []string
		want options
		err  string
	}{
		{name: "minimal takes every default", args: []string{"--profile", "p.json"}, want: defaults},
		{name: "all flags", args: []string{"--profile", "p.json", "--once", "--dry-run", "--resync", "10s",
			"--debounce", "50ms", "--listen", "", "--kube=false", "--kubeconfig", "/etc/kube.conf",
			"--node-name", "n1", "--proc-sys-root", "/host/proc/sys", "--sys-root", "/host/sys"},
			want: options{profile: "p.json", procSysRoot: "/host/proc/sys", sysRoot: "/host/sys", once: true,
				dryRun: true, resync: 10 * time.Second, debounce: 50 * time.Millisecond, listen: "",
				nodeName: "n1", kube: false, kubeconfig: "/etc/kube.conf", snat: snatDefaults, fleet: fleetDefaults}},
		{name: "probe flags", args: []string{"--profile", "p.json", "--probe", "--probe-port", "7000", "--probe-peers", "3",
			"--probe-streams", "2", "--probe-rate", "5", "--probe-round", "10s", "--probe-static-peers", "b=10.0.0.2@z2"},
			want: func() options {
				o := defaults
				o.fleet = fleetDefaults
				o.fleet.on, o.fleet.port, o.fleet.peers, o.fleet.streams, o.fleet.rate = true, 7000, 3, 2, 5
				o.fleet.round, o.fleet.staticPeers = 10*time.Second, "b=10.0.0.2@z2"
				o.fleet.portSet, o.fleet.peersSet, o.fleet.streamsSet = true, true, true
				return o
			}()},
		{name: "probe peers above the bound", args: []string{"--profile", "p", "--probe", "--probe-peers", "33"},
			err: "--probe-peers 33: must be between 1 and 32"},
		{name: "probe streams and static peers wrong", args: []string{"--profile", "p", "--probe", "--probe-streams", "0",
			"--probe-static-peers", "b=not-an-ip"},
			err: `--probe-streams 0: must be between 1 and 64; --probe-static-peers "b=not-an-ip": want name=ip[@zone]`},
		{name: "probe flags unchecked while off", args: []string{"--profile", "p.json", "--probe-peers", "0"},
			want: func() options { o := defaults; o.fleet.peers, o.fleet.peersSet = 0, true; return o }()},
		{name: "snat flags", args: []string{"--profile", "p.json", "--snat=false", "--snat-hold", "3s", "--snat-top", "5",
			"--snat-peak-window", "1h", "--snat-exclude-cidr", "10.244.0.0/16", "--snat-exclude-cidr", "fd00::/8",
			"--snat-max-flows", "1000", "--snat-pressure-clear-after", "1s", "--snat-receive-buffer", "4096",
			"--snat-by-workload=false", "--snat-workload-top", "3"},
			want: func() options {
				o := defaults
				o.snat = snatOptions{hold: 3 * time.Second, holdSet: true, top: 5, peakWindow: time.Hour,
					exclude: cidrList{"10.244.0.0/16", "fd00::/8"}, maxFlows: 1000, clearAfter: time.Second,
					receiveBuffer: 4096, workloadTop: 3}
				return o
			}()},
		{name: "bad snat cidr", args: []string{"--profile", "p", "--snat-exclude-cidr", "10.0.0.0/33"},
			err: `invalid value "10.0.0.0/33" for flag -snat-exclude-cidr: "10.0.0.0/33" is not an IPv4 or IPv6 CIDR such as 10.244.0.0/16 or fd00::/8`},
		{name: "snat hold above an hour", args: []string{"--profile", "p", "--snat-hold", "61m"},
			err: "--snat-hold 1h1m0s: must be between 0s and 1h"},
		{name: "snat workload top zero", args: []string{"--profile", "p", "--snat-workload-top", "0"},
			err: "--snat-workload-top 0: must be between 1 and 1000"},
		{name: "snat top zero", args: []string{"--profile", "p", "--snat-top", "0"},
			err: "--snat-top 0: must be between 1 and 1000"},
		{name: "profile required", args: []string{"--once"}, err: "--profile is required"},
		{name: "zero resync", args: []string{"--profile", "p", "--resync", "0s"}, err: "--resync 0s: must be positive"},
		{name: "debounce above resync", args: []string{"--profile", "p", "--resync", "1s", "--debounce", "2s"},
			err: "--debounce 2s: must be positive and at most --resync (1s)"},
		{name: "stray argument", args: []string{"--profile", "p", "extra"}, err: "unexpected arguments: [extra]"},
		// Removed: Node Events are only accepted in "default" (nodestatus.EventsNamespace), so a flag
		// choosing another namespace could only ever be ignored or make every Event fail.
		{name: "events namespace is not a flag", args: []string{"--profile", "p", "--events-namespace", "kube-system"},
			err: "flag provided but not defined: -events-namespace"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseFlags(c.args, io.Discard)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o, c.want) {
				t.Fatalf("parsed\n %+v\nwant\n %+v", o, c.want)
			}
		})
	}
}

func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", `apiVersion: v1
kind: Config
current-context: kind
contexts:
- name: other
  context: {cluster: nowhere, user: nobody}
- name: kind
  context: {cluster: kind, user: admin}
clusters:
- name: kind
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: Q0E=
users:
- name: admin
  user:
    client-certificate: certs/admin.crt
    client-key-data: S0VZ
`)
	cfg, err := loadKubeconfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || string(cfg.CAData) != "CA" || string(cfg.KeyData) != "KEY" ||
		cfg.CertFile != filepath.Join(dir, "certs/admin.crt") {
		t.Fatalf("config %+v", cfg)
	}
	bad := []struct{ name, body, err string }{
		{"no context", "current-context: x\n", `current-context "x" not found`},
		{"exec plugin", "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: https://x}}]\nusers: [{name: u, user: {exec: {command: aws}}}]\n", "exec or auth-provider"},
		{"no server", "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n", `cluster "c" not found`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if _, err := loadKubeconfig(write(c.name, c.body)); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err %v, want %q", err, c.err)
			}
		})
	}
}

// The end-to-end tests run the real static binary (as the DaemonSet, the QEMU guest and the bench do)
// inside a network namespace of its own.

var (
	buildOnce sync.Once
	binDir    string
	binErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildAgent builds the static binary once per test run.
func buildAgent(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "wirespeed-agent-test")
		if binErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(binDir, "wirespeed-agent"), ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatalf("build: %v", binErr)
	}
	return filepath.Join(binDir, "wirespeed-agent")
}

func sh(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// netnsWithVeth creates a named namespace (deleted when the test ends) holding a veth pair.
func netnsWithVeth(t *testing.T, name string) {
	t.Helper()
	_ = exec.Command("ip", "netns", "del", name).Run() // a leftover from a killed run
	sh(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	sh(t, "ip", "-n", name, "link", "set", "lo", "up")
	sh(t, "ip", "-n", name, "link", "add", "wstm0", "type", "veth", "peer", "name", "wstm1")
}

func mtuOf(t *testing.T, ns, link string) int {
	t.Helper()
	var out []struct {
		MTU int `json:"mtu"`
	}
	if err := json.Unmarshal([]byte(sh(t, "ip", "-n", ns, "-j", "link", "show", link)), &out); err != nil || len(out) != 1 {
		t.Fatalf("ip -j link show %s: %v", link, err)
	}
	return out[0].MTU
}

func files(t *testing.T, profile string, sysctls map[string]string) (profilePath, procSys string) {
	t.Helper()
	dir := t.TempDir()
	profilePath = filepath.Join(dir, "profile.json")
	if err := os.WriteFile(profilePath, []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	procSys = filepath.Join(dir, "proc-sys")
	for name, v := range sysctls {
		p := filepath.Join(procSys, strings.ReplaceAll(name, ".", "/"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return profilePath, procSys
}

const labProfile = `{"name":"lab","interfaces":{"roles":["virtual"],"include":["wst*"]},"mtu":{"value":1400},
"sysctls":{"net.core.netdev_max_backlog":32768.0}}`

func TestOnceEndToEnd(t *testing.T) {
	linkstest.RequireNetnsPrivilege(t) // before the build: a skip should cost nothing
	bin := buildAgent(t)
	const ns = "wst-agent-once"
	netnsWithVeth(t, ns)
	cases := []struct {
		name     string
		profile  string
		args     []string
		exit     int
		state    status.State
		mtu      int
		backlog  string
		noReport bool
	}{
		{name: "dry run reports drift", profile: labProfile, args: []string{"--dry-run"}, exit: 0, state: status.StateDryRun, mtu: 1500, backlog: "1000\n"},
		{name: "invalid profile touches nothing", profile: `{"name":"lab","mtu":{"value":1400},"sysctls":{"net.core.netdev_max_backlog":999}}`, exit: 2, mtu: 1500, backlog: "1000\n", noReport: true},
		{name: "applies", profile: labProfile, exit: 0, state: status.StateApplied, mtu: 1400, backlog: "32768\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			profilePath, procSys := files(t, c.profile, map[string]string{"net.core.netdev_max_backlog": "1000"})
			args := append([]string{"netns", "exec", ns, bin, "--once", "--profile", profilePath, "--proc-sys-root", procSys, "--listen", "", "--kube=false"}, c.args...)
			cmd := exec.Command("ip", args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != c.exit {
				t.Fatalf("exit %d (%v), want %d\nstderr: %s", code, err, c.exit, stderr.String())
			}
			if got := mtuOf(t, ns, "wstm0"); got != c.mtu {
				t.Errorf("MTU %d, want %d", got, c.mtu)
			}
			if b, _ := os.ReadFile(filepath.Join(procSys, "net/core/netdev_max_backlog")); string(b) != c.backlog {
				t.Errorf("backlog %q, want %q", b, c.backlog)
			}
			if c.noReport {
				if stdout.Len() != 0 || !strings.Contains(stderr.String(), "/sysctls/net.core.netdev_max_backlog") {
					t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
				}
				return
			}
			var rep status.Report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, stdout.String())
			}
			if rep.State != c.state || rep.Profile != "lab" || len(rep.Interfaces) != 2 {
				t.Fatalf("report %+v", rep)
			}
		})
	}
}

// The daemon re-applies to a link added while it runs, serves its endpoints, and on SIGTERM exits 0
// leaving the settings in place (no rollback).
func TestDaemonEndToEnd(t *testing.T) {
	linkstest.RequireNetnsPrivilege(t)
	bin := buildAgent(t)
	const ns = "wst-agent-daemon"
	netnsWithVeth(t, ns)
	profilePath, procSys := files(t, labProfile, map[string]string{"net.core.netdev_max_backlog": "1000"})
	cmd := exec.Command("ip", "netns", "exec", ns, bin, "--profile", profilePath, "--proc-sys-root", procSys,
		"--listen", "127.0.0.1:9808", "--kube=false")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := make(chan map[string]any, 256)
	go func() {
		defer close(logs)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil {
				logs <- rec
			}
		}
	}()
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	waitLog := func(what string, match func(map[string]any) bool) {
		t.Helper()
		guard := time.After(20 * time.Second)
		for {
			select {
			case rec, ok := <-logs:
				if !ok {
					t.Fatalf("agent exited before %s", what)
				}
				if match(rec) {
					return
				}
			case <-guard:
				t.Fatalf("no log line for %s", what)
			}
		}
	}
	applied := func(link string) func(map[string]any) bool {
		return func(r map[string]any) bool {
			return r["msg"] == "applied" && r["link"] == link && r["setting"] == "mtu" && r["to"] == 1400.0
		}
	}
	waitLog("wstm0 applied", applied("wstm0"))
	waitLog("first reconcile", func(r map[string]any) bool { return r["msg"] == "first reconcile" })

	sh(t, "ip", "-n", ns, "link", "add", "wstn0", "type", "veth", "peer", "name", "wstn1")
	waitLog("wstn0 applied", applied("wstn0"))
	if got := mtuOf(t, ns, "wstn0"); got != 1400 {
		t.Fatalf("wstn0 MTU %d", got)
	}

	for _, path := range []string{"/readyz", "/healthz", "/metrics"} {
		out := httpGetInNetns(t, ns, "127.0.0.1:9808", path)
		if !strings.HasPrefix(out, "HTTP/1.0 200") {
			t.Errorf("%s: %.200s", path, out)
		}
		if path == "/metrics" && !strings.Contains(out, "wirespeed_") {
			t.Errorf("/metrics has no wirespeed_ series:\n%.500s", out)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLog("clean stop", func(r map[string]any) bool { return r["msg"] == "stopped; settings left in place" })
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if got := mtuOf(t, ns, "wstn0"); got != 1400 {
		t.Fatalf("MTU rolled back to %d on exit", got)
	}
	if b, _ := os.ReadFile(filepath.Join(procSys, "net/core/netdev_max_backlog")); string(b) != "32768\n" {
		t.Fatalf("backlog rolled back: %q", b)
	}
}

// httpGetInNetns fetches path from addr inside a named namespace: the socket is opened by a thread that
// has entered the namespace, then used from anywhere.
func httpGetInNetns(t *testing.T, ns, addr, path string) string {
	t.Helper()
	conn, err := func() (net.Conn, error) {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			return nil, err
		}
		defer orig.Close()
		target, err := netns.GetFromName(ns)
		if err != nil {
			runtime.UnlockOSThread()
			return nil, err
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			runtime.UnlockOSThread()
			return nil, err
		}
		conn, dialErr := net.Dial("tcp", addr)
		if err := netns.Set(orig); err != nil {
			// Leave the thread locked: it dies with this goroutine instead of serving others from the wrong netns.
			return nil, fmt.Errorf("return from netns: %w", err)
		}
		runtime.UnlockOSThread()
		return conn, dialErr
	}()
	if err != nil {
		t.Fatalf("dial %s in %s: %v", addr, ns, err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, addr); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
