package diagnose

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ProbeRound is the continuous probe's last round as diagnose shows it: round trips, tails and, per side
// (local, peer, both, unknown), the causes named for them, in total and per peer.
type ProbeRound struct {
	EndedSecondsAgo float64     `json:"ended_seconds_ago"`
	DurationSeconds float64     `json:"duration_seconds"`
	ProbePeer                   // the totals (Peer empty)
	Peers           []ProbePeer `json:"peers"`
}

// ProbePeer is one peer's part of a round (or the totals).
type ProbePeer struct {
	Peer         string                       `json:"peer,omitempty"`
	Zone         string                       `json:"zone,omitempty"`
	RoundTrips   uint64                       `json:"round_trips"`
	Tails        uint64                       `json:"tails"`
	Retransmits  uint64                       `json:"retransmits"`
	CausesBySide map[string]map[string]uint64 `json:"causes_by_side"`
}

// writeProbe prints the probe's last round: a line for all peers, then one per peer with tails.
func writeProbe(b *strings.Builder, p *ProbeRound) {
	if p == nil {
		return
	}
	fmt.Fprintf(b, "\nprobe, last round (%.0fs, ended %.0fs ago): %s\n", p.DurationSeconds, p.EndedSecondsAgo, probeLine(p.ProbePeer))
	for _, peer := range p.Peers {
		if peer.Tails > 0 {
			fmt.Fprintf(b, "  %-20s %s\n", peer.Peer, probeLine(peer))
		}
	}
}

func probeLine(p ProbePeer) string {
	s := fmt.Sprintf("%d round trips, %d tails, %d retransmits", p.RoundTrips, p.Tails, p.Retransmits)
	var causes []string
	for _, side := range slices.Sorted(maps.Keys(p.CausesBySide)) {
		for _, c := range slices.Sorted(maps.Keys(p.CausesBySide[side])) {
			causes = append(causes, fmt.Sprintf("%s on %s side %d", c, side, p.CausesBySide[side][c]))
		}
	}
	if len(causes) > 0 {
		s += " (" + strings.Join(causes, ", ") + ")"
	}
	return s
}
