// Package snat counts the outbound SNAT ports this node uses per destination, from the kernel's conntrack
// table: a dump, then NEW and DESTROY events (a Source and its EventStream, watch.go: package ctnetlink reads the
// kernel's), kept in a Table (table.go) that the metrics, the Node annotation and the SNATPortPressure condition
// (nodestatus.Pressure) read as a Snapshot.
//
// Which flows count (classify.go): a flow this node started (its original source is inside the cluster: a
// pod, or the node itself) to a peer outside the cluster network. The peer is the reply tuple's source: after
// any DNAT (a Service whose endpoint is outside) that is the address the packets really go to, and after the
// node masquerades a pod's flow the reply comes back to the node's own address, so every such flow takes one
// of the node's SNAT ports at the cloud's NAT. A flow that arrived from outside (its original source is
// external) takes none.
package snat

import (
	"fmt"
	"net/netip"
	"strconv"
)

// IP protocol numbers the accounting keeps (SNAT ports exist for TCP and UDP only).
const (
	ProtoTCP = 6
	ProtoUDP = 17
)

// DefaultInternal are the ranges never counted as a destination: they do not leave the cluster network or
// are never translated by the cloud's NAT.
var DefaultInternal = mustPrefixes(
	"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", // RFC 1918 private
	"100.64.0.0/10",  // RFC 6598 shared address space (CGNAT; some overlay pod ranges)
	"169.254.0.0/16", // RFC 3927 link-local: Azure IMDS, AWS IMDS and the Amazon DNS at 169.254.169.253
	"127.0.0.0/8",    // RFC 1122 loopback
	"0.0.0.0/8",      // RFC 1122 "this network", never a destination
	"224.0.0.0/4",    // RFC 5771 multicast
	// learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16: Azure's host virtual IP
	// (DNS, DHCP, health probes), answered by the host, not through the load balancer or NAT gateway.
	"168.63.129.16/32",
	"::1/128",   // RFC 4291 loopback
	"::/128",    // RFC 4291 unspecified
	"fe80::/10", // RFC 4291 link-local
	"fc00::/7",  // RFC 4193 unique local
	"ff00::/8",  // RFC 4291 multicast
)

func mustPrefixes(cidrs ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		out[i] = netip.MustParsePrefix(c)
	}
	return out
}

// ParsePrefixes parses CIDRs (the profile's exclude_cidrs, --snat-exclude-cidr), naming the first bad one.
func ParsePrefixes(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IPv4 or IPv6 CIDR such as 10.244.0.0/16 or fd00::/8", c)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Destination is one SNAT destination: an address, a port and a protocol. UDP through an Azure load balancer
// has no address and port 0: every UDP flow of the node draws on one pool of ports, whatever its destination.
type Destination struct {
	Addr  netip.Addr
	Port  uint16
	Proto uint8
}

// String is the metric label: "52.1.2.3:443/tcp", "[2001:db8::1]:443/tcp", "*:*/udp".
func (d Destination) String() string {
	port, addr := "*", "*"
	if d.Port != 0 {
		port = strconv.Itoa(int(d.Port))
	}
	if d.Addr.IsValid() {
		addr = d.Addr.String()
	}
	if d.Addr.Is6() {
		addr = "[" + addr + "]"
	}
	return addr + ":" + port + "/" + protoName(d.Proto)
}

func protoName(p uint8) string {
	switch p {
	case ProtoTCP:
		return "tcp"
	case ProtoUDP:
		return "udp"
	}
	return strconv.Itoa(int(p))
}

// Classifier decides which flows count and under which destination.
type Classifier struct {
	internal []netip.Prefix
	// udpOnePool: every UDP flow is one destination, whatever its address and port (Azure load balancer).
	udpOnePool bool
}

// NewClassifier counts flows to anything outside DefaultInternal and extra (pod and service CIDRs).
func NewClassifier(extra []netip.Prefix, udpOnePool bool) Classifier {
	internal := append(append([]netip.Prefix{}, DefaultInternal...), extra...)
	return Classifier{internal: internal, udpOnePool: udpOnePool}
}

// InternalPrefixes are the ranges Internal reports as inside the cluster network, for a filter that drops what
// the Classifier would (package ctnetlink's kernel filter).
func (c Classifier) InternalPrefixes() []netip.Prefix { return c.internal }

// Internal reports whether a is inside the cluster network (never a destination).
func (c Classifier) Internal(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range c.internal {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Destination returns where f goes and whether it takes an SNAT port of this node: a TCP or UDP flow whose
// original source is internal (a pod or the node) and whose peer (the reply's source) is external.
func (c Classifier) Destination(f Flow) (Destination, bool) {
	if f.Proto != ProtoTCP && f.Proto != ProtoUDP {
		return Destination{}, false
	}
	if !c.Internal(f.OrigSrc) || c.Internal(f.Peer.Addr()) {
		return Destination{}, false
	}
	d := Destination{Addr: f.Peer.Addr().Unmap(), Port: f.Peer.Port(), Proto: f.Proto}
	if f.Proto == ProtoUDP && c.udpOnePool {
		d.Addr, d.Port = netip.Addr{}, 0
	}
	return d, true
}
