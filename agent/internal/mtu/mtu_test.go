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
		want   int
		ok     bool
	}{
		{"absent leaves MTU alone", nil, "mana", 0, false},
		{"every driver when list empty", &profile.MTU{Value: 9000}, "veth", 9000, true},
		{"listed driver", &profile.MTU{Value: 9000, Drivers: []string{"mana"}}, "mana", 9000, true},
		{"unlisted driver", &profile.MTU{Value: 9000, Drivers: []string{"mana"}}, "mlx5_core", 0, false},
		{"capped at Mellanox's 3,900 in Azure", &profile.MTU{Value: 9000}, "mlx5_core", 3900, true},
		{"ena jumbo below its cap", &profile.MTU{Value: 9001}, "ena", 9001, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Desired(&profile.Profile{MTU: c.mtu}, c.driver)
			if got != c.want || ok != c.ok {
				t.Fatalf("Desired = %d, %v; want %d, %v", got, ok, c.want, c.ok)
			}
		})
	}
}
