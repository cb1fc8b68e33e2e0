package probe

import (
	"testing"
	"time"
)

// The bounds resolve 10 us to 2 s and put one just under each RTO step (200, 400, 800 ms, 2 s): a round trip
// that waited out the minimum RTO can never share a bucket with one that did not.
func TestBoundsStraddleTheRetransmissionTimeouts(t *testing.T) {
	if Bounds[0] != 10e-6 || Bounds[len(Bounds)-1] != 1.995 {
		t.Fatalf("bounds %g..%g, want 1e-05..1.995", Bounds[0], Bounds[len(Bounds)-1])
	}
	for i := 1; i < len(Bounds); i++ {
		if Bounds[i] <= Bounds[i-1] || Bounds[i]/Bounds[i-1] > 1.27 {
			t.Fatalf("bound %d: %g after %g: not ascending at ten per decade", i, Bounds[i], Bounds[i-1])
		}
	}
	for _, rto := range []float64{0.2, 0.4, 0.8, 2} {
		i := bucket(time.Duration(rto * float64(time.Second)))
		if below := Bounds[i-1]; below >= rto || rto-below > 0.01*rto {
			t.Errorf("RTO %gs: the bound below is %g, want just under", rto, below)
		}
	}
}

func TestObserveAndQuantile(t *testing.T) {
	var h Histogram
	if _, ok := h.Quantile(0.5); ok {
		t.Fatal("empty histogram gave a percentile")
	}
	for range 9990 {
		h.Observe(80 * time.Microsecond)
	}
	for range 9 {
		h.Observe(205 * time.Millisecond) // one RTO
	}
	h.Observe(3 * time.Second) // above the top bound
	cases := map[float64]float64{0.5: 0.0001, 0.999: 0.0001, 0.9991: 0.2512, 0.9999: 0.2512, 1: 3}
	for q, want := range cases {
		if got, _ := h.Quantile(q); got != want {
			t.Errorf("q%g = %g, want %g", q, got, want)
		}
	}
	if h.Counts[numBounds] != 1 || h.Total != 10000 || h.Max != 3*time.Second {
		t.Fatalf("overflow %d total %d max %s", h.Counts[numBounds], h.Total, h.Max)
	}
	// A histogram of one value reports that value, not its bucket's bound.
	var one Histogram
	one.Observe(150 * time.Microsecond)
	if got, _ := one.Quantile(0.5); got != 150e-6 {
		t.Fatalf("single 150us: p50 %g", got)
	}
	var merged Histogram
	merged.Merge(&h)
	merged.Merge(&one)
	if merged.Total != 10001 || merged.Counts[numBounds] != 1 {
		t.Fatalf("merge: total %d", merged.Total)
	}
}
