package probe

import (
	"math"
	"time"
)

// Bucket bounds: ten per decade from 10 us, 1e-5 * 10^(k/10) s for k = 0..53, so the top bound is 1.995 s and
// one more bucket holds everything above. That spacing puts bounds just under the round trips a TCP
// retransmission timeout produces: 199.5 ms under Linux's minimum RTO of 200 ms (TCP_RTO_MIN, HZ/5, in
// torvalds/linux include/net/tcp.h), then 398 ms and 794 ms under its first two exponential backoffs and
// 1.995 s under the 2 s of a third. A round trip in the bucket above 199.5 ms has waited out at least one RTO
// (or was that slow for another reason); one below it has not.
const (
	firstBound      = 10 * time.Microsecond
	boundsPerDecade = 10
	numBounds       = 54
)

// Bounds are the histogram's upper bounds in seconds, ascending; the last bucket (index numBounds) is +Inf.
var Bounds = makeBounds()

func makeBounds() []float64 {
	b := make([]float64, numBounds)
	for k := range b {
		// Rounded to 4 significant digits so the JSON, the metric's le labels and the README agree.
		v := firstBound.Seconds() * math.Pow(10, float64(k)/boundsPerDecade)
		scale := math.Pow(10, 3-math.Floor(math.Log10(v)))
		b[k] = math.Round(v*scale) / scale
	}
	return b
}

// Histogram counts round trips per bucket of Bounds (one more bucket for above the last bound). The zero
// value is empty and ready; it is not safe for concurrent use (each stream has its own, merged at the end).
type Histogram struct {
	Counts [numBounds + 1]uint64
	Total  uint64
	Max    time.Duration
}

// bucket is the index of the first bound >= d.
func bucket(d time.Duration) int {
	s := d.Seconds()
	lo, hi := 0, numBounds
	for lo < hi {
		mid := (lo + hi) / 2
		if s <= Bounds[mid] {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Observe adds one round trip.
func (h *Histogram) Observe(d time.Duration) {
	h.Counts[bucket(d)]++
	h.Total++
	if d > h.Max {
		h.Max = d
	}
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.Total += o.Total
	if o.Max > h.Max {
		h.Max = o.Max
	}
}

// Quantile is an upper estimate of the q-quantile in seconds: the upper bound of the bucket holding the
// ceil(q*Total)-th smallest round trip, or the largest round trip when that is smaller (always for the
// +Inf bucket). ok is false for an empty histogram: no round trip, no percentile.
func (h *Histogram) Quantile(q float64) (seconds float64, ok bool) {
	if h.Total == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(q * float64(h.Total)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen < rank {
			continue
		}
		if i < numBounds && Bounds[i] < h.Max.Seconds() {
			return Bounds[i], true
		}
		return h.Max.Seconds(), true
	}
	return h.Max.Seconds(), true
}
