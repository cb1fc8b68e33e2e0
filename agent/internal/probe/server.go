package probe

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/utils/clock"
)

// Server limits. The client's own bounds (MaxStreams x MaxRate per peer) fit under them, so a probing
// agent is never refused; anything beyond them is not a wirespeed probe and costs the node nothing more.
const (
	DefaultMaxConns          = 1024             // connections at once, all sources
	DefaultMaxConnsPerSource = MaxStreams + 1   // one source address: one agent's streams and its counters connection
	DefaultRatePerSource     = MaxRoundTripRate // round trips/s one source may ask for (bucket of 1 s)
	helloTimeout             = 5 * time.Second
	// A stream at the lowest rate (MinRate) asks every second; a connection silent for 30 s is gone.
	idleTimeout = 30 * time.Second
)

// ServerConfig bounds what the server answers. Zero fields take the defaults above.
type ServerConfig struct {
	MaxConns          int
	MaxConnsPerSource int
	RatePerSource     float64
	// Counters, when set, are this node's drop counters, answered (as deltas) to a CountersRequest; they
	// are read at most once per MinInterval however many peers ask. Without them the answer says unread.
	Counters DropCounters
	Clock    clock.PassiveClock
	Log      *slog.Logger
}

// ServerStats counts what the server answered and refused.
type ServerStats struct {
	RoundTrips       atomic.Uint64
	CountersAnswered atomic.Uint64
	Accepted         atomic.Uint64
	NotProbe         atomic.Uint64 // bad hello or a byte other than Request
	OverConns        atomic.Uint64 // refused: too many connections (all, or from one source)
	OverRate         atomic.Uint64 // closed: the source asked faster than RatePerSource
	ClosedByPeer     atomic.Uint64
}

// Server answers probe round trips.
type Server struct {
	cfg   ServerConfig
	Stats ServerStats

	mu      sync.Mutex
	conns   int
	sources map[netip.Addr]*source

	countersMu   sync.Mutex
	countersAt   time.Time
	countersLast map[string]uint64
	countersErr  error
}

type source struct {
	conns  int
	bucket tokenBucket
}

// NewServer fills cfg's defaults.
func NewServer(cfg ServerConfig) *Server {
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxConnsPerSource <= 0 {
		cfg.MaxConnsPerSource = DefaultMaxConnsPerSource
	}
	if cfg.RatePerSource <= 0 {
		cfg.RatePerSource = DefaultRatePerSource
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg, sources: map[netip.Addr]*source{}}
}

// Serve answers on ln until ctx ends (then it closes ln and every connection and returns nil) or ln fails.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// Out of file descriptors: the connections open now will close; wait, as net/http's Serve does.
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			return err
		}
		src, ok := s.admit(c)
		if !ok {
			_ = c.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.release(src)
			closeOnDone := context.AfterFunc(ctx, func() { _ = c.Close() })
			defer closeOnDone()
			s.handle(c, src)
		}()
	}
}

func sourceAddr(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// admit counts a new connection against the limits; false means refuse it.
func (s *Server) admit(c net.Conn) (netip.Addr, bool) {
	addr := sourceAddr(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.sources[addr]
	if s.conns >= s.cfg.MaxConns || (src != nil && src.conns >= s.cfg.MaxConnsPerSource) {
		s.Stats.OverConns.Add(1)
		return addr, false
	}
	if src == nil {
		src = &source{bucket: newTokenBucket(s.cfg.RatePerSource, s.cfg.Clock.Now())}
		s.sources[addr] = src
	}
	src.conns++
	s.conns++
	s.Stats.Accepted.Add(1)
	return addr, true
}

// release forgets a source with its last connection: the map holds only sources connected now.
func (s *Server) release(addr netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns--
	if src := s.sources[addr]; src != nil {
		if src.conns--; src.conns == 0 {
			delete(s.sources, addr)
		}
	}
}

// allow takes one round trip from addr's bucket.
func (s *Server) allow(addr netip.Addr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.sources[addr]
	return src != nil && src.bucket.take(s.cfg.Clock.Now())
}

// handle runs one connection: the hello, then one Response per Request, never reading more than one byte
// ahead, until the peer leaves, idles, speaks anything else or asks too fast.
func (s *Server) handle(c net.Conn, addr netip.Addr) {
	defer func() { _ = c.Close() }()
	now := s.cfg.Clock.Now()
	if err := readHello(c, now.Add(helloTimeout)); err != nil {
		s.Stats.NotProbe.Add(1)
		return
	}
	if err := writeHello(c, now.Add(helloTimeout)); err != nil {
		return
	}
	var b [1]byte
	var prev map[string]uint64 // this connection's previous counters reading
	for {
		if err := c.SetReadDeadline(s.cfg.Clock.Now().Add(idleTimeout)); err != nil {
			return
		}
		if _, err := c.Read(b[:]); err != nil {
			s.Stats.ClosedByPeer.Add(1)
			return
		}
		if b[0] != Request && b[0] != CountersRequest {
			s.Stats.NotProbe.Add(1)
			return
		}
		if !s.allow(addr) {
			s.Stats.OverRate.Add(1)
			s.cfg.Log.Warn("probe source over its rate; closed", "source", addr.String())
			return
		}
		if err := c.SetWriteDeadline(s.cfg.Clock.Now().Add(helloTimeout)); err != nil {
			return
		}
		answer := []byte{Response}
		if b[0] == CountersRequest {
			a := s.countersAnswer(&prev)
			answer = a[:]
			s.Stats.CountersAnswered.Add(1)
		}
		if _, err := c.Write(answer); err != nil {
			return
		}
		if b[0] == Request {
			s.Stats.RoundTrips.Add(1)
		}
	}
}

// countersAnswer is the answer to a CountersRequest on a connection whose previous reading was *prev: the
// counters' rise since then (a fall is no drop), and *prev becomes this reading.
func (s *Server) countersAnswer(prev *map[string]uint64) [CountersAnswerSize]byte {
	now, err := s.readCounters()
	if err != nil {
		*prev = nil
		return encodeCounters(nil, false)
	}
	d := map[string]uint64{}
	for name, v := range now {
		if p, ok := (*prev)[name]; ok && v > p {
			d[name] = v - p
		}
	}
	*prev = now
	return encodeCounters(d, true)
}

// readCounters reads the node's counters, or returns the reading taken less than MinInterval ago: a
// thousand peers asking cost one reading per MinInterval.
func (s *Server) readCounters() (map[string]uint64, error) {
	if s.cfg.Counters == nil {
		return nil, errNoCounters
	}
	s.countersMu.Lock()
	defer s.countersMu.Unlock()
	now := s.cfg.Clock.Now()
	if s.countersAt.IsZero() || now.Sub(s.countersAt) >= MinInterval {
		s.countersLast, s.countersErr = s.cfg.Counters()
		s.countersAt = now
	}
	return s.countersLast, s.countersErr
}

var errNoCounters = errors.New("the server reads no counters")

// tokenBucket allows rate events per second with a burst of one second's worth.
type tokenBucket struct {
	rate   float64
	tokens float64
	last   time.Time
}

func newTokenBucket(rate float64, now time.Time) tokenBucket {
	return tokenBucket{rate: rate, tokens: rate, last: now}
}

func (b *tokenBucket) take(now time.Time) bool {
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = min(b.rate, b.tokens+dt*b.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
