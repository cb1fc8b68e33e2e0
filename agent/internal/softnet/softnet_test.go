package softnet

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Captured on this project's 2-CPU Debian 12 VM, kernel 6.18 (15 columns).
const linux618 = `0000000d 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
00002707 0001d7a5 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000000
`

// Linux 5.10..6.x before input_qlen/process_qlen (13 columns); CPU 1 offline, so line 2 is CPU 2.
const linux510 = `00000010 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 0000000a 0000000b 00000000 00000000
00000020 00000003 00000004 00000000 00000000 00000000 00000000 00000000 00000000 0000000c 0000000d 00000005 00000002
`

// Linux 3.16..5.9 (11 columns, no CPU column: line order is the online CPU order).
const linux316 = `ffffffff 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000003 00000004
00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
`

// Linux 2.6.x (9 columns).
const linux26 = "0000000a 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000\n"

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []CPUStat
		wantErr string
	}{
		{
			name: "linux 6.18, 15 columns, cpu from column 13",
			in:   linux618,
			want: []CPUStat{
				{CPU: 0, Processed: 0xd},
				{CPU: 1, Processed: 0x2707, Dropped: 0x1d7a5, TimeSqueeze: 3},
			},
		},
		{
			name: "linux 5.10, 13 columns, offline cpu leaves a gap",
			in:   linux510,
			want: []CPUStat{
				{CPU: 0, Processed: 0x10, Dropped: 1, TimeSqueeze: 2, ReceivedRPS: 0xa, FlowLimitCount: 0xb},
				{CPU: 2, Processed: 0x20, Dropped: 3, TimeSqueeze: 4, ReceivedRPS: 0xc, FlowLimitCount: 0xd},
			},
		},
		{
			name: "linux 3.16, 11 columns, cpu by line order",
			in:   linux316,
			want: []CPUStat{
				{CPU: 0, Processed: 0xffffffff, Dropped: 1, TimeSqueeze: 2, ReceivedRPS: 3, FlowLimitCount: 4},
				{CPU: 1, Processed: 1},
			},
		},
		{
			name: "linux 2.6, 9 columns",
			in:   linux26,
			want: []CPUStat{{CPU: 0, Processed: 0xa, Dropped: 1, TimeSqueeze: 2}},
		},
		{
			name: "columns beyond 15 are ignored",
			in:   strings.TrimSuffix(linux618, "\n") + " 0000abcd\n",
			want: []CPUStat{
				{CPU: 0, Processed: 0xd},
				{CPU: 1, Processed: 0x2707, Dropped: 0x1d7a5, TimeSqueeze: 3},
			},
		},
		{
			name: "blank lines and missing final newline",
			in:   "\n" + strings.TrimSuffix(linux26, "\n"),
			want: []CPUStat{{CPU: 0, Processed: 0xa, Dropped: 1, TimeSqueeze: 2}},
		},
		{name: "empty file", in: "", want: nil},
		{
			name:    "too few columns",
			in:      "00000001 00000002 00000003\n",
			wantErr: "softnet_stat line 1: 3 columns, want at least 9",
		},
		{
			name:    "not hex",
			in:      strings.Replace(linux26, "00000001", "0000000g", 1),
			wantErr: `softnet_stat line 1 column 2: "0000000g" is not a 32-bit hex counter`,
		},
		{
			name:    "wider than 32 bits",
			in:      strings.Replace(linux26, "0000000a", "100000000", 1),
			wantErr: `softnet_stat line 1 column 1: "100000000" is not a 32-bit hex counter`,
		},
		{
			name:    "negative",
			in:      strings.Replace(linux26, "0000000a", "-1", 1),
			wantErr: `softnet_stat line 1 column 1: "-1" is not a 32-bit hex counter`,
		},
		{
			name:    "same cpu twice",
			in:      linux510 + strings.SplitAfter(linux510, "\n")[0],
			wantErr: "softnet_stat line 3: cpu 0 already on line 1",
		},
		{
			name:    "line longer than any kernel prints",
			in:      strings.Repeat("00000000 ", 1000) + "\n",
			wantErr: "softnet_stat: bufio.Scanner: token too long",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Parse error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDelta(t *testing.T) {
	tests := []struct {
		name          string
		before, after []CPUStat
		want          []CPUStat
	}{
		{
			name:   "plain increase",
			before: []CPUStat{{CPU: 0, Processed: 10, Dropped: 1}, {CPU: 1, Processed: 5}},
			after:  []CPUStat{{CPU: 0, Processed: 30, Dropped: 4}, {CPU: 1, Processed: 5, TimeSqueeze: 2}},
			want:   []CPUStat{{CPU: 0, Processed: 20, Dropped: 3}, {CPU: 1, TimeSqueeze: 2}},
		},
		{
			name:   "u32 wrap",
			before: []CPUStat{{CPU: 0, Dropped: 0xfffffff0}},
			after:  []CPUStat{{CPU: 0, Dropped: 0x10}},
			want:   []CPUStat{{CPU: 0, Dropped: 0x20}},
		},
		{
			name:   "cpu came online counts from zero",
			before: []CPUStat{{CPU: 0, Processed: 1}},
			after:  []CPUStat{{CPU: 0, Processed: 1}, {CPU: 3, Processed: 7, Dropped: 2}},
			want:   []CPUStat{{CPU: 0}, {CPU: 3, Processed: 7, Dropped: 2}},
		},
		{
			name:   "cpu went offline is left out",
			before: []CPUStat{{CPU: 0, Processed: 1}, {CPU: 1, Processed: 9}},
			after:  []CPUStat{{CPU: 0, Processed: 2}},
			want:   []CPUStat{{CPU: 0, Processed: 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Delta(tc.before, tc.after); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Delta = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSumDoesNotOverflowU32(t *testing.T) {
	got := Sum([]CPUStat{{Dropped: 0xffffffff}, {Dropped: 0xffffffff}})
	if want := uint64(0x1fffffffe); got.Dropped != want {
		t.Fatalf("Sum.Dropped = %#x, want %#x", got.Dropped, want)
	}
}

// The live table on whatever machine runs the tests: this kernel's layout must parse, with one line per
// online CPU.
func TestReadFileLiveKernel(t *testing.T) {
	stats, err := ReadFile(DefaultPath)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", DefaultPath, err)
	}
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatalf("read online cpus: %v", err)
	}
	if want := countCPUs(t, strings.TrimSpace(string(online))); len(stats) != want {
		t.Fatalf("%d softnet_stat lines, want one per online CPU (%d, %q)", len(stats), want, online)
	}
}

func TestReadFileMissing(t *testing.T) {
	if _, err := ReadFile(filepath.Join(t.TempDir(), "absent")); !os.IsNotExist(err) {
		t.Fatalf("ReadFile(absent) error = %v, want not-exist", err)
	}
}

// countCPUs expands the kernel's cpu list format ("0-3,5").
func countCPUs(t *testing.T, list string) int {
	t.Helper()
	n := 0
	for _, part := range strings.Split(list, ",") {
		var lo, hi int
		if _, err := fmt.Sscanf(part, "%d-%d", &lo, &hi); err == nil {
			n += hi - lo + 1
			continue
		}
		if _, err := fmt.Sscanf(part, "%d", &lo); err != nil {
			t.Fatalf("cpu list %q: %v", list, err)
		}
		n++
	}
	return n
}

// FuzzParse: any input either fails with an error or yields stats with unique CPUs, whose delta against
// themselves is zero and which survive a print/parse round trip in the kernel's own format.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{linux618, linux510, linux316, linux26, "", "\n\n", "0 0 0 0 0 0 0 0 0 0 0 0 ffffffff\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		stats, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		cpus := map[int]bool{}
		for _, s := range stats {
			if cpus[s.CPU] {
				t.Fatalf("cpu %d twice in %+v", s.CPU, stats)
			}
			cpus[s.CPU] = true
		}
		for _, d := range Delta(stats, stats) {
			if d != (CPUStat{CPU: d.CPU}) {
				t.Fatalf("self delta not zero: %+v", d)
			}
		}
		var b strings.Builder
		for _, s := range stats {
			fmt.Fprintf(&b, "%08x %08x %08x 0 0 0 0 0 0 %08x %08x 0 %08x\n",
				s.Processed, s.Dropped, s.TimeSqueeze, s.ReceivedRPS, s.FlowLimitCount, uint32(s.CPU))
		}
		again, err := Parse(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", b.String(), err)
		}
		if len(stats) > 0 && !reflect.DeepEqual(again, stats) {
			t.Fatalf("round trip: %+v, want %+v", again, stats)
		}
	})
}
