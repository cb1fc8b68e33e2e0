package profile

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/netip"
)

// Outbound kinds (wirespeed.sizing.snat_limits).
const (
	KindAzureLoadBalancer = "azure-load-balancer"
	KindAzureNATGateway   = "azure-nat-gateway"
	KindAWSNATGateway     = "aws-nat-gateway"
)

// cidrFormat is the JSON Schema format of outbound.exclude_cidrs items; the Python model registers the same
// rule (wirespeed.profile._cidr), and both word a failure with the shared table's "cidr" message.
const cidrFormat = "cidr"

// validCIDR accepts what netip.ParsePrefix does: an address (no zone, no leading zeros) and a decimal
// prefix length; host bits may be set. Non-strings are left to the "type" keyword.
func validCIDR(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if _, err := netip.ParsePrefix(s); err != nil {
		return fmt.Errorf("%s", say("cidr"))
	}
	return nil
}

// snatLimitsJSON is components/wirespeed/data/snat_limits.json, generated from wirespeed.sizing.snat_limits
// and copied here byte for byte by `make regen` (a test compares them): what one destination may use per
// kind of egress, with the source of each number.
//
//go:embed snat_limits.json
var snatLimitsJSON []byte

// KindLimits is one kind of egress in snat_limits.json.
type KindLimits struct {
	SizedBy string `json:"sized_by"` // the outbound field that sizes it: allocated_ports_per_node | public_ips
	PerUnit int    `json:"per_unit"` // what one destination may use per unit of that field
	// Shared: one gateway's capacity serves every node behind it, so a node's own use is a lower bound.
	Shared      bool `json:"shared"`
	Destination struct {
		TCP string `json:"tcp"` // address-port
		UDP string `json:"udp"` // address-port, or node (Azure load balancer: a port-restricted cone NAT)
	} `json:"destination"`
	Source string `json:"source"`
}

// Limits is every kind of egress, read from the embedded shared file.
var Limits = mustLimits(snatLimitsJSON)

// mustLimits panics only if the embedded file (a build input, covered by tests) is broken.
func mustLimits(data []byte) map[string]KindLimits {
	var doc struct {
		Kinds map[string]KindLimits `json:"kinds"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		panic(fmt.Sprintf("embedded snat_limits.json: %v", err))
	}
	for _, k := range []string{KindAzureLoadBalancer, KindAzureNATGateway, KindAWSNATGateway} {
		if l, ok := doc.Kinds[k]; !ok || l.PerUnit <= 0 {
			panic(fmt.Sprintf("embedded snat_limits.json: kind %q missing or without per_unit", k))
		}
	}
	return doc.Kinds
}

// Limits returns the facts of the section's kind.
func (o *Outbound) Limits() KindLimits { return Limits[o.Kind] }

// Capacity is what one destination may use: the allocated ports of an Azure load balancer's node, or the
// per-destination limit per IP times the NAT gateway's IPs.
func (o *Outbound) Capacity() int {
	l := o.Limits()
	units := 0
	switch {
	case l.SizedBy == "allocated_ports_per_node" && o.AllocatedPortsPerNode != nil:
		units = *o.AllocatedPortsPerNode
	case l.SizedBy == "public_ips" && o.PublicIPs != nil:
		units = *o.PublicIPs
	}
	return l.PerUnit * units
}

// UDPOnePool reports whether every UDP flow of the node draws on one pool of ports, whatever its destination.
func (o *Outbound) UDPOnePool() bool { return o.Limits().Destination.UDP == "node" }

// rawOutbound decodes the section before its defaults are filled.
type rawOutbound struct {
	Kind                  string    `json:"kind"`
	AllocatedPortsPerNode *int      `json:"allocated_ports_per_node"`
	PublicIPs             *int      `json:"public_ips"`
	PressurePercent       *int      `json:"pressure_percent"`
	ExcludeCIDRs          *[]string `json:"exclude_cidrs"`
	HoldSeconds           *int      `json:"hold_seconds"`
	TCPHoldSeconds        *int      `json:"tcp_hold_seconds"`
	UDPHoldSeconds        *int      `json:"udp_hold_seconds"`
}

func (r *rawOutbound) withDefaults() *Outbound {
	if r == nil {
		return nil
	}
	o := &Outbound{Kind: r.Kind, AllocatedPortsPerNode: r.AllocatedPortsPerNode, PublicIPs: r.PublicIPs,
		PressurePercent: outboundDefaults.PressurePercent, HoldSeconds: outboundDefaults.HoldSeconds,
		TCPHoldSeconds: r.TCPHoldSeconds, UDPHoldSeconds: r.UDPHoldSeconds, ExcludeCIDRs: []string{}}
	if r.PressurePercent != nil {
		o.PressurePercent = *r.PressurePercent
	}
	if r.HoldSeconds != nil {
		o.HoldSeconds = *r.HoldSeconds
	}
	if r.ExcludeCIDRs != nil {
		o.ExcludeCIDRs = append(o.ExcludeCIDRs, *r.ExcludeCIDRs...)
	}
	return o
}

// TCPHold is how many seconds a TCP flow holds its SNAT port after its close: tcp_hold_seconds, else
// hold_seconds (wirespeed.profile.Outbound.tcp_hold).
func (o *Outbound) TCPHold() int {
	if o.TCPHoldSeconds != nil {
		return *o.TCPHoldSeconds
	}
	return o.HoldSeconds
}

// UDPHold is how many seconds a UDP flow holds its SNAT port after its last packet: udp_hold_seconds, else
// hold_seconds (wirespeed.profile.Outbound.udp_hold).
func (o *Outbound) UDPHold() int {
	if o.UDPHoldSeconds != nil {
		return *o.UDPHoldSeconds
	}
	return o.HoldSeconds
}

// DefaultHoldSeconds is how long a closed flow holds its SNAT port when no profile says otherwise (the
// schema's default for outbound.hold_seconds).
func DefaultHoldSeconds() int { return outboundDefaults.HoldSeconds }

// outboundDefaults are the section's defaults, read from the embedded schema's "default" keywords (the
// Python model generates them from wirespeed.sizing.snat_limits): one source for both languages.
var outboundDefaults = readOutboundDefaults(schemaJSON)

type defaults struct{ PressurePercent, HoldSeconds int }

// readOutboundDefaults panics only if the embedded schema (a build input, covered by tests) lacks them.
func readOutboundDefaults(schema []byte) defaults {
	type withDefault struct {
		Default *int `json:"default"`
	}
	var doc struct {
		Defs struct {
			Outbound struct {
				Properties struct {
					PressurePercent withDefault `json:"pressure_percent"`
					HoldSeconds     withDefault `json:"hold_seconds"`
				} `json:"properties"`
			} `json:"Outbound"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		panic(fmt.Sprintf("embedded profile schema: %v", err))
	}
	props := doc.Defs.Outbound.Properties
	if props.PressurePercent.Default == nil || props.HoldSeconds.Default == nil {
		panic("embedded profile schema: Outbound pressure_percent/hold_seconds carry no default")
	}
	return defaults{PressurePercent: *props.PressurePercent.Default, HoldSeconds: *props.HoldSeconds.Default}
}
