package ctnetlink

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// The clock and the bench Table the accounting's own tests use (package snat's table_test.go and
// table_bench_test.go), for the tests here that feed decoded flows to a Table.

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func benchTable(maxTracked int) *snat.Table {
	return snat.NewTable(snat.Config{Classifier: snat.NewClassifier(nil, false), TCPHold: 240 * time.Second,
		UDPHold: 240 * time.Second, Top: 20, PeakWindow: 24 * time.Hour, MaxTracked: maxTracked}, t0)
}

// mustPrefixes parses the test's own CIDRs (as package snat's DefaultInternal is built).
func mustPrefixes(cidrs ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		out[i] = netip.MustParsePrefix(c)
	}
	return out
}

// Workloads and their readings as package snat's workload_test.go has them.
var (
	payments = snat.Workload{Namespace: "checkout", Name: "payments-api", Kind: "Deployment"}
	export   = snat.Workload{Namespace: "batch", Name: "export", Kind: "CronJob"}
)

func byWorkload(s snat.Snapshot) map[string]int {
	out := map[string]int{}
	for _, u := range s.Workloads {
		out[u.Workload.String()+" "+u.Destination] = u.InUse
	}
	if s.OtherWorkloadInUse > 0 {
		out["other"] = s.OtherWorkloadInUse
	}
	return out
}

func names(us []snat.WorkloadUse) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Workload.String()+" "+strconv.Itoa(u.InUse))
	}
	return out
}
