package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// peerCounters asks a peer for its drop counters over a connection of its own: a DropCounters whose
// cumulative sums are the peer's answered deltas added up from zero, so the peer's timeline reads as the
// local one does. A failed exchange closes the connection and is an error (the sampler then stops, and the
// intervals it does not cover count no peer drops); close ends the connection.
func peerCounters(ctx context.Context, cfg Config, peer string) (DropCounters, func()) {
	var mu sync.Mutex
	var c net.Conn
	sum := map[string]uint64{}
	closeConn := func() {
		if c != nil {
			_ = c.Close()
			c = nil
		}
	}
	read := func() (map[string]uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		if c == nil {
			st := stream{cfg: cfg, peer: peer}
			conn, err := st.connect(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s: counters: %w", peer, err)
			}
			c = conn
		}
		d, err := askCounters(c, cfg)
		if err != nil {
			closeConn()
			return nil, fmt.Errorf("%s: counters: %w", peer, err)
		}
		for name, v := range d {
			sum[name] += v
		}
		out := make(map[string]uint64, len(sum))
		for k, v := range sum {
			out[k] = v
		}
		return out, nil
	}
	return read, func() { mu.Lock(); defer mu.Unlock(); closeConn() }
}

var errPeerCountersUnread = errors.New("the peer could not read its counters")

func askCounters(c net.Conn, cfg Config) (map[string]uint64, error) {
	if err := c.SetDeadline(cfg.Clock.Now().Add(roundTripTimeout)); err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte{CountersRequest}); err != nil {
		return nil, err
	}
	var b [CountersAnswerSize]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return nil, err
	}
	d, ok, err := decodeCounters(b)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errPeerCountersUnread
	}
	return d, nil
}
