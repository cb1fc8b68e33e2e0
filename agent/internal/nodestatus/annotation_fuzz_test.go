package nodestatus

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// FuzzEncodeAnnotation: whatever a report holds (any text from a driver or the kernel, any number of links and
// errors), the tuning-status annotation is valid JSON within maxAnnotationBytes that decodes as a status.Report
// with the same profile state, so `wirespeed drift` can always read what the agent wrote.
func FuzzEncodeAnnotation(f *testing.F) {
	f.Add("throughput", "all settings applied", "eth0", "mlx5_core", "", uint16(1), uint8(0), int64(32768))
	f.Add(strings.Repeat("p", 300), strings.Repeat("\xff", 900), "\x00", "\u2028", "ring refused", uint16(500), uint8(40), int64(-1))
	f.Fuzz(func(t *testing.T, profile, reason, link, driver, errText string, links uint16, errs uint8, backlog int64) {
		r := status.Report{
			Profile: profile, State: status.StateDegraded, Reason: reason,
			Sysctls: map[string]status.Value{"net.core.netdev_max_backlog": {Desired: backlog, Current: 1000}},
			Time:    time.Unix(1_700_000_000, 0).UTC(),
		}
		for n := range int(links % 600) {
			r.Interfaces = append(r.Interfaces, status.Interface{
				Name: link, Index: n, Driver: driver, Role: "primary", Selected: n%3 != 0, Reason: reason, Error: errText,
				RX: &status.Ring{Desired: 4096, Current: 1024, Max: 8192},
			})
		}
		for range int(errs) {
			r.Errors = append(r.Errors, errText)
		}
		b := encodeAnnotation(r)
		if len(b) > maxAnnotationBytes && len(profile) <= maxTextBytes {
			t.Fatalf("annotation of %d bytes, more than %d", len(b), maxAnnotationBytes)
		}
		if !utf8.Valid(b) {
			t.Fatalf("annotation is not UTF-8: %q", b)
		}
		var back status.Report
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("annotation does not decode: %v\n%s", err, b)
		}
		if back.State != r.State || !back.Time.Equal(r.Time) {
			t.Fatalf("decoded %+v from %+v", back, r)
		}
	})
}
