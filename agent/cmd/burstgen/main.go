// Command burstgen is the traffic side of bench/microburst-lab: it sends bursts of small UDP packets, counts
// what a receiving socket gets, and snapshots /proc/net/softnet_stat.
//
//	burstgen send --netns NAME --dst IP:PORT [--bursts 50 --burst-size 6000 --gap 50ms --frame 64]
//	burstgen recv --listen IP:PORT             (counts until SIGTERM/SIGINT, then prints JSON)
//	burstgen softnet [--since FILE]            (JSON snapshot, or the per-CPU delta since a snapshot)
//
// send only ever transmits inside a lab: it refuses unless it runs in the named network namespace NAME
// (created by the lab under /run/netns), that namespace holds nothing but loopback and veth links, and the
// kernel routes the destination on-link through a veth (no gateway). A veth only reaches its peer, which the
// lab created in its receiver namespace, so no packet can leave the lab.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/wirespeed-io/wirespeed/agent/internal/softnet"
)

// Header sizes without FCS (veth frames carry none): Ethernet 14 (IEEE 802.3), IPv4 20 (RFC 791, no
// options), UDP 8 (RFC 768).
const headers = 14 + 20 + 8

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "send":
		err = send(os.Args[2:], os.Stdout)
	case "recv":
		err = recv(os.Args[2:], os.Stdout)
	case "softnet":
		err = snapshot(os.Args[2:], os.Stdout)
	case "-h", "--help", "help":
		usage(os.Stdout)
		return
	default:
		usage(os.Stderr)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "burstgen %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: burstgen send --netns NAME --dst IP:PORT [--bursts N --burst-size N --gap D --frame BYTES]")
	fmt.Fprintln(w, "       burstgen recv --listen IP:PORT")
	fmt.Fprintln(w, "       burstgen softnet [--since SNAPSHOT.json]")
}

type sendResult struct {
	Bursts      int     `json:"bursts"`
	BurstSize   int     `json:"burst_size"`
	GapMS       float64 `json:"gap_ms"`
	FrameBytes  int     `json:"frame_bytes"`
	Sent        int     `json:"sent"`
	SendErrors  int     `json:"send_errors"`
	MaxBurstMS  float64 `json:"max_burst_ms"` // longest time to emit one burst: a burst must fit well inside the gap
	ElapsedSecs float64 `json:"elapsed_s"`
}

func send(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	netnsName := fs.String("netns", "", "named network namespace (/run/netns/NAME) this process must be running in")
	dst := fs.String("dst", "", "destination IP:PORT, on-link through a veth")
	bursts := fs.Int("bursts", 50, "number of bursts (1..100000)")
	burstSize := fs.Int("burst-size", 6000, "packets per burst (1..1000000)")
	gap := fs.Duration("gap", 50*time.Millisecond, "time from one burst start to the next (1ms..10s)")
	frame := fs.Int("frame", 64, "Ethernet frame size without FCS (42..1514)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkRange("--bursts", *bursts, 1, 100000); err != nil {
		return err
	}
	if err := checkRange("--burst-size", *burstSize, 1, 1000000); err != nil {
		return err
	}
	if err := checkRange("--frame", *frame, headers, 1514); err != nil {
		return err
	}
	if *gap < time.Millisecond || *gap > 10*time.Second {
		return fmt.Errorf("--gap %s out of range, want 1ms..10s", *gap)
	}
	addr, err := net.ResolveUDPAddr("udp4", *dst)
	if err != nil || addr.IP == nil {
		return fmt.Errorf("--dst %q: want IPv4:PORT (%v)", *dst, err)
	}
	if err := insideLab(*netnsName, addr.IP); err != nil {
		return fmt.Errorf("refusing to send: %w", err)
	}
	conn, err := net.DialUDP("udp4", nil, addr)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	// Keep send-buffer back-pressure out of the picture: the burst must reach the veth as fast as the CPU
	// can emit it. SO_SNDBUFFORCE (root) ignores net.core.wmem_max, which the lab leaves alone.
	if err := setSockInt(conn, unix.SO_SNDBUFFORCE, 64<<20); err != nil {
		return err
	}
	payload := make([]byte, *frame-headers)
	res := sendResult{Bursts: *bursts, BurstSize: *burstSize, GapMS: float64(*gap) / 1e6, FrameBytes: *frame}
	start := time.Now()
	for b := 0; b < *bursts; b++ {
		// Absolute schedule, so a slow burst does not stretch every later gap.
		if wait := time.Until(start.Add(time.Duration(b) * *gap)); wait > 0 {
			time.Sleep(wait)
		}
		t0 := time.Now()
		for i := 0; i < *burstSize; i++ {
			if _, err := conn.Write(payload); err != nil {
				res.SendErrors++
				continue
			}
			res.Sent++
		}
		if ms := float64(time.Since(t0)) / 1e6; ms > res.MaxBurstMS {
			res.MaxBurstMS = ms
		}
	}
	res.ElapsedSecs = time.Since(start).Seconds()
	return json.NewEncoder(out).Encode(res)
}

// insideLab returns nil only if this process runs in the named namespace, the namespace has no links but
// loopback and veth, and dst is reached on-link through a veth.
func insideLab(name string, dst net.IP) error {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return fmt.Errorf("--netns %q: want the name of a namespace under /run/netns", name)
	}
	var self, named unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &self); err != nil {
		return err
	}
	if err := unix.Stat("/run/netns/"+name, &named); err != nil {
		return fmt.Errorf("--netns %q: %w", name, err)
	}
	if self.Ino != named.Ino || self.Dev != named.Dev {
		return fmt.Errorf("not running in network namespace %q (use: ip netns exec %s burstgen send ...)", name, name)
	}
	links, err := netlink.LinkList()
	if err != nil {
		return err
	}
	for _, l := range links {
		if l.Type() == "veth" || l.Attrs().Name == "lo" {
			continue
		}
		return fmt.Errorf("namespace %q holds link %s of type %s; a lab namespace has only lo and veth", name, l.Attrs().Name, l.Type())
	}
	routes, err := netlink.RouteGet(dst)
	if err != nil {
		return fmt.Errorf("no route to %s in %q: %w", dst, name, err)
	}
	for _, r := range routes {
		if r.Gw != nil {
			return fmt.Errorf("%s is routed via gateway %s; want on-link through a veth", dst, r.Gw)
		}
		l, err := netlink.LinkByIndex(r.LinkIndex)
		if err != nil {
			return err
		}
		if l.Type() != "veth" {
			return fmt.Errorf("%s is routed through %s (%s); want a veth", dst, l.Attrs().Name, l.Type())
		}
	}
	return nil
}

type recvResult struct {
	Listen   string           `json:"listen"`
	Received uint64           `json:"received"`
	UDP      map[string]int64 `json:"udp_snmp"` // this namespace's Udp counters at exit (/proc/net/snmp)
}

func recv(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("recv", flag.ContinueOnError)
	listen := fs.String("listen", "", "IP:PORT to count datagrams on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	addr, err := net.ResolveUDPAddr("udp4", *listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", *listen, err)
	}
	conn, err := net.ListenUDP("udp4", addr)
	if err != nil {
		return err
	}
	// A receive buffer far above one burst (6,000 x ~768 bytes truesize) keeps socket drops (RcvbufErrors)
	// from mixing with the backlog drops the lab measures.
	if err := setSockInt(conn, unix.SO_RCVBUFFORCE, 64<<20); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	counted := make(chan uint64)
	go func() {
		var n uint64
		buf := make([]byte, 2048)
		for {
			if _, _, err := conn.ReadFromUDP(buf); err != nil {
				if errors.Is(err, net.ErrClosed) {
					counted <- n
					return
				}
				continue
			}
			n++
		}
	}()
	// Tell the lab the socket is bound; it starts the sender only after this line.
	if _, err := fmt.Fprintf(os.Stderr, "listening %s\n", conn.LocalAddr()); err != nil {
		return err
	}
	<-stop
	_ = conn.Close()
	res := recvResult{Listen: *listen, Received: <-counted}
	if res.UDP, err = udpSNMP("/proc/net/snmp"); err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(res)
}

// udpSNMP reads the "Udp:" header and value lines of /proc/net/snmp into a map.
func udpSNMP(path string) (map[string]int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var header []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "Udp:" {
			continue
		}
		if header == nil {
			header = fields[1:]
			continue
		}
		m := make(map[string]int64, len(header))
		for i, name := range header {
			if i+1 >= len(fields) {
				break
			}
			var v int64
			if _, err := fmt.Sscan(fields[i+1], &v); err != nil {
				return nil, fmt.Errorf("%s Udp %s: %q: %w", path, name, fields[i+1], err)
			}
			m[name] = v
		}
		return m, nil
	}
	return nil, fmt.Errorf("%s: no Udp lines", path)
}

type softnetReport struct {
	CPUs  []softnet.CPUStat `json:"cpus"`
	Total softnet.Totals    `json:"total"`
	Delta bool              `json:"delta"`
}

func snapshot(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("softnet", flag.ContinueOnError)
	since := fs.String("since", "", "earlier snapshot from this command; print the per-CPU delta")
	path := fs.String("path", softnet.DefaultPath, "softnet_stat file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	now, err := softnet.ReadFile(*path)
	if err != nil {
		return err
	}
	rep := softnetReport{CPUs: now}
	if *since != "" {
		data, err := os.ReadFile(*since)
		if err != nil {
			return err
		}
		var before softnetReport
		if err := json.Unmarshal(data, &before); err != nil {
			return fmt.Errorf("--since %s: %w", *since, err)
		}
		if before.Delta {
			return fmt.Errorf("--since %s is a delta, want a snapshot", *since)
		}
		rep = softnetReport{CPUs: softnet.Delta(before.CPUs, now), Delta: true}
	}
	rep.Total = softnet.Sum(rep.CPUs)
	return json.NewEncoder(out).Encode(rep)
}

func checkRange(flagName string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s %d out of range, want %d..%d", flagName, v, lo, hi)
	}
	return nil
}

func setSockInt(conn *net.UDPConn, opt, value int) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, opt, value)
	}); err != nil {
		return err
	}
	return serr
}
