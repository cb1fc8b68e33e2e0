package nodestatus

import (
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

func outbound(t *testing.T, doc string) *profile.Outbound {
	t.Helper()
	p, err := profile.Parse([]byte(`{"name":"p","outbound":` + doc + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return p.Outbound
}

// at is sec seconds into the snapshots' clock.
func at(sec float64) time.Time { return pressureEpoch.Add(time.Duration(sec * float64(time.Second))) }

var pressureEpoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func snap(sec float64, max int) snat.Snapshot {
	s := snat.Snapshot{Time: at(sec), Max: max, Peak: max, ConntrackEntries: 42}
	if max > 0 {
		s.MaxDestination = "52.1.2.3:443/tcp"
		s.Top = []snat.Use{{Destination: s.MaxDestination, InUse: max}}
	}
	return s
}

func TestPressureTurnsOnAtTheThresholdAndClearsAfterAQuietSpell(t *testing.T) {
	p := Pressure{Outbound: outbound(t, `{"kind":"azure-load-balancer","allocated_ports_per_node":4096}`),
		ClearAfter: 10 * time.Second}
	steps := []struct {
		sec     float64
		max     int
		on      bool
		message string
	}{
		{0, 0, false, "no outbound flows to destinations outside the cluster (capacity 4,096 ports per destination, threshold 80%)"},
		{1, 3276, false, "busiest destination 52.1.2.3:443/tcp uses 3,276 of 4,096 ports (79%, threshold 80%)"},
		{2, 3300, true, "52.1.2.3:443/tcp uses 3,300 of 4,096 ports (81%, threshold 80%)"},
		{3, 1200, true, "busiest destination 52.1.2.3:443/tcp, below the threshold for 0s, uses 1,200 of 4,096 ports (29%, threshold 80%)"},
		{12, 1200, true, "busiest destination 52.1.2.3:443/tcp, below the threshold for 9s, uses 1,200 of 4,096 ports (29%, threshold 80%)"},
		{13, 1200, false, "busiest destination 52.1.2.3:443/tcp uses 1,200 of 4,096 ports (29%, threshold 80%)"},
	}
	for _, st := range steps {
		got := p.Update(snap(st.sec, st.max))
		if got.Pressure != st.on || got.Message != st.message || got.Capacity != 4096 || got.ThresholdPercent != 80 {
			t.Fatalf("t=%vs max=%d: %+v\nwant on=%v %q", st.sec, st.max, got, st.on, st.message)
		}
	}
}

func TestPressureOfASharedGatewaySaysSo(t *testing.T) {
	p := Pressure{Outbound: outbound(t, `{"kind":"aws-nat-gateway","public_ips":1,"pressure_percent":50}`)}
	got := p.Update(snap(0, 30_000))
	want := "52.1.2.3:443/tcp uses 30,000 of 55,000 ports (55%, threshold 50%; this node alone, the gateway's IPs serve every node behind it)"
	if !got.Pressure || got.Message != want || got.ConntrackEntries != 42 {
		t.Fatalf("%+v\nwant %q", got, want)
	}
}

func TestNoOutboundSectionMeansNoVerdict(t *testing.T) {
	p := Pressure{}
	got := p.Update(snap(0, 60_000))
	if got.Pressure || got.Capacity != 0 || got.Message != "" || got.Max != 60_000 || len(got.Top) != 1 {
		t.Fatalf("%+v", got)
	}
}

var (
	payments = snat.Workload{Namespace: "checkout", Name: "payments-api", Kind: "Deployment"}
	export   = snat.Workload{Namespace: "batch", Name: "export", Kind: "CronJob"}
)

func TestPressureNamesTheSpenders(t *testing.T) {
	p := Pressure{Outbound: outbound(t, `{"kind":"azure-load-balancer","allocated_ports_per_node":3600}`)}
	s := snap(0, 3310)
	s.Attributed = true
	s.MaxWorkloads = []snat.WorkloadUse{{Workload: payments, Destination: s.MaxDestination, InUse: 2410},
		{Workload: export, Destination: s.MaxDestination, InUse: 900}}
	want := "52.1.2.3:443/tcp uses 3,310 of 3,600 ports (92%, threshold 80%); checkout/payments-api (Deployment) " +
		"holds 2,410 of 3,600 ports to 52.1.2.3:443/tcp; batch/export (CronJob) 900"
	if got := p.Update(s); !got.Pressure || got.Message != want {
		t.Fatalf("%q\nwant %q", got.Message, want)
	}
}
