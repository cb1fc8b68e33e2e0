package probe

// CauseUnexplained is a tail in an interval in which none of the node's drop counters rose (or they were
// not read): a loss elsewhere (the peer, the network between), or a round trip that was merely slow.
const CauseUnexplained = "unexplained"

// Percentiles are upper estimates from the histogram (Histogram.Quantile); null without round trips.
type Percentiles struct {
	P50   *float64 `json:"p50"`
	P99   *float64 `json:"p99"`
	P999  *float64 `json:"p999"`
	P9999 *float64 `json:"p9999"`
}

// Result is what the probe saw of one peer, or of all of them.
type Result struct {
	Peer       string `json:"peer,omitempty"`
	RoundTrips uint64 `json:"round_trips"`
	Tails      uint64 `json:"tails"`
	// TailsWithRetransmit are tails during which the socket's tcpi_total_retrans rose.
	TailsWithRetransmit uint64 `json:"tails_with_retransmit"`
	// TailRetransmits are the retransmissions the sockets made during tails (a tail may hold several: a lost
	// retransmission waits out a doubled RTO).
	TailRetransmits uint64 `json:"tail_retransmits"`
	// Retransmits is tcpi_total_retrans summed over the probe's own sockets (handshakes included).
	Retransmits uint64            `json:"retransmits"`
	RTOMax      float64           `json:"rto_seconds_max"`
	Percentiles Percentiles       `json:"percentiles_seconds"`
	MaxSeconds  *float64          `json:"max_seconds"`
	Causes      map[string]uint64 `json:"causes"`
	// CausesBySide are the tails by the side their cause is on (local, peer, both, unknown), then by cause.
	CausesBySide map[string]map[string]uint64 `json:"causes_by_side"`
	// TailIntervals are the intervals tails began in, with the drop counters' deltas (totals only).
	TailIntervals []TailInterval `json:"tail_intervals,omitempty"`
	Errors        uint64         `json:"errors"`
	LastError     string         `json:"last_error,omitempty"`
	// PeerCountersError says why the peer's counters were not read for every interval (per peer only).
	PeerCountersError string `json:"peer_counters_error,omitempty"`
	// Counts per bucket of Report.BucketBounds (the last one above the last bound); not cumulative.
	Counts []uint64 `json:"bucket_counts"`
}

// Report is one probe run: the totals over every peer, then each peer.
type Report struct {
	DurationSeconds  float64   `json:"duration_seconds"`
	Streams          int       `json:"streams_per_peer"`
	Rate             float64   `json:"rate_per_stream"`
	ThresholdSeconds float64   `json:"tail_threshold_seconds"`
	BucketBounds     []float64 `json:"bucket_upper_bounds_seconds"`
	IntervalSeconds  float64   `json:"interval_seconds"`
	// CountersRead says whether the node's drop counters were read for every interval; when not,
	// CountersError says why and the intervals they do not cover count as unexplained.
	CountersRead  bool   `json:"counters_read"`
	CountersError string `json:"counters_error,omitempty"`
	// PeerCounters says whether the peers were asked for their counters (Config.PeerCounters); a peer whose
	// counters could not be read for the whole run has its PeerCountersError.
	PeerCounters bool `json:"peer_counters"`
	Result
	Peers []Result `json:"peers"`
}

// Failed lists the peers the probe could not make one round trip with.
func (r Report) Failed() []string {
	var out []string
	for _, p := range r.Peers {
		if p.RoundTrips == 0 {
			out = append(out, p.Peer)
		}
	}
	return out
}

// newReport builds the report from every stream's tally, this node's timeline tl and each peer's (peerTL[p],
// nil entries or a nil slice when the peers' counters were not asked). The totals' causes are the sums of the
// peers' (each with its own peer's counters); the totals' tail intervals are named by this node's counters.
func newReport(cfg Config, tallies [][]tally, tl *timeline, peerTL []*timeline) Report {
	r := Report{
		DurationSeconds:  cfg.Duration.Seconds(),
		Streams:          cfg.Streams,
		Rate:             cfg.Rate,
		ThresholdSeconds: cfg.Threshold.Seconds(),
		BucketBounds:     Bounds,
		IntervalSeconds:  cfg.Interval.Seconds(),
		CountersRead:     tl != nil && tl.err == nil,
		PeerCounters:     cfg.PeerCounters,
		Peers:            make([]Result, len(cfg.Peers)),
	}
	var all tally
	r.Causes, r.CausesBySide = map[string]uint64{}, map[string]map[string]uint64{}
	for p, streams := range tallies {
		var peer tally
		for i := range streams {
			peer.merge(&streams[i])
		}
		r.Peers[p] = result(cfg.Peers[p], &peer)
		var ptl *timeline
		if p < len(peerTL) {
			ptl = peerTL[p]
		}
		pr := &r.Peers[p]
		pr.Causes, pr.CausesBySide, pr.TailIntervals = attributeSides(tl, ptl, peer.tailsAt)
		if ptl != nil && ptl.err != nil {
			pr.PeerCountersError = ptl.err.Error()
		}
		addCauses(r.Causes, r.CausesBySide, pr.Causes, pr.CausesBySide)
		all.merge(&peer)
	}
	causes, bySide := r.Causes, r.CausesBySide
	r.Result = result("", &all)
	r.Causes, r.CausesBySide = causes, bySide
	_, r.TailIntervals = attribute(tl, all.tailsAt)
	if tl != nil && tl.err != nil {
		r.CountersError = tl.err.Error()
	}
	return r
}

func result(peer string, t *tally) Result {
	r := Result{
		Peer:                peer,
		RoundTrips:          t.hist.Total,
		Tails:               t.tails,
		TailsWithRetransmit: t.tailsWithRetransmit,
		TailRetransmits:     t.tailRetransmits,
		Retransmits:         t.retransmits,
		RTOMax:              t.rtoMax.Seconds(),
		Errors:              t.errors,
		LastError:           t.lastError,
		Counts:              t.hist.Counts[:],
	}
	q := func(x float64) *float64 {
		v, ok := t.hist.Quantile(x)
		if !ok {
			return nil
		}
		return &v
	}
	r.Percentiles = Percentiles{P50: q(0.5), P99: q(0.99), P999: q(0.999), P9999: q(0.9999)}
	if t.hist.Total > 0 {
		m := t.hist.Max.Seconds()
		r.MaxSeconds = &m
	}
	return r
}

func addCauses(causes map[string]uint64, bySide map[string]map[string]uint64, c map[string]uint64, s map[string]map[string]uint64) {
	for k, n := range c {
		causes[k] += n
	}
	for side, m := range s {
		if bySide[side] == nil {
			bySide[side] = map[string]uint64{}
		}
		for k, n := range m {
			bySide[side][k] += n
		}
	}
}
