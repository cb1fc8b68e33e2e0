// Package linkstest gives tests a fresh network namespace with real links in it (veth, bridge), so link
// discovery, MTU and event handling run against the kernel rather than a mock. Needs root (CAP_NET_ADMIN
// and CAP_SYS_ADMIN), as the agent itself does; without it the tests skip with that reason, except under
// CI=true, where they fail.
package linkstest

import (
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/wirespeed-io/wirespeed/agent/internal/ethioctl"
	"github.com/wirespeed-io/wirespeed/agent/internal/links"
)

// NS is a network namespace that lives as long as the test.
type NS struct {
	Handle  netns.NsHandle
	NL      *netlink.Handle
	Ethtool *ethioctl.Reader // the agent's own ioctls; its socket was opened inside the namespace, so they act there
}

// New creates an unnamed namespace (gone once the test closes its handles) without moving the test into it.
// Without the privilege to do so it skips the test (fails it under CI=true): see RequireNetnsPrivilege.
func New(t testing.TB) *NS {
	t.Helper()
	RequireNetnsPrivilege(t)
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("current netns: %v", err)
	}
	defer orig.Close()
	ns, err := netns.New() // also moves this thread into it
	if err != nil {
		t.Fatalf("new netns: %v", err)
	}
	et, etErr := ethioctl.Open()
	if err := netns.Set(orig); err != nil {
		// The thread stays locked: a goroutine that ends locked takes its thread (stuck in the test
		// namespace) with it instead of handing it back to the scheduler.
		t.Fatalf("return to original netns: %v", err)
	}
	runtime.UnlockOSThread()
	if etErr != nil {
		ns.Close()
		t.Fatalf("ethtool socket in netns: %v", etErr)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		_ = et.Close()
		ns.Close()
		t.Fatalf("netlink handle in netns: %v", err)
	}
	n := &NS{Handle: ns, NL: h, Ethtool: et}
	t.Cleanup(func() {
		h.Close()
		_ = et.Close()
		ns.Close()
	})
	return n
}

// Netlink is the agent's netlink seam bound to this namespace.
func (n *NS) Netlink() links.Netlink { return links.NewNetlink(n.NL, &n.Handle) }

// Discoverer classifies links in this namespace. Sysfs is left out: it shows the namespace that mounted
// it (the host's), so inside the test namespace only netlink and ethtool tell the truth.
func (n *NS) Discoverer() links.Discoverer {
	return links.Discoverer{NL: n.Netlink(), Drivers: n.Ethtool}
}

// AddBridge creates a bridge and brings it up (CI kernels without the dummy module still have bridges).
func (n *NS) AddBridge(t testing.TB, name string) netlink.Link {
	t.Helper()
	l := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := n.NL.LinkAdd(l); err != nil {
		t.Fatalf("add bridge %s: %v", name, err)
	}
	return n.up(t, name)
}

// AddVeth creates a veth pair and brings both ends up.
func (n *NS) AddVeth(t testing.TB, name, peer string) netlink.Link {
	t.Helper()
	l := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer}
	if err := n.NL.LinkAdd(l); err != nil {
		t.Fatalf("add veth %s/%s: %v", name, peer, err)
	}
	n.up(t, peer)
	return n.up(t, name)
}

// Delete removes a link.
func (n *NS) Delete(t testing.TB, name string) {
	t.Helper()
	l, err := n.NL.LinkByName(name)
	if err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	if err := n.NL.LinkDel(l); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}

// MTU reads a link's MTU from the kernel.
func (n *NS) MTU(t testing.TB, name string) int {
	t.Helper()
	l, err := n.NL.LinkByName(name)
	if err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	return l.Attrs().MTU
}

// SetMTU changes a link's MTU behind the agent's back.
func (n *NS) SetMTU(t testing.TB, name string, mtu int) {
	t.Helper()
	l, err := n.NL.LinkByName(name)
	if err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	if err := n.NL.LinkSetMTU(l, mtu); err != nil {
		t.Fatalf("set MTU of %s: %v", name, err)
	}
}

func (n *NS) up(t testing.TB, name string) netlink.Link {
	t.Helper()
	l, err := n.NL.LinkByName(name)
	if err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	if err := n.NL.LinkSetUp(l); err != nil {
		t.Fatalf("set %s up: %v", name, err)
	}
	return l
}
