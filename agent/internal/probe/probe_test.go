package probe

import (
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/utils/clock"
)

// serve starts a probe server on a loopback port for the test's lifetime.
func serve(t *testing.T, cfg ServerConfig) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return srv, ln.Addr().String()
}

// A real client against a real server over loopback: every round trip is counted on both sides, the report
// has totals, one entry per peer, percentiles and its sockets' TCP_INFO.
func TestRunCountsEveryRoundTrip(t *testing.T) {
	srv, addr := serve(t, ServerConfig{})
	rep := Run(context.Background(), Config{Peers: []string{addr}, Streams: 2, Rate: 50, Duration: time.Second,
		Threshold: DefaultThreshold})
	if rep.RoundTrips < 20 || rep.RoundTrips > 100 {
		t.Fatalf("%d round trips in 1 s at 2 x 50/s", rep.RoundTrips)
	}
	// The server counts an answer once its write returns, which may be just after the client has read it: wait
	// (bounded) for the last one, then require the counts to be equal.
	deadline := time.Now().Add(2 * time.Second)
	for srv.Stats.RoundTrips.Load() < rep.RoundTrips && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := srv.Stats.RoundTrips.Load(); got != rep.RoundTrips {
		t.Fatalf("server answered %d, client counted %d", got, rep.RoundTrips)
	}
	if len(rep.Peers) != 1 || rep.Peers[0].RoundTrips != rep.RoundTrips || rep.Peers[0].Peer != addr {
		t.Fatalf("peers %+v", rep.Peers)
	}
	if rep.Errors != 0 || rep.Percentiles.P50 == nil || *rep.Percentiles.P50 <= 0 || rep.RTOMax < 0.2 {
		t.Fatalf("errors %d (%s), p50 %v, rto %g", rep.Errors, rep.LastError, rep.Percentiles.P50, rep.RTOMax)
	}
	if len(rep.Failed()) != 0 {
		t.Fatalf("failed: %v", rep.Failed())
	}
}

// slowThirdAnswer is a probe server of the test's own that answers the third round trip 900 ms late. Its tests
// count tails over slowThreshold, not the default 150 ms, so a busy machine's scheduling stall on loopback (a CI
// run once saw one past 150 ms) is not a second tail.
func slowThirdAnswer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if readHello(c, time.Now().Add(time.Second)) != nil || writeHello(c, time.Now().Add(time.Second)) != nil {
			return
		}
		_ = c.SetDeadline(time.Time{}) // the hello's deadline would end the slow answer
		var b [1]byte
		for n := 1; ; n++ {
			if _, err := c.Read(b[:]); err != nil {
				return
			}
			if n == 3 {
				time.Sleep(900 * time.Millisecond)
			}
			_, _ = c.Write([]byte{Response})
		}
	}()
	return ln.Addr().String()
}

const slowThreshold = 600 * time.Millisecond

// Tails are counted by the threshold, without a retransmission when the server was merely slow; without
// drop counters the tail is unexplained.
func TestSlowAnswerIsATailWithoutRetransmit(t *testing.T) {
	rep := Run(context.Background(), Config{Peers: []string{slowThirdAnswer(t)}, Streams: 1, Rate: 20,
		Duration: 2 * time.Second, Threshold: slowThreshold})
	if rep.Tails != 1 || rep.TailsWithRetransmit != 0 || rep.Causes[CauseUnexplained] != 1 || rep.CountersRead {
		t.Fatalf("tails %d (with retransmit %d), causes %v", rep.Tails, rep.TailsWithRetransmit, rep.Causes)
	}
	if rep.MaxSeconds == nil || *rep.MaxSeconds < 0.9 || *rep.Percentiles.P50 > 0.1 {
		t.Fatalf("max %v p50 %v", rep.MaxSeconds, rep.Percentiles.P50)
	}
}

// With drop counters (in-memory fakes here, whose backlog count rises by one at every read) the run reads
// them every interval and names the tail's interval by them, in the totals and per peer.
func TestRunNamesTheCauseFromFakeCounters(t *testing.T) {
	var reads uint64
	counters := func() (map[string]uint64, error) {
		reads++ // read by the one sampling goroutine only
		return map[string]uint64{"backlog": reads, "rx_ring_overflow": 7}, nil
	}
	rep := Run(context.Background(), Config{Peers: []string{slowThirdAnswer(t)}, Streams: 1, Rate: 20,
		Duration: 2 * time.Second, Threshold: slowThreshold, Counters: counters, Interval: 200 * time.Millisecond})
	if !rep.CountersRead || rep.Causes["backlog"] != 1 || rep.Peers[0].Causes["backlog"] != 1 || len(rep.TailIntervals) != 1 {
		t.Fatalf("counters read %v (%s), causes %v / %v, intervals %+v", rep.CountersRead, rep.CountersError,
			rep.Causes, rep.Peers[0].Causes, rep.TailIntervals)
	}
	if ti := rep.TailIntervals[0]; ti.Drops["backlog"] != 1 || ti.Drops["rx_ring_overflow"] != 0 || ti.StartSeconds > 0.2 {
		t.Fatalf("interval %+v", ti)
	}
}

// The server answers only the probe protocol: an HTTP request, a wrong request byte and a silent hello are
// closed without one answer byte.
func TestServerClosesAnythingElse(t *testing.T) {
	srv, addr := serve(t, ServerConfig{})
	cases := map[string]string{
		"http":       "GET / HTTP/1.0\r\n\r\n",
		"wrong byte": string(Hello[:]) + "x",
		"short":      "WSPR",
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, send); err != nil {
				t.Fatal(err)
			}
			if name == "short" {
				_ = c.(*net.TCPConn).CloseWrite()
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, err := io.ReadAll(c)
			// Closing with unread bytes (the rest of the HTTP request) is a reset: closed all the same.
			if err != nil && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("not closed: %v", err)
			}
			if want := ""; name == "wrong byte" {
				want = string(Hello[:])
				if string(got) != want {
					t.Fatalf("got %q, want only the hello", got)
				}
			} else if len(got) != 0 {
				t.Fatalf("answered %q", got)
			}
		})
	}
	if srv.Stats.RoundTrips.Load() != 0 || srv.Stats.NotProbe.Load() != 3 {
		t.Fatalf("round trips %d, not-probe %d", srv.Stats.RoundTrips.Load(), srv.Stats.NotProbe.Load())
	}
}

// A client that is not a probe gets ErrNotProbe and no round trip.
func TestClientRefusesANonProbeServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "HTTP/1.0 400 Bad Request\r\n\r\n")
			_ = c.Close()
		}
	}()
	rep := Run(context.Background(), Config{Peers: []string{ln.Addr().String()}, Streams: 1, Rate: 10,
		Duration: time.Second, Threshold: DefaultThreshold})
	if rep.RoundTrips != 0 || rep.Errors == 0 || !strings.Contains(rep.LastError, ErrNotProbe.Error()) {
		t.Fatalf("round trips %d errors %d last %q", rep.RoundTrips, rep.Errors, rep.LastError)
	}
	if f := rep.Failed(); len(f) != 1 {
		t.Fatalf("failed %v", f)
	}
}

// One source may hold MaxConnsPerSource connections and ask RatePerSource round trips/s; past the rate its
// connection is closed, past the connections a new one is refused.
func TestServerLimitsEachSource(t *testing.T) {
	srv, addr := serve(t, ServerConfig{MaxConnsPerSource: 2, RatePerSource: 5})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if writeHello(c, time.Now().Add(time.Second)) != nil || readHello(c, time.Now().Add(time.Second)) != nil {
			return nil
		}
		return c
	}
	a, b := dial(), dial()
	if a == nil || b == nil {
		t.Fatal("two connections within the limit were not greeted")
	}
	if dial() != nil {
		t.Fatal("a third connection from the same source was greeted")
	}
	answered := 0
	var b1 [1]byte
	for range 10 {
		if _, err := a.Write([]byte{Request}); err != nil {
			break
		}
		if _, err := a.Read(b1[:]); err != nil {
			break
		}
		answered++
	}
	if answered != 5 || srv.Stats.OverRate.Load() != 1 || srv.Stats.OverConns.Load() != 1 {
		t.Fatalf("answered %d, over rate %d, over conns %d", answered, srv.Stats.OverRate.Load(), srv.Stats.OverConns.Load())
	}
}

func TestTokenBucket(t *testing.T) {
	now := time.Unix(0, 0)
	b := newTokenBucket(2, now)
	got := []bool{b.take(now), b.take(now), b.take(now)}
	now = now.Add(500 * time.Millisecond)
	got = append(got, b.take(now), b.take(now))
	now = now.Add(time.Hour) // refills to its burst, not beyond
	got = append(got, b.take(now), b.take(now), b.take(now))
	want := []bool{true, true, false, true, false, true, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("takes %v, want %v", got, want)
		}
	}
}

// The counters exchange: the server answers its counters' rise since this connection's previous ask (zero
// the first time), a fall as no drop, reads them at most once per MinInterval however often it is asked, and
// says so when it cannot read them.
func TestCountersExchangeAnswersDeltas(t *testing.T) {
	var mu sync.Mutex
	reads, backlog := 0, uint64(100)
	counters := func() (map[string]uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		reads++
		return map[string]uint64{"backlog": backlog, "rx_ring_overflow": 9, "allowance": 0, "conntrack": 0}, nil
	}
	_, addr := serve(t, ServerConfig{Counters: counters})
	d := net.Dialer{}
	cfg := Config{Clock: clock.RealClock{}, Dial: func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }}
	read, closeConn := peerCounters(context.Background(), cfg, addr)
	defer closeConn()
	first, err := read()
	if err != nil || first["backlog"] != 0 || first["rx_ring_overflow"] != 0 {
		t.Fatalf("first answer %v, %v: want zeros (the base)", first, err)
	}
	time.Sleep(MinInterval)
	mu.Lock()
	backlog += 7
	mu.Unlock()
	second, err := read()
	if err != nil || second["backlog"] != 7 || second["rx_ring_overflow"] != 0 {
		t.Fatalf("second answer %v, %v: want backlog 7", second, err)
	}
	for range 5 { // asked again at once: the cached reading, no new read
		if _, err := read(); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	if reads != 2 {
		t.Errorf("%d readings for 7 asks within MinInterval of each other after the first: want 2", reads)
	}
	backlog = 3 // fell (a counter reset): no drop
	mu.Unlock()
	time.Sleep(MinInterval)
	if third, err := read(); err != nil || third["backlog"] != 7 {
		t.Fatalf("after a fall %v, %v: want backlog still 7", third, err)
	}

	_, bare := serve(t, ServerConfig{})
	readBare, closeBare := peerCounters(context.Background(), cfg, bare)
	defer closeBare()
	if _, err := readBare(); !errors.Is(err, errPeerCountersUnread) {
		t.Fatalf("a server without counters: %v, want errPeerCountersUnread", err)
	}
}

func TestCountersAnswerRoundTripsAndRefusesGarbage(t *testing.T) {
	d := map[string]uint64{"rx_ring_overflow": 1, "backlog": 1 << 40, "allowance": 3, "conntrack": 4}
	got, ok, err := decodeCounters(encodeCounters(d, true))
	if err != nil || !ok || !reflect.DeepEqual(got, d) {
		t.Fatalf("%v %v %v", got, ok, err)
	}
	var bad [CountersAnswerSize]byte
	bad[0] = 'x'
	if _, _, err := decodeCounters(bad); !errors.Is(err, ErrNotProbe) {
		t.Fatalf("garbage: %v", err)
	}
}
