package main

import (
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// The accounting's configuration is the profile's outbound section with the flags on top: exclusions from both,
// the profile's hold unless --snat-hold was given, and the egress kind's way of grouping UDP.
func TestSNATConfigMergesTheProfileAndTheFlags(t *testing.T) {
	p, err := profile.Parse([]byte(`{"name":"o","outbound":{"kind":"azure-load-balancer",` +
		`"allocated_ports_per_node":1024,"hold_seconds":30,"exclude_cidrs":["198.18.0.0/15"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"--profile", "p.json", "--snat-exclude-cidr", "203.0.113.0/24"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := snatConfig(o.snat, p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hold != 30*time.Second || cfg.Top != 20 || cfg.PeakWindow != 24*time.Hour {
		t.Errorf("hold %s, top %d, peak window %s; want the profile's 30s, 20, 24h", cfg.Hold, cfg.Top, cfg.PeakWindow)
	}
	pod := netip.MustParseAddr("10.244.1.10")
	for peer, want := range map[string]string{
		"198.18.0.9:443":  "",                  // the profile's exclusion
		"203.0.113.9:443": "",                  // the flag's
		"10.0.0.9:443":    "",                  // a default one (RFC 1918)
		"192.0.2.9:443":   "192.0.2.9:443/tcp", // outside them all
	} {
		d, ok := cfg.Classifier.Destination(snat.Flow{Proto: snat.ProtoTCP, OrigSrc: pod,
			Peer: netip.MustParseAddrPort(peer)})
		if got := map[bool]string{true: d.String(), false: ""}[ok]; got != want {
			t.Errorf("flow to %s: %q, want %q", peer, got, want)
		}
	}
	udp := snat.Flow{Proto: snat.ProtoUDP, OrigSrc: pod, Peer: netip.MustParseAddrPort("192.0.2.9:53")}
	if d, _ := cfg.Classifier.Destination(udp); d.String() != "*:*/udp" {
		t.Errorf("UDP behind an Azure load balancer counted under %q, want the node's one pool *:*/udp", d)
	}
	o, err = parseFlags([]string{"--profile", "p.json", "--snat-hold", "5s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = snatConfig(o.snat, p); err != nil || cfg.Hold != 5*time.Second {
		t.Errorf("--snat-hold 5s over the profile's 30s: hold %s, err %v", cfg.Hold, err)
	}
}
