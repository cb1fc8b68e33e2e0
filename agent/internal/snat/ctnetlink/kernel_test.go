package ctnetlink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// The kernel side, for real: a network namespace of the test's own with a conntrack table (an nftables rule
// that reads ct state turns it on there), a "pod" address and an "external" one on its loopback, and TCP
// and UDP flows between them. The namespace's conntrack table and timeouts are its own, so nothing else on
// the machine is read or changed.

const (
	podAddr = "10.244.1.10" // internal: RFC 1918
	extAddr = "192.0.2.10"  // external: TEST-NET-1 (RFC 5737), only ever on the namespace's loopback
)

type lab struct {
	name string
	fd   netns.NsHandle
	// port is the last UDP source port used: each flow gets its own, below the ephemeral range, so no two
	// flows share a tuple (one that did would be the same conntrack entry, with no NEW event of its own).
	port int
}

func newLab(t *testing.T) *lab {
	t.Helper()
	linkstest.RequireNetnsPrivilege(t)
	name := fmt.Sprintf("wsct-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	for _, args := range [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "addr", "add", podAddr + "/32", "dev", "lo"},
		{"ip", "addr", "add", extAddr + "/32", "dev", "lo"},
		{"nft", "add table ip wsct"},
		{"nft", "add chain ip wsct out { type filter hook output priority 0; ct state new accept; }"},
		// Closed flows leave the table 1 s after their FIN instead of 120 s (this namespace only).
		{"sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_timeout_time_wait=1"},
	} {
		run(t, append([]string{"ip", "netns", "exec", name}, args...)...)
	}
	fd, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fd.Close() })
	return &lab{name: name, fd: fd}
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// in runs fn on a thread inside the namespace: sockets it opens stay there.
func (l *lab) in(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine, not back in the pool
		if err := netns.Set(l.fd); err != nil {
			t.Error(err)
			return
		}
		fn()
	}()
	<-done
}

// server accepts TCP on extAddr:443 and closes each connection when the client does.
func (l *lab) server(t *testing.T) {
	var ln net.Listener
	l.in(t, func() {
		var err error
		if ln, err = net.Listen("tcp", extAddr+":443"); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = c.Read(make([]byte, 1)); _ = c.Close() }()
		}
	}()
}

func (l *lab) dial(t *testing.T, n int) []net.Conn {
	var conns []net.Conn
	l.in(t, func() {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(podAddr)}}
		for range n {
			c, err := d.Dial("tcp", extAddr+":443")
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
	})
	return conns
}

func (l *lab) udp(t *testing.T, n int) { l.udpTo(t, extAddr, n) }

func (l *lab) udpTo(t *testing.T, dst string, n int) {
	l.in(t, func() {
		for range n {
			l.port++
			c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(podAddr), Port: 10000 + l.port},
				&net.UDPAddr{IP: net.ParseIP(dst), Port: 53})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = c.Write([]byte("x"))
			_ = c.Close()
		}
	})
}

func (l *lab) conntrack(buffer int) Conntrack {
	return Conntrack{NetNS: int(l.fd), ReceiveBuffer: buffer, Timeouts: Timeouts{TCPTimeWait: time.Second,
		TCPClose: 10 * time.Second, UDP: 30 * time.Second, UDPStream: 120 * time.Second}}
}

func dumpCount(t *testing.T, c Conntrack, peer string, proto uint8) int {
	t.Helper()
	n := 0
	err := c.Dump(context.Background(), func(f snat.Flow) {
		if f.Peer.String() == peer && f.Proto == proto && f.OrigSrc.String() == podAddr {
			n++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestKernelDumpAndEvents(t *testing.T) {
	l := newLab(t)
	l.server(t)
	c := l.conntrack(1 << 20)
	events, err := c.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	var mu sync.Mutex
	var news, destroys []snat.Flow
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			_ = events.Next(ctx, func(f snat.Flow, destroyed bool) {
				mu.Lock()
				defer mu.Unlock()
				if f.Peer.String() != extAddr+":443" {
					return
				}
				if destroyed {
					destroys = append(destroys, f)
				} else {
					news = append(news, f)
				}
			})
		}
	}()
	conns := l.dial(t, 5)
	if n := dumpCount(t, c, extAddr+":443", snat.ProtoTCP); n != 5 {
		t.Fatalf("dump found %d of 5 open flows", n)
	}
	l.udp(t, 3)
	if n := dumpCount(t, c, extAddr+":53", snat.ProtoUDP); n != 3 {
		t.Fatalf("dump found %d of 3 UDP flows", n)
	}
	for _, cn := range conns[:2] {
		_ = cn.Close()
	}
	// The entries leave TIME_WAIT after 1 s; a dump evicts expired entries at once (conntrack's GC would
	// take up to a minute), which sends their DESTROY events.
	deadline := time.Now().Add(20 * time.Second)
	for {
		time.Sleep(500 * time.Millisecond)
		dumpCount(t, c, extAddr+":443", snat.ProtoTCP)
		mu.Lock()
		n := len(destroys)
		mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(news) != 5 || len(destroys) != 2 {
		t.Fatalf("events: %d NEW (want 5), %d DESTROY (want 2)", len(news), len(destroys))
	}
	for _, f := range destroys {
		// Died in TIME_WAIT: it went quiet one time_wait timeout before its removal.
		if f.Quiet != time.Second || f.OrigSrc.String() != podAddr {
			t.Errorf("destroyed flow %+v: quiet %s, want 1s", f, f.Quiet)
		}
	}
}

func TestKernelEventOverflowIsReported(t *testing.T) {
	l := newLab(t)
	c := l.conntrack(4096) // the smallest buffer the kernel allows: a few events fill it
	events, err := c.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	l.udp(t, 500) // nobody reads the events meanwhile
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		err := events.Next(ctx, func(snat.Flow, bool) {})
		if errors.Is(err, snat.ErrOverflow) {
			return
		}
		if err != nil {
			t.Fatalf("no ENOBUFS after 500 unread events: %v", err)
		}
	}
}

// Events lost after an ENOBUFS was read, while the queue has not yet drained, are lost without another one:
// the kernel reports ENOBUFS once per congestion (netlink_overrun sets it only when NETLINK_S_CONGESTED was
// clear, and netlink_rcv_wake clears that only once the queue is empty). Next still reports them, from the
// socket's drop count, so the Watcher dumps again after them too.
func TestKernelEventsLostWithoutASecondENOBUFSAreReported(t *testing.T) {
	l := newLab(t)
	c := l.conntrack(4096)
	events, err := c.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l.udp(t, 500) // fills the queue: the first drop raises ENOBUFS and marks the socket congested
	if err := events.Next(ctx, func(snat.Flow, bool) {}); !errors.Is(err, snat.ErrOverflow) {
		t.Fatalf("first Next after 500 unread events: %v, want ErrOverflow", err)
	}
	// That Next returned at the error and left the queue full: these events are all dropped, silently.
	l.udp(t, 500)
	if err := events.Next(ctx, func(snat.Flow, bool) {}); !errors.Is(err, snat.ErrOverflow) {
		t.Fatalf("Next after 500 more events dropped from a congested socket: %v, want ErrOverflow", err)
	}
	// Once counted, a loss is not reported again: the queue has drained and nothing was lost since.
	l.udp(t, 1)
	if err := events.Next(ctx, func(snat.Flow, bool) {}); err != nil {
		t.Fatalf("Next after one more event: %v, want nil", err)
	}
}

// One Next takes every event queued since the last read (the reader wakes once per batch, not per event),
// and a Next waiting on a quiet socket ends as soon as its context does.
func TestKernelEventsBatchAndCancel(t *testing.T) {
	l := newLab(t)
	c := l.conntrack(1 << 20)
	events, err := c.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	l.udp(t, 50) // 50 NEW events queue while nobody reads
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	news := 0
	if err := events.Next(ctx, func(f snat.Flow, destroyed bool) {
		if !destroyed && f.Peer.String() == extAddr+":53" {
			news++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if news != 50 {
		t.Fatalf("one Next handed on %d of the 50 queued NEW events", news)
	}
	quiet, stop := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, stop)
	start := time.Now()
	err = events.Next(quiet, func(snat.Flow, bool) {})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("Next on a quiet socket: %v after %s, want context.Canceled soon after 200ms", err, time.Since(start))
	}
	// A later Next with a live context reads again: the cancelled one left no deadline behind.
	l.udp(t, 1)
	if err := events.Next(ctx, func(snat.Flow, bool) {}); err != nil {
		t.Fatalf("Next after a cancelled one: %v", err)
	}
}

// With a Classifier, the kernel drops the events of flows it would not count before they are queued: a pod's
// flows to an internal address never reach the agent, its flows outside all do.
func TestKernelFilterDropsEventsOfInternalFlows(t *testing.T) {
	l := newLab(t)
	c := l.conntrack(1 << 20)
	cl := snat.NewClassifier(nil, false)
	c.Classifier = &cl
	events, err := c.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	l.udpTo(t, podAddr, 30) // internal: RFC 1918 to itself
	l.udp(t, 7)             // external
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	peers := map[string]int{}
	if err := events.Next(ctx, func(f snat.Flow, _ bool) { peers[f.Peer.Addr().String()]++ }); err != nil {
		t.Fatal(err)
	}
	if len(peers) != 1 || peers[extAddr] != 7 {
		t.Fatalf("events by peer %v, want only the 7 to %s", peers, extAddr)
	}
	// Without the filter the same internal flows do arrive, so the test above saw the filter at work.
	c.Classifier = nil
	plain, err := c.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	l.udpTo(t, podAddr, 3)
	n := 0
	if err := plain.Next(ctx, func(f snat.Flow, _ bool) {
		if f.Peer.Addr().String() == podAddr {
			n++
		}
	}); err != nil || n != 3 {
		t.Fatalf("unfiltered: %d events to %s (want 3), err %v", n, podAddr, err)
	}
}

// An entry made before anyone subscribed never sends a DESTROY: with net.netfilter.nf_conntrack_events at
// its default 2 the kernel gives an entry its event cache only while a listener exists. The startup dump
// finds such flows open; without the Watcher's sweeps they stayed open for good (the SNAT bench's table
// held ~50,000 open flows more than the kernel's entries, the whole table at the agent's start).
func TestKernelFlowsOlderThanTheSubscriptionAreClosedBySweeps(t *testing.T) {
	l := newLab(t)
	run(t, "ip", "netns", "exec", l.name, "sysctl", "-qw", "net.netfilter.nf_conntrack_udp_timeout=3")
	l.udp(t, 5) // before the subscription: no event cache, so no DESTROY when they expire
	tab := snat.NewTable(snat.Config{Classifier: snat.NewClassifier(nil, false), TCPHold: time.Minute,
		UDPHold: time.Minute, Top: 5, PeakWindow: time.Hour, MaxTracked: 1000}, time.Now())
	w := &snat.Watcher{Table: tab, Source: l.conntrack(1 << 20), SweepEvery: 200 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	seen, open := false, -1
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		open = tab.Tick(time.Now()).Open
		seen = seen || open == 5
		if seen && open == 0 {
			break
		}
	}
	if !seen || open != 0 {
		t.Fatalf("open flows: saw the dump's 5: %v; now %d, want 0 once their entries expired", seen, open)
	}
}
