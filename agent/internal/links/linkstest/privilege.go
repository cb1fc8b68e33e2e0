package linkstest

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// InCI reports whether a missing prerequisite must fail a test instead of skipping it: CI=true, the
// rule the QEMU real-driver tests follow too. A CI job without privilege would otherwise pass by
// running nothing.
func InCI() bool { return os.Getenv("CI") == "true" }

// RequireNetnsPrivilege skips t, naming why, unless the process may create network namespaces and
// links in them (CAP_SYS_ADMIN for unshare/setns, CAP_NET_ADMIN for links, as root has). Under CI=true
// the missing privilege fails the test instead.
func RequireNetnsPrivilege(t testing.TB) {
	t.Helper()
	missing := missingCapabilities()
	if missing == "" {
		return
	}
	msg := fmt.Sprintf("needs root to create network namespaces (missing %s; euid %d): run the tests as root",
		missing, os.Geteuid())
	if InCI() {
		t.Fatal(msg + "; CI=true, so this is a failure, not a skip")
	}
	t.Skip(msg)
}

// missingCapabilities names the needed capabilities the process lacks in its effective set.
func missingCapabilities() string {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Sprintf("capabilities unreadable: %v", err)
	}
	has := func(c uint) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	var out string
	for _, c := range []struct {
		bit  uint
		name string
	}{{unix.CAP_SYS_ADMIN, "CAP_SYS_ADMIN"}, {unix.CAP_NET_ADMIN, "CAP_NET_ADMIN"}} {
		if !has(c.bit) {
			if out != "" {
				out += ", "
			}
			out += c.name
		}
	}
	return out
}
