package nodestatus

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

func TestEncodeAnnotation(t *testing.T) {
	at := time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)
	vf := status.Interface{Name: "enP1s1", Index: 7, Driver: "mlx5_core", Role: "sriov-vf", Selected: true,
		Reason: "enslaved to eth0", RX: &status.Ring{Desired: 8192, Current: 8192, Max: 8192}}
	veth := status.Interface{Name: "lxc12ab", Index: 40, Driver: "veth", Role: "virtual",
		Reason: "pod interface"}
	many := func(n int) []status.Interface {
		out := make([]status.Interface, n)
		for i := range out {
			out[i] = vf
			out[i].Name = fmt.Sprintf("enP%ds1", i)
			out[i].Error = strings.Repeat("invalid argument ", 40)
		}
		return out
	}
	for _, tc := range []struct {
		name           string
		report         status.Report
		want           string // exact JSON, when the report fits unshrunk
		wantInterfaces int
		wantOmitted    int
	}{
		{
			name: "selected interfaces only, exact JSON",
			report: status.Report{Profile: "throughput", State: status.StateApplied, Reason: "all settings applied",
				Interfaces: []status.Interface{vf, veth},
				Sysctls:    map[string]status.Value{"net.core.netdev_max_backlog": {Desired: 32768, Current: 32768}},
				Time:       at},
			want: `{"profile":"throughput","state":"applied","reason":"all settings applied",` +
				`"interfaces":[{"name":"enP1s1","index":7,"driver":"mlx5_core","role":"sriov-vf","selected":true,` +
				`"reason":"enslaved to eth0","rx":{"desired":8192,"current":8192,"max":8192}}],` +
				`"sysctls":{"net.core.netdev_max_backlog":{"desired":32768,"current":32768}},` +
				`"time":"2026-11-22T13:00:00Z"}`,
			wantInterfaces: 1,
		},
		{
			name: "a ring the device refused shows desired, current and refused, exact JSON",
			report: status.Report{Profile: "throughput", State: status.StateDegraded,
				Reason: "1 problem(s): enP1s1: rx ring: the device kept 4096 when 8192 was written",
				Interfaces: []status.Interface{{Name: "enP1s1", Index: 7, Driver: "mlx5_core", Role: "sriov-vf",
					Selected: true, Reason: "enslaved to eth0",
					RX:    &status.Ring{Desired: 8192, Current: 4096, Max: 8192, Refused: true},
					Error: "rx ring: the device kept 4096 when 8192 was written"}},
				Errors: []string{"enP1s1: rx ring: the device kept 4096 when 8192 was written"},
				Time:   at},
			want: `{"profile":"throughput","state":"degraded",` +
				`"reason":"1 problem(s): enP1s1: rx ring: the device kept 4096 when 8192 was written",` +
				`"interfaces":[{"name":"enP1s1","index":7,"driver":"mlx5_core","role":"sriov-vf","selected":true,` +
				`"reason":"enslaved to eth0","rx":{"desired":8192,"current":4096,"max":8192,"refused":true},` +
				`"error":"rx ring: the device kept 4096 when 8192 was written"}],"sysctls":null,` +
				`"errors":["enP1s1: rx ring: the device kept 4096 when 8192 was written"],"time":"2026-11-22T13:00:00Z"}`,
			wantInterfaces: 1,
		},
		{
			name: "hundreds of pod veths leave no trace",
			report: status.Report{Profile: "throughput", State: status.StateApplied,
				Interfaces: append([]status.Interface{vf}, func() []status.Interface {
					v := make([]status.Interface, 500)
					for i := range v {
						v[i] = veth
					}
					return v
				}()...), Time: at},
			wantInterfaces: 1,
		},
		{
			name: "too many failing interfaces are cut to fit, and counted",
			report: status.Report{Profile: "throughput", State: status.StateDegraded,
				Reason: strings.Repeat("x", 5000), Interfaces: many(300),
				Errors: strings.Split(strings.Repeat("eth1: invalid argument,", 100), ","), Time: at},
			wantInterfaces: -1, // whatever fits
		},
		{
			name: "an absurd sysctl map still leaves the summary",
			report: status.Report{Profile: "throughput", State: status.StateApplied, Interfaces: many(3),
				Sysctls: func() map[string]status.Value {
					m := map[string]status.Value{}
					for i := range 2000 {
						m[fmt.Sprintf("net.ipv4.conf.veth%04d.rp_filter", i)] = status.Value{Desired: 0, Current: 1}
					}
					return m
				}(), Time: at},
			wantInterfaces: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeAnnotation(tc.report)
			if len(b) > maxAnnotationBytes {
				t.Fatalf("annotation is %d bytes, limit %d", len(b), maxAnnotationBytes)
			}
			if tc.want != "" && string(b) != tc.want {
				t.Fatalf("annotation\n got %s\nwant %s", b, tc.want)
			}
			var a annotation
			if err := json.Unmarshal(b, &a); err != nil {
				t.Fatalf("annotation is not JSON: %v", err)
			}
			var decoded status.Report // consumers decode it as a plain Report
			if err := json.Unmarshal(b, &decoded); err != nil {
				t.Fatalf("annotation does not decode as status.Report: %v", err)
			}
			if !decoded.Time.Equal(at) || decoded.Profile != "throughput" || decoded.State != tc.report.State {
				t.Fatalf("summary lost: %+v", decoded)
			}
			for _, i := range a.Interfaces {
				if !i.Selected {
					t.Fatalf("unselected interface %s in the annotation", i.Name)
				}
			}
			if tc.wantInterfaces >= 0 && len(a.Interfaces) != tc.wantInterfaces {
				t.Fatalf("interfaces = %d, want %d", len(a.Interfaces), tc.wantInterfaces)
			}
			if tc.wantInterfaces < 0 {
				if a.OmittedInterfaces == 0 || len(a.Interfaces)+a.OmittedInterfaces != len(tc.report.Interfaces) {
					t.Fatalf("kept %d + omitted %d interfaces, report had %d",
						len(a.Interfaces), a.OmittedInterfaces, len(tc.report.Interfaces))
				}
				if len(a.Errors)+a.OmittedErrors != len(tc.report.Errors) {
					t.Fatalf("kept %d + omitted %d errors, report had %d",
						len(a.Errors), a.OmittedErrors, len(tc.report.Errors))
				}
				if len(a.Reason) > maxTextBytes {
					t.Fatalf("reason is %d bytes", len(a.Reason))
				}
				// As many interfaces as fit: one more would not.
				a.Interfaces = tc.report.Interfaces[:len(a.Interfaces)+1]
				a.Interfaces[len(a.Interfaces)-1].Error = truncate(a.Interfaces[len(a.Interfaces)-1].Error, maxTextBytes)
				a.OmittedInterfaces--
				if n := len(marshal(a)); n <= maxAnnotationBytes {
					t.Fatalf("dropped an interface that fits (%d bytes with it)", n)
				}
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		n              int
	}{
		{name: "short enough", in: "abc", n: 3, want: "abc"},
		{name: "cut with mark", in: "abcdefgh", n: 6, want: "abc..."},
		{name: "never splits a rune", in: "aé€é", n: 6, want: "aé..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := truncate(tc.in, tc.n); got != tc.want {
				t.Fatalf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}
