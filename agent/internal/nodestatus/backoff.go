package nodestatus

import (
	"math/rand/v2"
	"time"
)

const (
	initialBackoff = time.Second
	// maxBackoff caps retries at the heartbeat period: after an outage the node is never staler than
	// one heartbeat plus one retry.
	maxBackoff = 5 * time.Minute
	// backoffJitter spreads retries so a DaemonSet's agents do not all hit a recovering API server
	// in the same second.
	backoffJitter = 0.1
)

// backoff is the wait before each retry: initialBackoff doubling up to maxBackoff, plus up to
// backoffJitter of it, never above maxBackoff.
type backoff struct {
	current time.Duration
	// jitter returns a value in [0,1); tests fix it.
	jitter func() float64
}

func newBackoff() backoff { return backoff{jitter: rand.Float64} }

func (b *backoff) next() time.Duration {
	if b.current == 0 {
		b.current = initialBackoff
	} else {
		b.current = min(2*b.current, maxBackoff)
	}
	return min(b.current+time.Duration(float64(b.current)*backoffJitter*b.jitter()), maxBackoff)
}

// reset starts the next failure's backoff afresh.
func (b *backoff) reset() { b.current = 0 }
