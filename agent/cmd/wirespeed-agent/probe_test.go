package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// Bad probe flags: exit 2 and one error line naming each bad flag, its value and the allowed range, all at
// once, before anything listens or dials.
func TestProbeBadFlagsExit2NamingEachProblem(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	cases := map[string]struct {
		args []string
		want []string
	}{
		"nothing":   {nil, []string{"nothing to do: give --listen ADDR"}},
		"streams":   {[]string{"--peer", "10.0.0.1:9809", "--streams", "0"}, []string{"--streams 0: must be between 1 and 64"}},
		"rate":      {[]string{"--peer", "10.0.0.1:9809", "--rate", "5000"}, []string{"--rate 5000: must be between 1 and 1000 round trips/s per stream"}},
		"too fast":  {[]string{"--peer", "10.0.0.1:9809", "--streams", "64", "--rate", "500"}, []string{"--streams 64 x --rate 500 = 32000 round trips/s per peer: at most 10000"}},
		"duration":  {[]string{"--peer", "10.0.0.1:9809", "--duration", "2h"}, []string{"--duration 2h0m0s: must be between 1s and 1h0m0s"}},
		"threshold": {[]string{"--peer", "10.0.0.1:9809", "--tail-threshold", "0s"}, []string{"--tail-threshold 0s: must be between 1ms and 2s"}},
		"peers": {[]string{"--peer", "10.0.0.1,:9809,10.0.0.2:0,10.0.0.3:1,10.0.0.3:1"}, []string{
			`--peer "10.0.0.1": address 10.0.0.1: missing port in address (want host:port)`,
			`--peer ":9809": no host`, `--peer "10.0.0.2:0": port "0": must be between 1 and 65535`,
			`--peer "10.0.0.3:1": given twice`}},
		"listen":   {[]string{"--listen", "nonsense"}, []string{`--listen "nonsense"`}},
		"taken":    {[]string{"--listen", taken.Addr().String()}, []string{"address already in use"}},
		"interval": {[]string{"--peer", "10.0.0.1:9809", "--interval", "10ms"}, []string{"--interval 10ms: must be between 100ms and 1m0s"}},
		"all":      {[]string{"--streams", "0", "--rate", "0", "--duration", "0s"}, []string{"nothing to do", "--streams 0", "--rate 0", "--duration 0s"}},
		"extra":    {[]string{"--peer", "10.0.0.1:9809", "stray"}, []string{"unexpected arguments: [stray]"}},
		"unknown":  {[]string{"--peers", "10.0.0.1:9809"}, []string{"flag provided but not defined: -peers"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"probe"}, c.args...), &stdout, &stderr)
			if code != probeUsage {
				t.Fatalf("exit %d, want %d\n%s", code, probeUsage, stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q does not say %q", stderr.String(), w)
				}
			}
			if name != "unknown" && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("want one error line, got %q", stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}
