package diagnose

import (
	"fmt"
	"strings"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// FixOutbound: the cluster's outbound SNAT (ports per node, NAT gateway IPs), set where the cluster is
// defined, not on the node.
const FixOutbound = "outbound"

// AddSNAT adds the outbound SNAT sample to r: the busiest destinations, and a snat_port_pressure finding
// when one of them uses pressure_percent of what the profile's outbound section allows (o may be nil).
func AddSNAT(r *Result, s snat.SampleResult, o *profile.Outbound) {
	r.SNAT = &s
	if o == nil || len(s.Top) == 0 {
		return
	}
	top, capacity := s.Top[0], o.Capacity()
	if top.PortsInUse*100 < o.PressurePercent*capacity {
		return
	}
	fix := fmt.Sprintf("raise allocatedOutboundPorts above %d (`wirespeed size azure-lb --from-prometheus URL` sizes it "+
		"from the fleet's measured peak), or reuse connections to %s (HTTP keep-alive, a connection pool)",
		capacity, top.Destination)
	if o.Limits().SizedBy == "public_ips" {
		fix = fmt.Sprintf("add public IPs to the NAT gateway (%d x %d per destination now; `wirespeed size` with "+
			"--from-prometheus sizes them from the fleet's measured peak), or reuse connections to %s",
			*o.PublicIPs, o.Limits().PerUnit, top.Destination)
	}
	// Destinations are labelled address:port/protocol (snat.Destination.String): a UDP one holds its ports for
	// UDP's hold after the last packet.
	hold, ended := s.HoldSeconds, "closed flows"
	if strings.HasSuffix(top.Destination, "/udp") {
		hold, ended = s.UDPHoldSeconds, "flows past their last packet"
	}
	r.Findings = append(r.Findings, Finding{
		Cause:   "snat_port_pressure",
		Counter: "conntrack flows to " + top.Destination,
		Delta:   uint64(top.PortsInUse), PerSecond: top.NewPerSecond,
		Explanation: fmt.Sprintf("%s holds %d of the %d SNAT ports one destination may use (%s, outbound."+
			"pressure_percent %d%%): new connections to it fail once they are gone, for as long as %s "+
			"hold their ports (%.0fs).", top.Destination, top.PortsInUse, capacity, o.Kind, o.PressurePercent,
			ended, hold),
		Fix: Fix{Kind: FixOutbound, Current: fmt.Sprintf("%d ports per destination", capacity), Advice: fix},
	})
}
