package probe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/wirespeed-io/wirespeed/agent/internal/numbers"
)

// The client's bounds; the flags of `wirespeed-agent probe` are checked against them. MaxPeers is written from
// its home in wirespeed.profile.model; MaxStreams and DefaultStreams are the continuous mode's too (the
// profile's probe.streams bound and default), written from the same home.
const (
	MaxPeers         = numbers.ProbeOneOffMaxPeers
	MaxStreams       = numbers.ProbeMaxStreams
	MinRate          = 1.0    // round trips/s per stream
	MaxRate          = 1000.0 // round trips/s per stream
	MaxRoundTripRate = 10000  // round trips/s to one peer, all streams (the server's per-source limit)
	MinDuration      = time.Second
	MaxDuration      = time.Hour
	MinThreshold     = time.Millisecond
	MaxThreshold     = 2 * time.Second
	// DefaultThreshold is under the 200 ms minimum RTO (TCP_RTO_MIN, torvalds/linux include/net/tcp.h) with room
	// for the RTT: a round trip that waited for a retransmission timeout is always a tail, a fast one never.
	DefaultThreshold = 150 * time.Millisecond
	DefaultStreams   = numbers.ProbeStreams
	DefaultRate      = 10.0
	DefaultInterval  = time.Second
	MinInterval      = 100 * time.Millisecond
	MaxInterval      = time.Minute
	dialTimeout      = 2 * time.Second
	// roundTripTimeout ends a round trip that waits past four RTO backoffs (200+400+800+1600 ms):
	// the connection is then given up and dialed again.
	roundTripTimeout = 5 * time.Second
	redialPause      = time.Second
)

// Config is one probe run.
type Config struct {
	Peers     []string
	Streams   int
	Rate      float64 // round trips/s per stream
	Duration  time.Duration
	Threshold time.Duration // a round trip longer than this is a tail
	// Counters, when set, are read every Interval; each interval's tails are attributed to the counter
	// that rose in it. Without them every tail is unexplained.
	Counters DropCounters
	// PeerCounters asks each peer for its own counters' deltas every Interval (the counters exchange), so a
	// tail's cause is named on the side whose counters rose.
	PeerCounters bool
	Interval     time.Duration
	// OnRoundTrip, when set, is called with every round trip as it ends (from the streams' goroutines at
	// once): the continuous mode's histograms.
	OnRoundTrip func(peer int, rtt time.Duration)
	Clock       clock.Clock
	// Dial opens a connection to a peer (net.Dialer's by default); tests dial from another namespace.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
}

// tally is what one stream (or a merge of streams) saw.
type tally struct {
	hist                Histogram
	tails               uint64
	tailsWithRetransmit uint64
	tailRetransmits     uint64 // retransmissions during tails
	retransmits         uint64 // tcpi_total_retrans of its sockets, summed at their close
	rtoMax              time.Duration
	errors              uint64
	lastError           string
	tailsAt             map[int]uint64 // tails by the interval their round trip began in
}

func (t *tally) merge(o *tally) {
	t.hist.Merge(&o.hist)
	t.tails += o.tails
	t.tailsWithRetransmit += o.tailsWithRetransmit
	t.tailRetransmits += o.tailRetransmits
	t.retransmits += o.retransmits
	t.rtoMax = max(t.rtoMax, o.rtoMax)
	t.errors += o.errors
	if o.lastError != "" {
		t.lastError = o.lastError
	}
	for k, n := range o.tailsAt {
		if t.tailsAt == nil {
			t.tailsAt = map[int]uint64{}
		}
		t.tailsAt[k] += n
	}
}

func (t *tally) fail(err error) {
	t.errors++
	t.lastError = err.Error()
}

// Run probes every peer with cfg.Streams streams for cfg.Duration and reports. Round trips in flight at the
// end are finished (up to roundTripTimeout) so every retransmission the kernel made is in the report.
func Run(ctx context.Context, cfg Config) Report {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Dial == nil {
		d := net.Dialer{Timeout: dialTimeout}
		cfg.Dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	start := cfg.Clock.Now()
	end := start.Add(cfg.Duration)
	stop := make(chan struct{})
	sampled := make(chan *timeline, 1)
	if cfg.Counters != nil {
		go func() { sampled <- sample(ctx, cfg, start, stop) }()
	} else {
		sampled <- nil
	}
	peerTL, peersDone := samplePeers(ctx, cfg, start, stop)
	tallies := make([][]tally, len(cfg.Peers))
	var wg sync.WaitGroup
	for p, peer := range cfg.Peers {
		tallies[p] = make([]tally, cfg.Streams)
		for s := range tallies[p] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st := stream{cfg: cfg, peer: peer, index: p, start: start, end: end, t: &tallies[p][s]}
				st.run(ctx)
			}()
		}
	}
	wg.Wait()
	close(stop)
	local := <-sampled
	peersDone()
	return newReport(cfg, tallies, local, peerTL)
}

// samplePeers samples every peer's counters (when cfg.PeerCounters) as the local ones are sampled; done waits
// for the samplers, after stop is closed, and closes their connections.
func samplePeers(ctx context.Context, cfg Config, start time.Time, stop <-chan struct{}) ([]*timeline, func()) {
	if !cfg.PeerCounters {
		return nil, func() {}
	}
	tls := make([]*timeline, len(cfg.Peers))
	var wg sync.WaitGroup
	var closers []func()
	for p, peer := range cfg.Peers {
		read, closeConn := peerCounters(ctx, cfg, peer)
		closers = append(closers, closeConn)
		pc := cfg
		pc.Counters = read
		wg.Add(1)
		go func() { defer wg.Done(); tls[p] = sample(ctx, pc, start, stop) }()
	}
	return tls, func() {
		wg.Wait()
		for _, c := range closers {
			c()
		}
	}
}

type stream struct {
	cfg        Config
	peer       string
	index      int // of peer in cfg.Peers
	start, end time.Time
	phase      time.Duration // of the stream's sending instants after start (a slot of paceSlots)
	t          *tally
	// timer paces the stream, reset for every round trip: one timer for the stream's life, not one
	// allocated per round trip.
	timer clock.Timer
}

// run keeps one connection to the peer until the end, dialing again after a failure.
func (s *stream) run(ctx context.Context) {
	for ctx.Err() == nil && s.cfg.Clock.Now().Before(s.end) {
		c, err := s.connect(ctx)
		if err == nil {
			err = s.session(ctx, c)
			s.closeSocket(c)
		}
		if err == nil {
			return
		}
		s.t.fail(fmt.Errorf("%s: %w", s.peer, err))
		if !s.sleepUntil(ctx, s.cfg.Clock.Now().Add(redialPause)) {
			return
		}
	}
}

func (s *stream) connect(ctx context.Context) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := s.cfg.Dial(dctx, s.peer)
	if err != nil {
		return nil, err
	}
	deadline := s.cfg.Clock.Now().Add(dialTimeout)
	if err := writeHello(c, deadline); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("write hello: %w", err)
	}
	if err := readHello(c, deadline); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// closeSocket adds the socket's retransmissions (the handshake's too) to the tally, then closes it.
func (s *stream) closeSocket(c net.Conn) {
	if info, err := readTCPInfo(c); err == nil {
		s.t.retransmits += uint64(info.totalRetrans)
		s.t.rtoMax = max(s.t.rtoMax, time.Duration(info.rtoMicros)*time.Microsecond)
	} else {
		s.t.fail(fmt.Errorf("%s: TCP_INFO: %w", s.peer, err))
	}
	_ = c.Close()
}

// paceSlots is how many instants per interval (1/Rate) the streams of a run send at: each stream sends at one
// of them, chosen at random, on a grid shared by every stream of the run. A random phase per stream keeps the
// streams from sending in lockstep; a shared grid lets the streams on one instant share one wake-up of the
// process (one timer expiry, and their answers read together), and the wake-ups, not the round trips, were
// most of the continuous probe's CPU (bench/agent/RESULTS.md, "Probe CPU: wake-ups"). With 4, the continuous
// mode's 32 streams send about 8 at a time (8 x 67-byte segments, ~0.5 kB), 8 times a second at 2/s; 8 slots
// cut the agent's CPU half as much again as 4 did in that bench.
const paceSlots = 4

// slotAtOrAfter is the first of the stream's sending instants, start + phase + k x interval, at or after t.
func (s *stream) slotAtOrAfter(t time.Time, interval time.Duration) time.Time {
	first := s.start.Add(s.phase)
	if !t.After(first) {
		return first
	}
	k := (t.Sub(first) + interval - 1) / interval
	return first.Add(k * interval)
}

// session paces round trips at cfg.Rate until the end. A round trip that overruns its slot delays the
// next one to the stream's next slot instead of a catch-up burst: the stream stays synchronous.
func (s *stream) session(ctx context.Context, c net.Conn) error {
	interval := time.Duration(float64(time.Second) / s.cfg.Rate)
	s.phase = time.Duration(rand.N(paceSlots)) * (interval / paceSlots)
	next := s.slotAtOrAfter(s.cfg.Clock.Now(), interval)
	tcpInfo, err := newTCPInfoReader(c)
	if err != nil {
		return fmt.Errorf("TCP_INFO: %w", err)
	}
	before, err := tcpInfo.Read()
	if err != nil {
		return fmt.Errorf("TCP_INFO: %w", err)
	}
	for next.Before(s.end) {
		if !s.sleepUntil(ctx, next) {
			return nil
		}
		began := s.cfg.Clock.Now()
		rtt, rtErr := s.roundTrip(c)
		if rtErr != nil && !errors.Is(rtErr, errNoResponse) {
			return rtErr
		}
		after, err := tcpInfo.Read()
		if err != nil {
			return fmt.Errorf("TCP_INFO: %w", err)
		}
		s.record(began, rtt, after.totalRetrans-before.totalRetrans)
		if rtErr != nil {
			return rtErr
		}
		before = after
		next = next.Add(interval)
		if now := s.cfg.Clock.Now(); next.Before(now) {
			next = s.slotAtOrAfter(now, interval)
		}
	}
	return nil
}

// record puts one round trip that began at began in the tally, with the retransmissions its socket made
// during it. A tail counts in the interval it began in: a lost segment was lost when it was sent, and the
// tail ends at least one RTO later, often in the next interval.
func (s *stream) record(began time.Time, rtt time.Duration, retransmitted uint32) {
	s.t.hist.Observe(rtt)
	if s.cfg.OnRoundTrip != nil {
		s.cfg.OnRoundTrip(s.index, rtt)
	}
	if rtt > s.cfg.Threshold {
		s.t.tails++
		if s.t.tailsAt == nil {
			s.t.tailsAt = map[int]uint64{}
		}
		s.t.tailsAt[int(began.Sub(s.start)/s.cfg.Interval)]++
		if retransmitted > 0 {
			s.t.tailsWithRetransmit++
			s.t.tailRetransmits += uint64(retransmitted)
		}
	}
}

// errNoResponse is a round trip past roundTripTimeout: recorded as a tail of its full length (it is the
// longest round trip of all, not a missing one), then the connection is given up.
var errNoResponse = fmt.Errorf("no response within %s", roundTripTimeout)

// requestMsg is the Request written by every round trip (never modified): no slice allocated per write.
var requestMsg = []byte{Request}

// roundTrip sends one Request and waits for the Response.
func (s *stream) roundTrip(c net.Conn) (time.Duration, error) {
	start := s.cfg.Clock.Now()
	if err := c.SetDeadline(start.Add(roundTripTimeout)); err != nil {
		return 0, err
	}
	if _, err := c.Write(requestMsg); err != nil {
		return 0, fmt.Errorf("write request: %w", err)
	}
	var b [1]byte
	_, err := c.Read(b[:])
	rtt := s.cfg.Clock.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return rtt, errNoResponse
	}
	if err != nil {
		return 0, fmt.Errorf("read response: %w", err)
	}
	if b[0] != Response {
		return 0, fmt.Errorf("%w: response %q", ErrNotProbe, b[0])
	}
	return rtt, nil
}

// sleepUntil waits for t; false when ctx ended first.
func (s *stream) sleepUntil(ctx context.Context, t time.Time) bool {
	d := t.Sub(s.cfg.Clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	if s.timer == nil {
		s.timer = s.cfg.Clock.NewTimer(d)
	} else {
		// Since Go 1.23 a Reset timer's channel holds no stale value (go.dev/doc/go1.23#timer-changes), and
		// the timer is always drained or fired before this Reset: the select below returns on its tick or
		// on ctx, and after ctx the stream sleeps no more.
		s.timer.Reset(d)
	}
	select {
	case <-s.timer.C():
		return true
	case <-ctx.Done():
		s.timer.Stop()
		return false
	}
}
