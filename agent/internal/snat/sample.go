package snat

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sampled is one destination as `wirespeed-agent diagnose` saw it.
type Sampled struct {
	Destination string `json:"destination"`
	// PortsInUse: open flows at the end plus flows seen ending during the interval less than their hold before.
	PortsInUse int `json:"ports_in_use"`
	Open       int `json:"open"`
	// NewPerSecond: new connections to it during the interval, per second.
	NewPerSecond float64 `json:"new_per_second"`
}

// SampleResult is the outbound SNAT part of a diagnosis.
type SampleResult struct {
	IntervalSeconds float64   `json:"interval_seconds"`
	HoldSeconds     float64   `json:"hold_seconds"`     // TCP's, after the close
	UDPHoldSeconds  float64   `json:"udp_hold_seconds"` // after the last packet
	Top             []Sampled `json:"top"`
	// Other sums every destination not in Top.
	OtherPortsInUse int `json:"other_ports_in_use"`
	// EventsLost: the event socket overflowed during the interval, so the numbers are a lower bound.
	EventsLost bool `json:"events_lost,omitempty"`
}

// Sample dumps the table, follows its events for interval and returns the busiest destinations. Flows that
// closed before the interval are not seen: the agent's own metric, which has watched since it started,
// counts those within the hold as well.
func Sample(ctx context.Context, src Source, cfg Config, interval time.Duration) (SampleResult, error) {
	res := SampleResult{IntervalSeconds: interval.Seconds(), HoldSeconds: cfg.TCPHold.Seconds(),
		UDPHoldSeconds: cfg.UDPHold.Seconds()}
	events, err := src.Subscribe()
	if err != nil {
		return res, err
	}
	defer func() { _ = events.Close() }()
	table := NewTable(cfg, time.Now())
	table.BeginDump()
	err = src.Dump(ctx, func(f Flow) { table.Dumped(f, time.Now(), false) })
	table.EndDump(time.Now(), err == nil)
	if err != nil {
		return res, fmt.Errorf("dump: %w", err)
	}
	news := map[Destination]int{}
	wctx, cancel := context.WithTimeout(ctx, interval)
	defer cancel()
	for wctx.Err() == nil {
		err := events.Next(wctx, func(f Flow, destroyed bool) {
			if destroyed {
				table.Destroy(f, time.Now())
				return
			}
			table.New(f, time.Now())
			if d, ok := cfg.Classifier.Destination(f); ok {
				news[d]++
			}
		})
		switch {
		case errors.Is(err, ErrOverflow):
			res.EventsLost = true
		case err != nil && wctx.Err() == nil:
			return res, err
		}
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	snap := table.Tick(time.Now())
	res.OtherPortsInUse = snap.OtherInUse
	byLabel := map[string]int{}
	for d, n := range news {
		byLabel[d.String()] = n
	}
	for _, u := range snap.Top {
		res.Top = append(res.Top, Sampled{Destination: u.Destination, PortsInUse: u.InUse, Open: u.Open,
			NewPerSecond: float64(byLabel[u.Destination]) / interval.Seconds()})
	}
	return res, nil
}
