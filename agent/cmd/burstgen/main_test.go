package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
)

// The send guard is what keeps the lab's traffic inside the lab, so it is tested on real namespaces and
// links: each case builds a fresh named namespace, enters it on a locked thread, and asks insideLab.
func TestInsideLab(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T) // runs inside the case's namespace
		nsArg   string             // "" -> the case's own namespace name
		dst     string
		wantErr string // "" -> allowed
	}{
		{name: "on-link through a veth", setup: labVeth, dst: "10.213.1.2"},
		{
			name:    "no namespace named",
			setup:   labVeth,
			nsArg:   "-",
			dst:     "10.213.1.2",
			wantErr: `--netns "": want the name of a namespace under /run/netns`,
		},
		{
			name:    "path instead of a name",
			setup:   labVeth,
			nsArg:   "../netns/x",
			dst:     "10.213.1.2",
			wantErr: `--netns "../netns/x": want the name of a namespace under /run/netns`,
		},
		{
			name:    "named namespace does not exist",
			setup:   labVeth,
			nsArg:   "wsbg-test-absent",
			dst:     "10.213.1.2",
			wantErr: `--netns "wsbg-test-absent": no such file or directory`,
		},
		{
			name:    "running in another namespace than named",
			setup:   labVeth,
			nsArg:   "+other",
			dst:     "10.213.1.2",
			wantErr: `not running in network namespace "wsbg-test-`,
		},
		{
			name: "namespace holds a non-veth link",
			setup: func(t *testing.T) {
				labVeth(t)
				// A bridge, not a dummy: bridge is built into more kernels (this project's VM has no dummy).
				must(t, netlink.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}))
			},
			dst:     "10.213.1.2",
			wantErr: "holds link br0 of type bridge; a lab namespace has only lo and veth",
		},
		{
			name: "destination behind a gateway",
			setup: func(t *testing.T) {
				labVeth(t)
				vtx, err := netlink.LinkByName("vtx")
				must(t, err)
				_, dst, _ := net.ParseCIDR("198.51.100.0/24")
				must(t, netlink.RouteAdd(&netlink.Route{LinkIndex: vtx.Attrs().Index, Dst: dst, Gw: net.ParseIP("10.213.1.2")}))
			},
			dst:     "198.51.100.7",
			wantErr: "198.51.100.7 is routed via gateway 10.213.1.2; want on-link through a veth",
		},
		{
			name:    "no route at all",
			setup:   labVeth,
			dst:     "203.0.113.9",
			wantErr: "no route to 203.0.113.9",
		},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("wsbg-test-%d-%d", os.Getpid(), i)
			err := inFreshNamedNetns(t, name, func() error {
				tc.setup(t)
				arg := tc.nsArg
				switch arg {
				case "":
					arg = name
				case "-":
					arg = ""
				case "+other":
					arg = otherNamedNetns(t, name+"-other")
				}
				return insideLab(arg, net.ParseIP(tc.dst))
			})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("insideLab: %v, want allowed", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("insideLab error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// otherNamedNetns creates a second named namespace, one the test is not running in, without entering it.
func otherNamedNetns(t *testing.T, name string) string {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	return name
}

// labVeth is the lab's sender side: vtx/vrx up, 10.213.1.1/30 on vtx, so 10.213.1.2 is on-link via vtx.
func labVeth(t *testing.T) {
	t.Helper()
	must(t, netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "vtx"}, PeerName: "vrx"}))
	vtx, err := netlink.LinkByName("vtx")
	must(t, err)
	vrx, err := netlink.LinkByName("vrx")
	must(t, err)
	addr, err := netlink.ParseAddr("10.213.1.1/30")
	must(t, err)
	must(t, netlink.AddrAdd(vtx, addr))
	must(t, netlink.LinkSetUp(vrx))
	must(t, netlink.LinkSetUp(vtx))
}

// inFreshNamedNetns runs fn on a locked OS thread inside a new namespace /run/netns/<name>, then returns
// the thread to its namespace and deletes the new one (its links go with it).
func inFreshNamedNetns(t *testing.T, name string, fn func() error) error {
	t.Helper()
	linkstest.RequireNetnsPrivilege(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	must(t, err)
	defer func() { _ = orig.Close() }()
	created, err := netns.NewNamed(name)
	if err != nil {
		t.Fatalf("create netns %s (needs root): %v", name, err)
	}
	defer func() {
		if err := netns.Set(orig); err != nil {
			t.Errorf("return to original netns: %v", err)
		}
		_ = created.Close()
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete netns %s: %v", name, err)
		}
	}()
	return fn()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
