// Command flowgen makes conntrack entries at a steady rate, for bench/agent's SNAT accounting cost: it is the
// pods of a busy node. Two modes, each run inside a network namespace of the bench's own:
//
//	flowgen serve --listen ADDR,...             accept TCP and close at once (the server closes first, so
//	                                            the client side has no TIME_WAIT to exhaust its ports)
//	flowgen load --targets ADDR,... --tcp-rate N --udp-rate N --preload N --preload-target ADDR --duration D
//
// load first sends one UDP datagram from each of --preload sockets to --preload-target (one conntrack entry
// each, kept for nf_conntrack_udp_timeout), then opens --tcp-rate TCP connections and --udp-rate UDP flows a
// second, round-robin over --targets, for --duration. It prints what it made as JSON.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: flowgen serve|load [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(ctx, os.Args[2:])
	case "load":
		err = load(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "flowgen:", err)
		os.Exit(1)
	}
}

func serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", "", "comma-separated TCP addresses")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, addr := range strings.Split(*listen, ",") {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		context.AfterFunc(ctx, func() { _ = ln.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
	}
	fmt.Println("ready")
	wg.Wait()
	return nil
}

type loadFlags struct {
	targets       []string
	tcpRate       int
	udpRate       int
	preload       int
	preloadTarget string
	duration      time.Duration
}

type made struct {
	Preloaded int64   `json:"preloaded"`
	TCP       int64   `json:"tcp"`
	UDP       int64   `json:"udp"`
	Failed    int64   `json:"failed"`
	Seconds   float64 `json:"seconds"`
}

func load(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	var f loadFlags
	targets := fs.String("targets", "", "comma-separated host:port destinations, round-robin")
	fs.IntVar(&f.tcpRate, "tcp-rate", 0, "new TCP connections per second")
	fs.IntVar(&f.udpRate, "udp-rate", 0, "new UDP flows per second")
	fs.IntVar(&f.preload, "preload", 0, "UDP entries to make first")
	fs.StringVar(&f.preloadTarget, "preload-target", "", "host:port of the preload datagrams")
	fs.DurationVar(&f.duration, "duration", time.Minute, "how long to keep the rates up")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.targets = strings.Split(*targets, ",")
	var m made
	for i := 0; i < f.preload; i++ {
		if udpFlow(f.preloadTarget) != nil {
			m.Failed++
			continue
		}
		m.Preloaded++
	}
	fmt.Fprintln(os.Stderr, "preloaded", m.Preloaded)
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, f.duration)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); paced(ctx, f.tcpRate, f.targets, tcpFlow, &m.TCP, &m.Failed) }()
	go func() { defer wg.Done(); paced(ctx, f.udpRate, f.targets, udpFlow, &m.UDP, &m.Failed) }()
	wg.Wait()
	m.Seconds = time.Since(start).Seconds()
	return json.NewEncoder(os.Stdout).Encode(m)
}

// paced runs fn rate times a second (in 10 ms batches, so the rate holds on a busy machine).
func paced(ctx context.Context, rate int, targets []string, fn func(string) error, ok, failed *int64) {
	if rate <= 0 {
		return
	}
	const tick = 10 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start, sent := time.Now(), int64(0)
	sem := make(chan struct{}, 256) // TCP handshakes in flight
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		due := int64(time.Since(start).Seconds() * float64(rate))
		for ; sent < due; sent++ {
			target := targets[int(sent)%len(targets)]
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if fn(target) != nil {
					atomic.AddInt64(failed, 1)
					return
				}
				atomic.AddInt64(ok, 1)
			}()
		}
	}
}

func tcpFlow(target string) error {
	c, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Read(make([]byte, 1)) // returns at the server's close (EOF): the server closes first
	return c.Close()
}

func udpFlow(target string) error {
	c, err := net.Dial("udp", target)
	if err != nil {
		return err
	}
	_, err = c.Write([]byte("x"))
	_ = c.Close()
	return err
}
