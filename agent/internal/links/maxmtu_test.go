package links_test

import (
	"encoding/json"
	"os/exec"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
)

// The seam's IFLA_MAX_MTU agrees with iproute2's `ip -d link` maxmtu for real links in a namespace.
func TestLinkMaxMTUMatchesIproute2(t *testing.T) {
	ns := linkstest.New(t)
	ns.AddVeth(t, "wstx0", "wstx1")
	ns.AddBridge(t, "wstxb")
	nl := ns.Netlink()
	for _, name := range []string{"wstx0", "wstxb", "lo"} {
		t.Run(name, func(t *testing.T) {
			l, err := ns.NL.LinkByName(name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := nl.LinkMaxMTU(l.Attrs().Index)
			if err != nil {
				t.Fatal(err)
			}
			if name == "wstx0" && got == 0 {
				t.Fatal("a veth has a max MTU; got none")
			}
			if want := iproute2MaxMTU(t, ns.Handle, name); got != want {
				t.Fatalf("LinkMaxMTU = %d, ip -d link says %d", got, want)
			}
		})
	}
	if _, err := nl.LinkMaxMTU(99999); err == nil {
		t.Fatal("no error for a missing link")
	}
}

// iproute2MaxMTU runs `ip -j -d link show` inside the namespace (the child inherits the thread's netns).
func iproute2MaxMTU(t *testing.T, h netns.NsHandle, name string) int {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer orig.Close()
	if err := netns.Set(h); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	out, runErr := exec.Command("ip", "-j", "-d", "link", "show", name).Output()
	if err := netns.Set(orig); err != nil {
		t.Fatalf("return to original netns: %v", err) // thread stays locked and dies with the goroutine
	}
	runtime.UnlockOSThread()
	if runErr != nil {
		t.Fatalf("ip -d link show %s: %v", name, runErr)
	}
	var links []struct {
		MaxMTU int `json:"max_mtu"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -j output %s: %v", out, err)
	}
	return links[0].MaxMTU
}
