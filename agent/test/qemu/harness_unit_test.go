package qemu

import (
	"strings"
	"testing"
)

// The parser is the test's witness of ring sizes, so it gets its own checks on real ethtool output.
func TestParseEthtoolRings(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    Rings
		wantErr string
	}{
		{
			name: "ethtool 6.1 on e1000e",
			out: "Ring parameters for eth0:\nPre-set maximums:\nRX:\t\t4096\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t4096\n" +
				"Current hardware settings:\nRX:\t\t256\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t256\nRX Buf Len:\t\tn/a\n" +
				"CQE Size:\t\tn/a\nTX Push:\toff\nTCP data split:\tn/a\n",
			want: Rings{MaxRX: 4096, MaxTX: 4096, RX: 256, TX: 256},
		},
		{
			name: "virtio-net with rx_queue_size=1024",
			out:  "Pre-set maximums:\nRX:\t\t1024\nTX:\t\t256\nCurrent hardware settings:\nRX:\t\t512\nTX:\t\t128\n",
			want: Rings{MaxRX: 1024, MaxTX: 256, RX: 512, TX: 128},
		},
		{
			name:    "driver without ring support",
			out:     "netlink error: Operation not supported\n",
			wantErr: "lacks RX/TX maximums",
		},
		{
			name:    "garbled number",
			out:     "Pre-set maximums:\nRX:\t\tlots\n",
			wantErr: `"RX:\t\tlots"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEthtoolRings(strings.Split(tt.out, "\n"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestModuleLoadOrder(t *testing.T) {
	k := &Kernel{
		modDir: "lib/modules/test",
		deps: map[string][]string{
			"kernel/drivers/net/virtio_net.ko":                    {"kernel/drivers/net/net_failover.ko", "kernel/net/core/failover.ko", "kernel/drivers/virtio/virtio_ring.ko"},
			"kernel/drivers/net/net_failover.ko":                  {"kernel/net/core/failover.ko"},
			"kernel/net/core/failover.ko":                         nil,
			"kernel/drivers/virtio/virtio_ring.ko":                nil,
			"kernel/drivers/i2c/algos/i2c-algo-bit.ko":            nil,
			"kernel/drivers/net/ethernet/intel/igbvf/igbvf.ko.xz": nil,
		},
		byName:  map[string]string{},
		builtin: map[string]bool{"virtio_pci": true},
	}
	for mod := range k.deps {
		k.byName[moduleName(mod)] = mod
	}
	tests := []struct {
		name    string
		modules []string
		want    string
		wantErr string
	}{
		{"dependencies before dependents", []string{"virtio_net"},
			"kernel/net/core/failover.ko kernel/drivers/net/net_failover.ko kernel/drivers/virtio/virtio_ring.ko kernel/drivers/net/virtio_net.ko", ""},
		{"dash and underscore name the same module", []string{"i2c-algo-bit"}, "kernel/drivers/i2c/algos/i2c-algo-bit.ko", ""},
		{"each module once", []string{"failover", "net_failover"}, "kernel/net/core/failover.ko kernel/drivers/net/net_failover.ko", ""},
		{"xz-compressed module (Debian 6.12)", []string{"igbvf"}, "kernel/drivers/net/ethernet/intel/igbvf/igbvf.ko.xz", ""},
		{"built-in module needs no insmod", []string{"virtio_pci", "failover"}, "kernel/net/core/failover.ko", ""},
		{"unknown module", []string{"mlx5_core"}, "", `module "mlx5_core" is not in lib/modules/test/modules.dep`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := k.loadOrder(tt.modules)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Fatalf("order = %s, want %s", s, tt.want)
			}
		})
	}
}
