package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/diagnose"
	"github.com/wirespeed-io/wirespeed/agent/internal/probe"
)

// The subcommand's own flag errors exit 2 with one line naming the flag; --help exits 0. Runs in-process
// (diagnose with real sources is tested against the built binary in tests/agent/test_diagnose.py).
func TestDiagnoseFlags(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"zero interval", []string{"diagnose", "--interval", "0s"}, 2, "diagnose: --interval 0s: must be positive\n"},
		{"extra argument", []string{"diagnose", "now"}, 2, "diagnose: unexpected arguments: [now]\n"},
		{"unreadable proc", []string{"diagnose", "--interval", "1ms", "--proc-root", "/nonexistent"}, 2,
			"diagnose: cannot read softnet_stat: open /nonexistent/net/softnet_stat: no such file or directory\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), c.args, &out, &errb); code != c.code || errb.String() != c.stderr {
				t.Fatalf("exit %d stderr %q, want %d %q", code, errb.String(), c.code, c.stderr)
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"diagnose", "--help"}, &out, &errb); code != 0 ||
		!bytes.Contains(errb.Bytes(), []byte("-interval duration")) {
		t.Fatalf("--help: exit %d, stderr %q", code, errb.String())
	}
}

// diagnose shows the daemon's last probe round (its /probe): tails and causes by side, in total and for each
// peer with tails; no daemon there, or one without --probe (404), shows nothing and is no error.
func TestDiagnoseShowsTheProbesLastRound(t *testing.T) {
	round := probe.FleetRound{Ended: time.Now().Add(-10 * time.Second), Peers: []probe.Node{{Name: "aks-b", Zone: "z2"}, {Name: "aks-c"}},
		Report: probe.Report{DurationSeconds: 60, Result: probe.Result{RoundTrips: 3840, Tails: 2, Retransmits: 2,
			CausesBySide: map[string]map[string]uint64{"peer": {"backlog": 2}}},
			Peers: []probe.Result{{Peer: "10.0.0.2:9809", RoundTrips: 1920, Tails: 2, Retransmits: 2,
				CausesBySide: map[string]map[string]uint64{"peer": {"backlog": 2}}}, {Peer: "10.0.0.3:9809", RoundTrips: 1920}}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/probe" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"last_round": round})
	}))
	defer srv.Close()
	got, err := fetchProbeRound(context.Background(), srv.URL+"/probe")
	if err != nil || got == nil {
		t.Fatalf("%v %v", got, err)
	}
	var b bytes.Buffer
	if err := diagnose.WriteText(&b, diagnose.Result{IntervalSeconds: 1, Probe: got}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"probe, last round (60s, ended 10s ago): 3840 round trips, 2 tails, 2 retransmits (backlog on peer side 2)",
		"  aks-b                1920 round trips, 2 tails, 2 retransmits (backlog on peer side 2)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "aks-c") {
		t.Errorf("a peer without tails is listed:\n%s", b.String())
	}
	if r, err := fetchProbeRound(context.Background(), srv.URL+"/elsewhere"); r != nil || err != nil {
		t.Fatalf("404: %v %v, want nothing", r, err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	if r, err := fetchProbeRound(context.Background(), url+"/probe"); r != nil || err != nil {
		t.Fatalf("no daemon: %v %v, want nothing", r, err)
	}
}
