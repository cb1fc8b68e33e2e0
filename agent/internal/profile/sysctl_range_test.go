package profile

import "testing"

// The schema's bound is the number advice quotes (diagnose's backlog finding), so it must be there and be AKS's.
func TestSysctlMaximumFromSchema(t *testing.T) {
	for _, c := range []struct {
		name string
		max  int
		ok   bool
	}{
		{"net.core.netdev_max_backlog", 3240000, true},
		{"net.core.rmem_max", 134217728, true},
		{"net.ipv4.no_such_sysctl", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, ok := SysctlMaximum(c.name); got != c.max || ok != c.ok {
				t.Fatalf("SysctlMaximum(%q) = %d, %v; want %d, %v", c.name, got, ok, c.max, c.ok)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 3240000: "3,240,000", -1234: "-1,234"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
