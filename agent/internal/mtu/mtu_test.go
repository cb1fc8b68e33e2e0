package mtu

import (
	"testing"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
)

func TestDesired(t *testing.T) {
	cases := []struct {
		name   string
		mtu    *profile.MTU
		driver string
		max    int
		want   int
		ok     bool
	}{
		{"absent leaves MTU alone", nil, "mana", 0, 0, false},
		{"every driver when list empty", &profile.MTU{Value: 9000}, "veth", 65535, 9000, true},
		{"listed driver", &profile.MTU{Value: 9000, Drivers: []string{"mana"}}, "mana", 0, 9000, true},
		{"unlisted driver", &profile.MTU{Value: 9000, Drivers: []string{"mana"}}, "mlx5_core", 0, 0, false},
		{"capped at Mellanox's 3,900 in Azure", &profile.MTU{Value: 9000}, "mlx5_core", 9978, 3900, true},
		{"ena jumbo below its cap", &profile.MTU{Value: 9001}, "ena", 9216, 9001, true},
		{"capped at the device's own max", &profile.MTU{Value: 9000}, "acme_nic", 4000, 4000, true},
		{"device max below the catalog's", &profile.MTU{Value: 9000}, "e1000e", 8000, 8000, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Desired(&profile.Profile{MTU: c.mtu}, c.driver, c.max)
			if got != c.want || ok != c.ok {
				t.Fatalf("Desired = %d, %v; want %d, %v", got, ok, c.want, c.ok)
			}
		})
	}
}
