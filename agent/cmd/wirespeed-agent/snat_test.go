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
	if cfg.TCPHold != 30*time.Second || cfg.UDPHold != 30*time.Second || cfg.Top != 20 || cfg.PeakWindow != 24*time.Hour {
		t.Errorf("holds %s/%s, top %d, peak window %s; want the profile's hold_seconds 30s for both, 20, 24h",
			cfg.TCPHold, cfg.UDPHold, cfg.Top, cfg.PeakWindow)
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
	if cfg, err = snatConfig(o.snat, p); err != nil || cfg.TCPHold != 5*time.Second || cfg.UDPHold != 5*time.Second {
		t.Errorf("--snat-hold 5s over the profile's 30s: holds %s/%s, err %v", cfg.TCPHold, cfg.UDPHold, err)
	}
}

func TestSNATConfigHoldsPerProtocolFromTheProfile(t *testing.T) {
	o, err := parseFlags([]string{"--profile", "p.json"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string][2]time.Duration{
		`"hold_seconds":30,"udp_hold_seconds":1800`:                           {30 * time.Second, 30 * time.Minute},
		`"tcp_hold_seconds":65,"udp_hold_seconds":305`:                        {65 * time.Second, 305 * time.Second},
		`"hold_seconds":30,"tcp_hold_seconds":0`:                              {0, 30 * time.Second},
		`"hold_seconds":3600,"tcp_hold_seconds":3600,"udp_hold_seconds":7200`: {time.Hour, 2 * time.Hour},
		`"pressure_percent":80`:                                               {240 * time.Second, 240 * time.Second},
	} {
		p, err := profile.Parse([]byte(`{"name":"o","outbound":{"kind":"aws-nat-gateway","public_ips":1,` + doc + `}}`))
		if err != nil {
			t.Fatal(doc, err)
		}
		cfg, err := snatConfig(o.snat, p)
		if err != nil || cfg.TCPHold != want[0] || cfg.UDPHold != want[1] {
			t.Errorf("%s: TCP hold %s, UDP hold %s (err %v); want %s, %s", doc, cfg.TCPHold, cfg.UDPHold, err,
				want[0], want[1])
		}
	}
}
