package ethioctl_test

import (
	"sync"
	"testing"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
)

// A real veth's counters, read from many fresh goroutines at once (small stacks, the case that made
// safchain/ethtool's Stats return nothing): every read has veth's peer_ifindex with the peer's index.
func TestVethStatsFromFreshGoroutines(t *testing.T) {
	ns := linkstest.New(t)
	ns.AddVeth(t, "wse0", "wse1")
	peer, err := ns.NL.LinkByName("wse1")
	if err != nil {
		t.Fatal(err)
	}
	r := ns.Ethtool // opened inside the namespace by linkstest
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := r.Stats("wse0")
			if err != nil {
				errs <- err.Error()
				return
			}
			if v, ok := got["peer_ifindex"]; !ok || int(v) != peer.Attrs().Index {
				errs <- "peer_ifindex missing or wrong"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestErrors(t *testing.T) {
	ns := linkstest.New(t)
	r := ns.Ethtool // opened inside the namespace by linkstest
	cases := []struct{ name, intf, want string }{
		{"no such link", "wsnone0", "ETHTOOL_GSSET_INFO: no such device"},
		{"name too long", "a-name-far-too-long", `ETHTOOL_GSSET_INFO: interface name "a-name-far-too-long" longer than 15 bytes`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := r.Stats(c.intf); err == nil || err.Error() != c.want {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
	// lo has no driver statistics: an empty map, not an error.
	if got, err := r.Stats("lo"); err != nil || len(got) != 0 {
		t.Fatalf("lo: %v, %v; want no counters and no error", got, err)
	}
}
