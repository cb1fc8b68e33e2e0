package ethioctl_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
)

// A real veth in a fresh namespace, asked from 200 fresh goroutines at once (small stacks: the case where
// a stack address handed to the kernel goes stale): every answer names the veth driver, and the ring
// ioctl reaches the driver, which has no ring parameters (EOPNOTSUPP), rather than failing on a bad buffer.
func TestVethDriverNameAndRingFromFreshGoroutines(t *testing.T) {
	ns := linkstest.New(t)
	ns.AddVeth(t, "wsr0", "wsr1")
	r := ns.Ethtool // opened inside the namespace by linkstest
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if name, err := r.DriverName("wsr0"); err != nil || name != "veth" {
				errs <- "DriverName: " + name + " " + errString(err)
			}
			if _, err := r.GetRing("wsr0"); !errors.Is(err, unix.EOPNOTSUPP) {
				errs <- "GetRing on a veth: " + errString(err) + ", want EOPNOTSUPP"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestRingAndDriverErrorsNameTheIoctl(t *testing.T) {
	ns := linkstest.New(t)
	r := ns.Ethtool // opened inside the namespace by linkstest
	if _, err := r.GetRing("wsnone0"); err == nil || err.Error() != "ETHTOOL_GRINGPARAM: no such device" {
		t.Fatalf("GetRing: %v", err)
	}
	if _, err := r.SetRing("wsnone0", ethtool.Ring{RxPending: 8}); err == nil ||
		err.Error() != "ETHTOOL_SRINGPARAM: no such device" {
		t.Fatalf("SetRing: %v", err)
	}
	if _, err := r.DriverName("wsnone0"); err == nil || err.Error() != "ETHTOOL_GDRVINFO: no such device" {
		t.Fatalf("DriverName: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
