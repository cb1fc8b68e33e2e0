package qemu

// The harness boots Debian's generic kernel under qemu-system-x86_64 (TCG) with a throw-away initramfs:
// busybox-static as the userland, the real ethtool binary and its shared libraries (the independent
// witness of ring sizes), the NIC driver modules with their modules.dep dependencies, the static agent,
// a profile and a busybox-sh init script. The init script prints machine-readable lines on the serial
// console, all starting with "WS ":
//
//	WS <kind> <field>...                 one-line message
//	WS BEGIN <kind> <field>...           multi-line block (e.g. raw `ethtool -g` output, a JSON report) ...
//	WS END                               ... ended by this line
//
// The test side reads them in order (Guest.Next), drives QEMU through QMP where the scenario needs the
// host's hand (PCI hot-unplug/re-add), and fails with the console tail when the guest hangs or dies.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// phaseTimeout bounds each wait on the guest. It is a hang guard, never an assertion: TCG on a 2-core
// machine shared with other builds boots in about 7 s, so 4 minutes only trips on a real hang.
const phaseTimeout = 4 * time.Minute

// inCI reports whether a missing prerequisite must fail the test instead of skipping it.
func inCI() bool { return os.Getenv("CI") == "true" }

// requireTool finds a host binary the harness needs; missing in CI is a failure, locally a skip.
func requireTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found on PATH: install the Debian package %s (the real-driver tests need it)", name, pkg)
	if inCI() {
		t.Fatal(msg + "; CI=true, so this is a failure, not a skip")
	}
	t.Skip(msg)
	return ""
}

// requireStaticBusybox finds busybox-static's binary: the guest has no libc, so it must carry no ELF
// interpreter (Debian's dynamic "busybox" package installs the same path).
func requireStaticBusybox(t *testing.T) string {
	t.Helper()
	const path = "/bin/busybox"
	msg := ""
	if f, err := elf.Open(path); err != nil {
		msg = fmt.Sprintf("%s: %v", path, err)
	} else {
		if f.Section(".interp") != nil {
			msg = path + " is dynamically linked"
		}
		f.Close()
	}
	if msg == "" {
		return path
	}
	msg += ": install the Debian package busybox-static (the guest's only userland)"
	if inCI() {
		t.Fatal(msg + "; CI=true, so this is a failure, not a skip")
	}
	t.Skip(msg)
	return ""
}

// Kernel is an unpacked Debian kernel package (see fetch-kernel.sh).
type Kernel struct {
	Release string // e.g. 6.1.0-50-amd64
	Image   string // path of vmlinuz
	modDir  string // lib/modules/<release>
	deps    map[string][]string
	byName  map[string]string // module name (underscores) -> path relative to modDir
	builtin map[string]bool   // module names built into the image (modules.builtin): nothing to load
}

var (
	kernelOnce sync.Once
	kernelVal  *Kernel
	kernelErr  error
)

// fetchKernel runs fetch-kernel.sh (idempotent) once per test binary and indexes modules.dep.
func fetchKernel(t *testing.T) *Kernel {
	t.Helper()
	kernelOnce.Do(func() {
		out, err := exec.Command("./fetch-kernel.sh").Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				err = fmt.Errorf("%w: %s", err, ee.Stderr)
			}
			kernelErr = fmt.Errorf("fetch-kernel.sh: %w", err)
			return
		}
		kernelVal, kernelErr = loadKernel(strings.TrimSpace(string(out)))
	})
	if kernelErr != nil {
		t.Fatal(kernelErr)
	}
	return kernelVal
}

func loadKernel(tree string) (*Kernel, error) {
	rel, err := os.ReadFile(filepath.Join(tree, "release"))
	if err != nil {
		return nil, err
	}
	k := &Kernel{
		Release: strings.TrimSpace(string(rel)),
		deps:    map[string][]string{},
		byName:  map[string]string{},
	}
	k.Image = filepath.Join(tree, "boot", "vmlinuz-"+k.Release)
	k.modDir = filepath.Join(tree, "lib", "modules", k.Release)
	dep, err := os.ReadFile(filepath.Join(k.modDir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	builtin, err := os.ReadFile(filepath.Join(k.modDir, "modules.builtin"))
	if err != nil {
		return nil, err
	}
	k.builtin = map[string]bool{}
	for _, line := range strings.Fields(string(builtin)) {
		k.builtin[moduleName(line)] = true
	}
	for _, line := range strings.Split(string(dep), "\n") {
		mod, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k.deps[mod] = strings.Fields(rest)
		k.byName[moduleName(mod)] = mod
	}
	return k, nil
}

// moduleName turns kernel/drivers/i2c/algos/i2c-algo-bit.ko into i2c_algo_bit, as the kernel names it.
func moduleName(path string) string {
	base := filepath.Base(path)
	for _, ext := range moduleCompressors {
		base = strings.TrimSuffix(base, ext.suffix)
	}
	return strings.ReplaceAll(strings.TrimSuffix(base, ".ko"), "-", "_")
}

// moduleCompressors: Debian's 6.1 kernels ship plain .ko, its 6.12 kernels .ko.xz; busybox insmod takes
// only plain ELF, so compressed modules are unpacked on the host.
var moduleCompressors = []struct{ suffix, tool string }{{".xz", "xz"}, {".zst", "zstd"}}

// moduleBytes returns a module file's ELF bytes, decompressing .ko.xz/.ko.zst with the host tool.
func moduleBytes(path string) ([]byte, error) {
	for _, c := range moduleCompressors {
		if strings.HasSuffix(path, c.suffix) {
			out, err := exec.Command(c.tool, "-dc", path).Output()
			if err != nil {
				return nil, fmt.Errorf("%s -dc %s: %w", c.tool, path, err)
			}
			return out, nil
		}
	}
	return os.ReadFile(path)
}

// loadOrder returns the module files to insmod, dependencies first, each once.
func (k *Kernel) loadOrder(names []string) ([]string, error) {
	var order []string
	seen := map[string]bool{}
	var visit func(mod string)
	visit = func(mod string) {
		if seen[mod] {
			return
		}
		seen[mod] = true
		// modules.dep lists the full transitive closure, in an order where a module's own dependencies
		// come later; visiting each first gives a valid insmod order.
		for _, d := range k.deps[mod] {
			visit(d)
		}
		order = append(order, mod)
	}
	for _, n := range names {
		n = strings.ReplaceAll(n, "-", "_")
		mod, ok := k.byName[n]
		if !ok && k.builtin[n] {
			continue // e.g. virtio_pci is =y in Debian's 6.12 config, =m in 6.1
		}
		if !ok {
			return nil, fmt.Errorf("module %q is not in %s/modules.dep (is it built in or missing from this flavour?)", n, k.modDir)
		}
		visit(mod)
	}
	return order, nil
}

// cpioWriter writes the "newc" (SVR4, no CRC) archive format the kernel unpacks into the initramfs.
type cpioWriter struct {
	w   io.Writer
	ino int
	err error
}

func (c *cpioWriter) entry(name string, mode uint32, data []byte) {
	if c.err != nil {
		return
	}
	c.ino++
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	var b bytes.Buffer
	b.WriteString(hdr)
	b.WriteString(name)
	b.WriteByte(0)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	b.Write(data)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	_, c.err = c.w.Write(b.Bytes())
}

const (
	modeDir  = 0o040755
	modeFile = 0o100644
	modeExec = 0o100755
	modeLink = 0o120777
)

// Initramfs collects files for the guest's root file system.
type Initramfs struct {
	files map[string]initFile
}

type initFile struct {
	mode uint32
	data []byte
}

func newInitramfs() *Initramfs { return &Initramfs{files: map[string]initFile{}} }

func (r *Initramfs) add(path string, mode uint32, data []byte) {
	path = strings.TrimPrefix(filepath.Clean(path), "/")
	for dir := filepath.Dir(path); dir != "."; dir = filepath.Dir(dir) {
		if _, ok := r.files[dir]; !ok {
			r.files[dir] = initFile{mode: modeDir}
		}
	}
	r.files[path] = initFile{mode: mode, data: data}
}

// copyHost adds a host file at guestPath, following symlinks (ldd names the links, the guest needs bytes).
func (r *Initramfs) copyHost(hostPath, guestPath string, mode uint32) error {
	data, err := os.ReadFile(hostPath)
	if err != nil {
		return err
	}
	r.add(guestPath, mode, data)
	return nil
}

var lddPath = regexp.MustCompile(`(/\S+) \(0x[0-9a-f]+\)`)

// copyDynamic adds a dynamically linked host binary with every shared library ldd resolves for it.
func (r *Initramfs) copyDynamic(hostBin, guestPath string) error {
	if err := r.copyHost(hostBin, guestPath, modeExec); err != nil {
		return err
	}
	out, err := exec.Command("ldd", hostBin).Output()
	if err != nil {
		return fmt.Errorf("ldd %s: %w", hostBin, err)
	}
	for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
		if err := r.copyHost(m[1], m[1], modeExec); err != nil {
			return err
		}
	}
	return nil
}

// write emits the archive as gzip'd newc cpio (the kernel's CONFIG_RD_GZIP path).
func (r *Initramfs) write(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	c := &cpioWriter{w: gz}
	names := make([]string, 0, len(r.files))
	for n := range r.files {
		names = append(names, n)
	}
	sort.Strings(names) // parents sort before children
	for _, n := range names {
		c.entry(n, r.files[n].mode, r.files[n].data)
	}
	c.entry("TRAILER!!!", 0, nil)
	if c.err != nil {
		return c.err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}

// guestPrelude starts every init script: busybox applets, pseudo file systems, the driver modules, and the
// shell helpers scenarios use. ws_wait polls a condition (hang guard only, 0.2 s steps): on timeout it
// prints "WS timeout <what>" with the kernel log tail so the test fails saying what never happened.
const guestPrelude = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# Keep kernel messages off the console after boot so they cannot split our result lines; dmesg still has them.
echo 1 >/proc/sys/kernel/printk
# The firmware leaves its last console line unterminated; start ours on a fresh line.
echo
echo "WS boot $(uname -r)"
for m in $(cat /modules/order); do
	insmod /modules/$m || echo "WS error insmod $m"
done
ip link set lo up

ws_wait() { # ws_wait WHAT TRIES CMD...: poll CMD until it succeeds
	what=$1 tries=$2; shift 2
	while ! "$@" >/dev/null 2>&1; do
		tries=$((tries - 1))
		if [ $tries -le 0 ]; then
			echo "WS timeout $what"
			echo "WS BEGIN dmesg"; dmesg | tail -n 40; echo "WS END"
			[ -f /tmp/agentd.log ] && { echo "WS BEGIN agent-log at-timeout"; cat /tmp/agentd.log; echo "WS END"; }
			return 1
		fi
		sleep 0.2
	done
}
ws_rings() { # ws_rings PHASE IFACE: raw ethtool -g, parsed by the test
	echo "WS BEGIN rings $1 $2"; ethtool -g "$2" 2>&1; echo "WS END"
}
ws_current() { # ws_current IFACE -> "RX TX" current ring sizes
	ethtool -g "$1" 2>/dev/null | awk '/^Current/{c=1} c&&/^RX:/{r=$2} c&&/^TX:/{t=$2} END{print r" "t}'
}
ws_rings_are() { # ws_rings_are IFACE RX TX: true when the current rings are RX/TX
	[ "$(ws_current "$1")" = "$2 $3" ]
}
ws_driver() { # ws_driver IFACE -> kernel driver bound to the link's device
	basename "$(readlink /sys/class/net/$1/device/driver)"
}
ws_ifaces() { # ws_ifaces DRIVER -> links bound to DRIVER, sorted
	for d in /sys/class/net/*; do
		n=${d##*/}
		[ -e "$d/device/driver" ] && [ "$(ws_driver "$n")" = "$1" ] && echo "$n"
	done | sort
}
ws_has_iface() { [ -n "$(ws_ifaces "$1")" ]; }
ws_no_iface() { [ -z "$(ws_ifaces "$1")" ]; }
ws_iface_count_is() { [ "$(ws_ifaces "$1" | wc -l)" -eq "$2" ]; }
ws_agent() { # ws_agent PHASE PROFILE ARGS...: run the agent once; its stdout (the status report) as a block
	phase=$1 profile=$2; shift 2
	echo "WS BEGIN report $phase"
	/wirespeed-agent --profile "$profile" --listen "" --node-name qemu-guest "$@" 2>/tmp/agent-$phase.log
	rc=$?
	echo "WS END"
	echo "WS agent-exit $phase $rc"
	echo "WS BEGIN agent-log $phase"; cat /tmp/agent-$phase.log; echo "WS END"
}
ws_agent_start() { # ws_agent_start PROFILE: the long-running agent; resync 1h so only link events re-tune
	/wirespeed-agent --profile "$1" --listen 127.0.0.1:9808 --node-name qemu-guest --resync 1h 2>/tmp/agentd.log &
	agent_pid=$!
	echo "WS agent-started $agent_pid"
}
ws_metric_ring_is() { # ws_metric_ring_is IFACE DIRECTION VALUE: the running agent exports that current ring
	wget -qO- http://127.0.0.1:9808/metrics | grep '^wirespeed_agent_ring_current_entries{' |
		grep "interface=\"$1\"" | grep "direction=\"$2\"" | grep -q " $3\$"
}
ws_metrics() { # ws_metrics PHASE IFACE RX TX: once the exported rings catch up with ethtool, print the metrics
	ws_wait "metrics-$1" 600 ws_metric_ring_is "$2" rx "$3" && ws_wait "metrics-$1" 600 ws_metric_ring_is "$2" tx "$4"
	echo "WS BEGIN metrics $1"; wget -qO- http://127.0.0.1:9808/metrics | grep '^wirespeed_'; echo "WS END"
	echo "WS healthz $1 $(wget -qO- http://127.0.0.1:9808/healthz >/dev/null 2>&1 && echo ok || echo failing)"
}
ws_agent_alive() { # the same process the scenario started is still running (never restarted)
	kill -0 "$agent_pid" && echo "WS agent-alive $agent_pid"
}
ws_agent_stop() { # SIGTERM, then the daemon's exit code and its log
	kill -TERM "$agent_pid"
	wait "$agent_pid"
	echo "WS agent-exit daemon $?"
	echo "WS BEGIN agent-log daemon"; cat /tmp/agentd.log; echo "WS END"
}
`

// guestEpilogue ends every init script: -no-reboot turns the reboot into QEMU exiting.
const guestEpilogue = `
echo "WS done"
reboot -f
`

// Spec describes one guest boot.
type Spec struct {
	Modules []string          // driver modules to load (dependencies added from modules.dep)
	QEMU    []string          // extra QEMU arguments: netdevs and devices
	Script  string            // scenario body of the init script, between prelude and epilogue
	Files   map[string][]byte // extra guest files (e.g. "profile.json")
	Agent   string            // host path of the static agent binary, installed as /wirespeed-agent
}

// Msg is one "WS" line from the guest, with its block body when it was a BEGIN ... END block.
type Msg struct {
	Kind   string
	Fields []string
	Body   []string
}

func (m Msg) String() string { return "WS " + m.Kind + " " + strings.Join(m.Fields, " ") }

// Guest is one running QEMU.
type Guest struct {
	t       *testing.T
	cmd     *exec.Cmd
	msgs    chan Msg
	exited  chan struct{}
	waitErr error
	qmp     *QMP
	qmpSock string

	mu   sync.Mutex
	tail []string // last console lines, for failure messages
}

const tailLines = 80

// Boot builds the initramfs for spec and starts QEMU. The guest is killed when the test ends.
func Boot(t *testing.T, spec Spec) *Guest {
	t.Helper()
	qemuBin := requireTool(t, "qemu-system-x86_64", "qemu-system-x86 (bookworm-backports: QEMU >= 8 emulates igb)")
	busybox := requireStaticBusybox(t)
	ethtool := requireTool(t, "ethtool", "ethtool")
	k := fetchKernel(t)

	root := newInitramfs()
	if err := root.copyHost(busybox, "bin/busybox", modeExec); err != nil {
		t.Fatal(err)
	}
	if err := root.copyDynamic(ethtool, "sbin/ethtool"); err != nil {
		t.Fatal(err)
	}
	order, err := k.loadOrder(spec.Modules)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mod := range order {
		data, err := moduleBytes(filepath.Join(k.modDir, mod))
		if err != nil {
			t.Fatal(err)
		}
		base := moduleName(mod) + ".ko"
		root.add("modules/"+base, modeFile, data)
		names = append(names, base)
	}
	root.add("modules/order", modeFile, []byte(strings.Join(names, "\n")+"\n"))
	if spec.Agent != "" {
		if err := root.copyHost(spec.Agent, "wirespeed-agent", modeExec); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range spec.Files {
		root.add(p, modeFile, data)
	}
	root.add("init", modeExec, []byte(guestPrelude+spec.Script+guestEpilogue))
	root.add("tmp", modeDir, nil)
	for _, d := range []string{"proc", "sys", "dev"} {
		root.add(d, modeDir, nil)
	}

	dir := t.TempDir()
	initrd := filepath.Join(dir, "initrd.gz")
	if err := root.write(initrd); err != nil {
		t.Fatal(err)
	}
	// A unix socket path must fit in 108 bytes; t.TempDir() paths grow with the test name.
	sockDir, err := os.MkdirTemp("", "wsqmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "qmp.sock")

	args := []string{
		"-machine", "q35", "-accel", "tcg", // /dev/kvm exists here but cannot run a guest
		"-smp", "1", "-m", "512M", // one vCPU: the host's 2 cores are shared
		"-nographic", "-monitor", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", k.Image, "-initrd", initrd,
		// no_timer_check: under TCG on a busy host the kernel's IO-APIC timer check can miss its ticks and panic
		// ("IO-APIC + timer doesn't work"); the check proves nothing about an emulated timer.
		"-append", "console=ttyS0 panic=-1 quiet no_timer_check",
		"-qmp", "unix:" + sock + ",server=on,wait=off",
		"-nic", "none", // no implicit default NIC: a scenario's devices are the only ones
	}
	args = append(args, spec.QEMU...)
	g := &Guest{t: t, msgs: make(chan Msg, 64), exited: make(chan struct{}), qmpSock: sock}
	g.cmd = exec.Command(qemuBin, args...)
	stdout, err := g.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g.cmd.Stderr = g.cmd.Stdout // QEMU's own warnings belong in the same log
	t.Logf("qemu: %s %s", qemuBin, strings.Join(args, " "))
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go g.readConsole(stdout)
	t.Cleanup(func() {
		select {
		case <-g.exited:
		default:
			_ = g.cmd.Process.Kill()
			// The console reader may be blocked handing over a message nobody reads any more.
			for range g.msgs {
			}
			<-g.exited
		}
		if g.qmp != nil {
			g.qmp.Close()
		}
	})
	return g
}

// readConsole streams the serial console to the test log and turns WS lines into messages.
func (g *Guest) readConsole(r io.Reader) {
	defer func() {
		g.waitErr = g.cmd.Wait()
		close(g.msgs)
		close(g.exited)
	}()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var block *Msg
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		g.t.Log("guest| " + line)
		g.mu.Lock()
		g.tail = append(g.tail, line)
		if len(g.tail) > tailLines {
			g.tail = g.tail[len(g.tail)-tailLines:]
		}
		g.mu.Unlock()
		if block != nil {
			if line == "WS END" {
				g.msgs <- *block
				block = nil
			} else {
				block.Body = append(block.Body, line)
			}
			continue
		}
		rest, ok := strings.CutPrefix(line, "WS ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		if f[0] == "BEGIN" && len(f) > 1 {
			block = &Msg{Kind: f[1], Fields: f[2:]}
			continue
		}
		g.msgs <- Msg{Kind: f[0], Fields: f[1:]}
	}
}

// consoleTail returns the last console lines for a failure message.
func (g *Guest) consoleTail() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Join(g.tail, "\n")
}

// Next returns the next guest message. A "timeout" or "error" message from the guest, QEMU exiting, or
// no message within phaseTimeout fails the test with the console tail.
func (g *Guest) Next() Msg {
	g.t.Helper()
	select {
	case m, ok := <-g.msgs:
		if !ok {
			g.t.Fatalf("guest exited (%v) while the test waited for a message; console tail:\n%s", g.waitErr, g.consoleTail())
		}
		if m.Kind == "timeout" || m.Kind == "error" {
			g.drainDiagnostics()
			g.t.Fatalf("guest reported %s; console tail:\n%s", m, g.consoleTail())
		}
		return m
	case <-time.After(phaseTimeout):
		g.t.Fatalf("no message from the guest within %v; console tail:\n%s", phaseTimeout, g.consoleTail())
	}
	return Msg{}
}

// drainDiagnostics lets the guest finish printing what it dumps after a failure (dmesg, agent log), so
// the failure message carries it: until the guest goes quiet for a few seconds, says done, or exits.
func (g *Guest) drainDiagnostics() {
	for {
		select {
		case m, ok := <-g.msgs:
			if !ok || m.Kind == "done" {
				return
			}
		case <-time.After(5 * time.Second):
			return
		}
	}
}

// Expect returns the next message and fails unless it has the given kind and leading fields.
func (g *Guest) Expect(kind string, fields ...string) Msg {
	g.t.Helper()
	m := g.Next()
	if m.Kind != kind || len(m.Fields) < len(fields) || !slices.Equal(m.Fields[:len(fields)], fields) {
		g.t.Fatalf("guest said %q, test expected WS %s %s; console tail:\n%s",
			m, kind, strings.Join(fields, " "), g.consoleTail())
	}
	return m
}

// Finish waits for the guest's "done" and for QEMU to exit.
func (g *Guest) Finish() {
	g.t.Helper()
	g.Expect("done")
	select {
	case <-g.exited:
	case <-time.After(phaseTimeout):
		g.t.Fatalf("QEMU did not exit after the guest rebooted; console tail:\n%s", g.consoleTail())
	}
}

// Rings is what `ethtool -g` reports.
type Rings struct {
	MaxRX, MaxTX int
	RX, TX       int
}

// parseEthtoolRings reads `ethtool -g` output ("Pre-set maximums:" then "Current hardware settings:",
// each with "RX:", "RX Mini:", "RX Jumbo:", "TX:" lines; newer ethtool adds more lines, which are ignored).
func parseEthtoolRings(lines []string) (Rings, error) {
	var r Rings
	section := ""
	seen := 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "Pre-set maximums"):
			section = "max"
		case strings.HasPrefix(l, "Current hardware settings"):
			section = "cur"
		default:
			key, val, ok := strings.Cut(l, ":")
			if !ok || (key != "RX" && key != "TX") || section == "" {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(val))
			if err != nil {
				return r, fmt.Errorf("ethtool -g line %q: %w", l, err)
			}
			switch section + key {
			case "maxRX":
				r.MaxRX = n
			case "maxTX":
				r.MaxTX = n
			case "curRX":
				r.RX = n
			case "curTX":
				r.TX = n
			}
			seen++
		}
	}
	if seen != 4 {
		return r, fmt.Errorf("ethtool -g output lacks RX/TX maximums or current values:\n%s", strings.Join(lines, "\n"))
	}
	return r, nil
}

// ExpectRings waits for a "rings PHASE IFACE" block and returns the parsed ethtool view.
func (g *Guest) ExpectRings(phase string) (iface string, r Rings) {
	g.t.Helper()
	m := g.Expect("rings", phase)
	if len(m.Fields) < 2 {
		g.t.Fatalf("rings message without interface: %q", m)
	}
	r, err := parseEthtoolRings(m.Body)
	if err != nil {
		g.t.Fatalf("phase %s, %s: %v", phase, m.Fields[1], err)
	}
	return m.Fields[1], r
}

// QMP connects to the guest's QMP socket (once) and returns the client.
func (g *Guest) QMP() *QMP {
	g.t.Helper()
	if g.qmp != nil {
		return g.qmp
	}
	q, err := DialQMP(g.qmpSock)
	if err != nil {
		g.t.Fatalf("QMP: %v; console tail:\n%s", err, g.consoleTail())
	}
	g.qmp = q
	return q
}

// QMP is a minimal client for QEMU's JSON machine protocol over a unix socket: commands get exactly one
// "return" or "error" reply, in order; asynchronous "event" messages may arrive at any time in between.
type QMP struct {
	conn    net.Conn
	replies chan qmpMsg
	events  chan qmpMsg
	mu      sync.Mutex // one command in flight
}

type qmpMsg struct {
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
	QMP   json.RawMessage `json:"QMP"`
}

// DialQMP connects, reads the greeting and leaves capabilities-negotiation mode.
func DialQMP(sock string) (*QMP, error) {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	q := &QMP{conn: conn, replies: make(chan qmpMsg, 1), events: make(chan qmpMsg, 64)}
	dec := json.NewDecoder(conn)
	var greeting qmpMsg
	if err := dec.Decode(&greeting); err != nil || greeting.QMP == nil {
		conn.Close()
		return nil, fmt.Errorf("QMP greeting: %v (%s)", err, greeting.QMP)
	}
	go func() {
		defer close(q.replies)
		for {
			var m qmpMsg
			if err := dec.Decode(&m); err != nil {
				return
			}
			if m.Event != "" {
				select {
				case q.events <- m:
				default: // nobody waits for this many events; dropping keeps the reader alive
				}
				continue
			}
			q.replies <- m
		}
	}()
	if _, err := q.Execute("qmp_capabilities", nil); err != nil {
		conn.Close()
		return nil, err
	}
	return q, nil
}

// Execute runs one command and returns its "return" value, or its "error" as a Go error.
func (q *QMP) Execute(cmd string, args any) (json.RawMessage, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	req := map[string]any{"execute": cmd}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := q.conn.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	select {
	case m, ok := <-q.replies:
		if !ok {
			return nil, fmt.Errorf("QMP %s: connection closed", cmd)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("QMP %s: %s: %s", cmd, m.Error.Class, m.Error.Desc)
		}
		return m.Return, nil
	case <-time.After(phaseTimeout):
		return nil, fmt.Errorf("QMP %s: no reply within %v", cmd, phaseTimeout)
	}
}

// WaitEvent waits for an event with the given name whose data contains the given key/value pairs.
func (q *QMP) WaitEvent(ctx context.Context, name string, match map[string]string) (json.RawMessage, error) {
	for {
		select {
		case m := <-q.events:
			if m.Event != name {
				continue
			}
			var data map[string]any
			_ = json.Unmarshal(m.Data, &data)
			ok := true
			for k, v := range match {
				if fmt.Sprint(data[k]) != v {
					ok = false
				}
			}
			if ok {
				return m.Data, nil
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("QMP event %s %v: %w", name, match, ctx.Err())
		}
	}
}

// Close ends the QMP session.
func (q *QMP) Close() { q.conn.Close() }
