// Package softnet reads /proc/net/softnet_stat, the kernel's per-CPU packet backlog counters.
//
// The agent does not export these (node-exporter already has node_softnet_dropped_total); the microburst
// lab uses them to prove that netdev_max_backlog removes backlog drops, so the parser lives with the agent
// where its fuzz test runs in CI.
//
// Format (net/core/net-procfs.c, softnet_seq_show): one line per online CPU, space-separated columns, each
// a u32 printed as %08x. The columns used here are
//
//	1 processed        packets taken off the backlog
//	2 dropped          packets refused by enqueue_to_backlog because the backlog was full (CPU_BACKLOG)
//	3 time_squeeze     net_rx_action ran out of netdev_budget / netdev_budget_usecs
//	10 received_rps    inter-processor interrupts sent for RPS/RFS (since Linux 2.6.35)
//	11 flow_limit      packets dropped by the flow limiter (since Linux 3.16)
//	13 cpu             the CPU the line belongs to (since Linux 5.10; older kernels: line order, online CPUs only)
//
// Linux 2.6.x prints 9 columns, 3.16+ 11, 5.10+ 13, 6.x 15; columns beyond 15 are ignored so that a newer
// kernel adding one does not break the reader.
package softnet

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// DefaultPath is where the kernel publishes the table. It is not per network namespace: every netns sees
// the host's per-CPU counters.
const DefaultPath = "/proc/net/softnet_stat"

// minColumns is what the oldest supported layout (Linux 2.6.x) prints; maxLine bounds a line so a corrupt
// or hostile file cannot make the scanner allocate without limit (15 columns x 9 bytes is 135).
const (
	minColumns = 9
	maxLine    = 4096
)

// CPUStat is one line of softnet_stat. Counters are the kernel's u32 values and wrap at 2^32.
type CPUStat struct {
	CPU            int    `json:"cpu"`
	Processed      uint32 `json:"processed"`
	Dropped        uint32 `json:"dropped"`
	TimeSqueeze    uint32 `json:"time_squeeze"`
	ReceivedRPS    uint32 `json:"received_rps"`
	FlowLimitCount uint32 `json:"flow_limit_count"`
}

// Parse reads every line of a softnet_stat table.
func Parse(r io.Reader) ([]CPUStat, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxLine)
	var stats []CPUStat
	seen := map[int]int{}
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < minColumns {
			return nil, fmt.Errorf("softnet_stat line %d: %d columns, want at least %d", lineNo, len(fields), minColumns)
		}
		cols := make([]uint32, len(fields))
		for i, f := range fields {
			v, err := strconv.ParseUint(f, 16, 32)
			if err != nil {
				return nil, fmt.Errorf("softnet_stat line %d column %d: %q is not a 32-bit hex counter", lineNo, i+1, f)
			}
			cols[i] = uint32(v)
		}
		s := CPUStat{
			CPU:         len(stats),
			Processed:   cols[0],
			Dropped:     cols[1],
			TimeSqueeze: cols[2],
		}
		if len(cols) >= 10 {
			s.ReceivedRPS = cols[9]
		}
		if len(cols) >= 11 {
			s.FlowLimitCount = cols[10]
		}
		if len(cols) >= 13 {
			s.CPU = int(cols[12])
		}
		if prev, dup := seen[s.CPU]; dup {
			return nil, fmt.Errorf("softnet_stat line %d: cpu %d already on line %d", lineNo, s.CPU, prev)
		}
		seen[s.CPU] = lineNo
		stats = append(stats, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("softnet_stat: %w", err)
	}
	return stats, nil
}

// ReadFile parses the table at path (DefaultPath on a live system).
func ReadFile(path string) ([]CPUStat, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return Parse(f)
}

// Delta returns after minus before per CPU. Subtraction is modulo 2^32, as the kernel's counters wrap.
// A CPU missing from before (brought online in between) counts from zero; a CPU missing from after (gone
// offline) is left out, since its counters can no longer be read.
func Delta(before, after []CPUStat) []CPUStat {
	prev := make(map[int]CPUStat, len(before))
	for _, s := range before {
		prev[s.CPU] = s
	}
	out := make([]CPUStat, 0, len(after))
	for _, a := range after {
		b := prev[a.CPU]
		out = append(out, CPUStat{
			CPU:            a.CPU,
			Processed:      a.Processed - b.Processed,
			Dropped:        a.Dropped - b.Dropped,
			TimeSqueeze:    a.TimeSqueeze - b.TimeSqueeze,
			ReceivedRPS:    a.ReceivedRPS - b.ReceivedRPS,
			FlowLimitCount: a.FlowLimitCount - b.FlowLimitCount,
		})
	}
	return out
}

// Totals sums the counters of all CPUs. Sums are 64-bit: many CPUs near the u32 limit would overflow u32.
type Totals struct {
	Processed      uint64 `json:"processed"`
	Dropped        uint64 `json:"dropped"`
	TimeSqueeze    uint64 `json:"time_squeeze"`
	ReceivedRPS    uint64 `json:"received_rps"`
	FlowLimitCount uint64 `json:"flow_limit_count"`
}

// Sum adds up stats across CPUs.
func Sum(stats []CPUStat) Totals {
	var t Totals
	for _, s := range stats {
		t.Processed += uint64(s.Processed)
		t.Dropped += uint64(s.Dropped)
		t.TimeSqueeze += uint64(s.TimeSqueeze)
		t.ReceivedRPS += uint64(s.ReceivedRPS)
		t.FlowLimitCount += uint64(s.FlowLimitCount)
	}
	return t
}
