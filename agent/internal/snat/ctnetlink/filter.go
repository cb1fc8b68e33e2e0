package ctnetlink

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// A classic BPF socket filter (SO_ATTACH_FILTER) on the event socket drops, inside the kernel, the events the
// Classifier would ignore: flows that are not TCP or UDP, flows started outside the cluster (inbound), and flows
// whose peer is inside it (pod to pod, pod to service, node to API server). On a real node those are most of
// conntrack's traffic; a dropped event is never queued, copied to the agent or woken for, and takes no room in
// the receive buffer. The filter runs in the context of whatever created or destroyed the entry, not the agent.
//
// It finds attributes with the kernel's netlink helpers (SKF_AD_NLATTR and SKF_AD_NLATTR_NEST,
// Documentation/networking/filter.rst; libnetfilter_conntrack's event filters use the same), so it does not
// depend on the order of attributes. It is conservative: what it cannot judge (an attribute it cannot find, an
// IPv4-mapped IPv6 address, which the Classifier unmaps) it passes to the agent, whose Classifier decides, so
// it only ever removes events the agent would drop anyway.

// Offsets and ctnetlink attribute types the filter reads (see ctdecode.go for the layouts).
const (
	filterAttrsOffset = nlmsgHeaderBytes + nfgenBytes // the first attribute of a one-message datagram
	ctaIPv4SrcType    = ctaIPv4Src
	ctaIPv6SrcType    = ctaIPv6Src
	nlaHeaderBytes    = 4
	scratchTuple      = 0 // M[0]: offset of CTA_TUPLE_ORIG
	scratchIP         = 1 // M[1]: offset of the CTA_TUPLE_IP being judged
	filterAccept      = 0xffffffff
	filterDrop        = 0
)

// bpfMaxInstructions is BPF_MAXINSNS (include/uapi/linux/bpf_common.h), the longest classic program the
// kernel takes.
const bpfMaxInstructions = 4096

// maxFilterPrefixes bounds the program (the kernel takes at most BPF_MAXINSNS, 4,096, instructions; an IPv6
// prefix costs up to 13): with more internal prefixes than this the filter judges the protocol only.
const maxFilterPrefixes = 250

// eventFilter is the program for internal (the Classifier's internal prefixes).
func eventFilter(internal []netip.Prefix) ([]bpf.RawInstruction, error) {
	var b asm
	find := func(typ uint32, nested bool) { // A = offset of attribute typ (in the nest at A), or 0
		b.op(bpf.LoadConstant{Dst: bpf.RegX, Val: typ})
		ext := bpf.ExtNetlinkAttr
		if nested {
			ext = bpf.ExtNetlinkAttrNested
		}
		b.op(bpf.LoadExtension{Num: ext})
		b.jumpIfZero("accept") // not found: let the agent judge
	}
	// The original tuple's protocol: TCP and UDP only.
	b.op(bpf.LoadConstant{Dst: bpf.RegA, Val: filterAttrsOffset})
	find(ctaTupleOrig, false)
	b.op(bpf.StoreScratch{Src: bpf.RegA, N: scratchTuple})
	find(ctaTupleProto, true)
	find(ctaProtoNum, true)
	b.op(bpf.TAX{})
	b.op(bpf.LoadIndirect{Off: nlaHeaderBytes, Size: 1})
	b.op(bpf.JumpIf{Cond: bpf.JumpEqual, Val: snat.ProtoTCP, SkipTrue: 2})
	b.op(bpf.JumpIf{Cond: bpf.JumpEqual, Val: snat.ProtoUDP, SkipTrue: 1})
	b.jump("drop")
	prefixes := internal
	if len(prefixes) > maxFilterPrefixes {
		b.jump("accept")
		prefixes = nil
	}
	// Started inside the cluster: the original source is internal.
	b.op(bpf.LoadScratch{Dst: bpf.RegA, N: scratchTuple})
	find(ctaTupleIP, true)
	b.op(bpf.StoreScratch{Src: bpf.RegA, N: scratchIP})
	b.source(prefixes, "orig", "reply", "drop", "accept")
	// To a peer outside it: the reply's source is external.
	b.label("reply")
	b.op(bpf.LoadConstant{Dst: bpf.RegA, Val: filterAttrsOffset})
	find(ctaTupleReply, false)
	find(ctaTupleIP, true)
	b.op(bpf.StoreScratch{Src: bpf.RegA, N: scratchIP})
	b.source(prefixes, "peer", "drop", "accept", "accept")
	b.label("accept")
	b.op(bpf.RetConstant{Val: filterAccept})
	b.label("drop")
	b.op(bpf.RetConstant{Val: filterDrop})
	return b.assemble()
}

// source judges the address of the CTA_TUPLE_IP at M[scratchIP]: internal, external, or unknown (no address,
// or an IPv4-mapped IPv6 one). name keeps its labels apart.
func (b *asm) source(prefixes []netip.Prefix, name, internal, external, unknown string) {
	v6 := name + "-v6"
	b.op(bpf.LoadScratch{Dst: bpf.RegA, N: scratchIP})
	b.op(bpf.LoadConstant{Dst: bpf.RegX, Val: ctaIPv4SrcType})
	b.op(bpf.LoadExtension{Num: bpf.ExtNetlinkAttrNested})
	b.jumpIfZero(v6)
	b.op(bpf.TAX{})
	for _, p := range prefixes {
		if p.Addr().Is4() {
			b.prefix(p, internal)
		}
	}
	b.jump(external)
	b.label(v6)
	b.op(bpf.LoadScratch{Dst: bpf.RegA, N: scratchIP})
	b.op(bpf.LoadConstant{Dst: bpf.RegX, Val: ctaIPv6SrcType})
	b.op(bpf.LoadExtension{Num: bpf.ExtNetlinkAttrNested})
	b.jumpIfZero(unknown)
	b.op(bpf.TAX{})
	b.prefix(netip.MustParsePrefix("::ffff:0:0/96"), unknown) // the Classifier unmaps these
	for _, p := range prefixes {
		if p.Addr().Is6() {
			b.prefix(p, internal)
		}
	}
	b.jump(external)
}

// prefix jumps to target when the address at X+4 (an attribute's payload, in network order) is inside p.
func (b *asm) prefix(p netip.Prefix, target string) {
	addr := p.Masked().Addr().AsSlice()
	var checks []bpf.Instruction
	for w := 0; w*32 < p.Bits(); w++ {
		bits := min(32, p.Bits()-w*32)
		mask := uint32(0xffffffff) << (32 - bits)
		checks = append(checks, bpf.LoadIndirect{Off: uint32(nlaHeaderBytes + 4*w), Size: 4},
			bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: mask})
		checks = append(checks, bpf.JumpIf{Cond: bpf.JumpEqual, Val: binary.BigEndian.Uint32(addr[4*w:])})
	}
	// Each word that differs skips the rest of this prefix (the remaining checks and the jump to target).
	for i, in := range checks {
		if j, ok := in.(bpf.JumpIf); ok {
			j.SkipFalse = uint8(len(checks) - i) // to just past the final jump
			checks[i] = j
		}
	}
	for _, in := range checks {
		b.op(in)
	}
	b.jump(target) // a /0 has no checks: everything is inside it
}

// asm assembles a program with forward jumps to labels: conditional jumps only skip a few instructions, so
// every jump to a label is an unconditional one (32-bit offset).
type asm struct {
	ins    []bpf.Instruction
	labels map[string]int
	jumps  map[int]string // instruction index -> label
}

func (b *asm) op(in bpf.Instruction) { b.ins = append(b.ins, in) }

func (b *asm) jump(label string) {
	if b.jumps == nil {
		b.jumps = map[int]string{}
	}
	b.jumps[len(b.ins)] = label
	b.op(bpf.Jump{})
}

// jumpIfZero jumps to label when A is 0.
func (b *asm) jumpIfZero(label string) {
	b.op(bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 0, SkipTrue: 1})
	b.jump(label)
}

func (b *asm) label(name string) {
	if b.labels == nil {
		b.labels = map[string]int{}
	}
	b.labels[name] = len(b.ins)
}

func (b *asm) assemble() ([]bpf.RawInstruction, error) {
	for at, name := range b.jumps {
		to, ok := b.labels[name]
		if !ok || to <= at {
			return nil, fmt.Errorf("event filter: jump to %q (a label must follow its jumps)", name)
		}
		b.ins[at] = bpf.Jump{Skip: uint32(to - at - 1)}
	}
	if len(b.ins) > bpfMaxInstructions {
		return nil, fmt.Errorf("event filter: %d instructions, the kernel takes %d", len(b.ins), bpfMaxInstructions)
	}
	return bpf.Assemble(b.ins)
}

// attachFilter installs prog on the socket fd.
func attachFilter(fd int, prog []bpf.RawInstruction) error {
	f := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		f[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fp := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fp); err != nil {
		return fmt.Errorf("attach conntrack event filter: %w", err)
	}
	return nil
}
