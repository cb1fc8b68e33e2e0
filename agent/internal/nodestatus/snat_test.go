package nodestatus

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

func snatUse(pressure bool, inUse int) status.SNAT {
	msg := "busiest destination 52.1.2.3:443/tcp uses " + itoa(inUse) + " of 4,096 ports"
	if pressure {
		msg = "52.1.2.3:443/tcp uses " + itoa(inUse) + " of 4,096 ports"
	}
	return status.SNAT{Top: []status.SNATDestination{{Destination: "52.1.2.3:443/tcp", PortsInUse: inUse}},
		Max: inUse, Peak: inUse, Capacity: 4096, ThresholdPercent: 80, Pressure: pressure, Message: msg,
		ConntrackEntries: 1234}
}

func itoa(n int) string { return strconv.Itoa(n) }

func (h *harness) snatCondition() (corev1.NodeCondition, bool) {
	h.t.Helper()
	for _, c := range h.node().Status.Conditions {
		if c.Type == status.SNATConditionType {
			return c, true
		}
	}
	return corev1.NodeCondition{}, false
}

func TestSNATPortPressureConditionAndEvents(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.start()
	ctx := context.Background()
	h.r.Report(ctx, applied())
	h.r.SNAT(ctx, snatUse(false, 1))
	h.mustSucceed()
	c, ok := h.snatCondition()
	if !ok || c.Status != corev1.ConditionFalse || c.Reason != ReasonPortsWithinCapacity {
		t.Fatalf("condition %+v (present %v), want False/PortsWithinCapacity", c, ok)
	}
	if a := h.annotation(); a.SNAT == nil || a.SNAT.Capacity != 4096 || a.SNAT.Top[0].PortsInUse != 1 ||
		a.SNAT.ConntrackEntries != 1234 {
		t.Fatalf("annotation snat %+v", a.SNAT)
	}
	if got := h.events(); len(got) != 0 {
		t.Fatalf("events %q: a condition that starts False announces nothing", got)
	}

	// Only the numbers moved: nothing is written until the heartbeat.
	writes := h.writes()
	h.r.SNAT(ctx, snatUse(false, 2))
	h.r.Report(ctx, applied()) // the next reconcile
	h.mustSucceed()
	if h.writes() != writes {
		t.Fatalf("%d writes for SNAT numbers alone", h.writes()-writes)
	}

	h.r.SNAT(ctx, snatUse(true, 3))
	h.mustSucceed()
	c, _ = h.snatCondition()
	if c.Status != corev1.ConditionTrue || c.Reason != ReasonPortsNearCapacity || c.Message != "52.1.2.3:443/tcp uses 3 of 4,096 ports" {
		t.Fatalf("condition %+v, want True/PortsNearCapacity", c)
	}
	if a := h.annotation(); !a.SNAT.Pressure || a.SNAT.Max != 3 {
		t.Fatalf("annotation snat %+v", a.SNAT)
	}
	if got := h.events(); len(got) != 1 || got[0] != "Warning SNATPortPressure x1: 52.1.2.3:443/tcp uses 3 of 4,096 ports" {
		t.Fatalf("events %q", got)
	}
	// The tuning condition is its own: untouched by SNAT's.
	if tc := h.condition(); tc.Status != corev1.ConditionFalse || tc.Reason != ReasonApplied {
		t.Fatalf("tuning condition %+v", tc)
	}

	h.r.SNAT(ctx, snatUse(false, 1))
	h.mustSucceed()
	if c, _ = h.snatCondition(); c.Status != corev1.ConditionFalse {
		t.Fatalf("condition %+v, want False", c)
	}
	if got := h.events(); len(got) != 2 || !strings.HasPrefix(got[1], "Normal SNATPortPressureRelieved x1: ") {
		t.Fatalf("events %q", got)
	}

	// A message-only change is written with the heartbeat.
	h.r.SNAT(ctx, snatUse(false, 4))
	h.clk.Step(heartbeatPeriod + time.Second)
	h.r.Report(ctx, applied())
	h.mustSucceed()
	if c, _ = h.snatCondition(); !strings.Contains(c.Message, " 4 of ") {
		t.Fatalf("condition message %q not refreshed at the heartbeat", c.Message)
	}
}

func TestNoOutboundSectionNoSNATCondition(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.start()
	s := snatUse(false, 7)
	s.Capacity, s.ThresholdPercent, s.Message = 0, 0, ""
	h.r.Report(context.Background(), applied())
	h.r.SNAT(context.Background(), s)
	h.mustSucceed()
	if c, ok := h.snatCondition(); ok {
		t.Fatalf("condition %+v written without an outbound section", c)
	}
	if a := h.annotation(); a.SNAT == nil || a.SNAT.Max != 7 || a.SNAT.Capacity != 0 {
		t.Fatalf("annotation snat %+v", a.SNAT)
	}
}

func TestZoneFromTheNodesLabel(t *testing.T) {
	n := kubeletNode()
	n.Labels = map[string]string{ZoneLabel: "westeurope-2"}
	h := newHarness(t, n)
	if z, err := h.r.Zone(context.Background()); err != nil || z != "westeurope-2" {
		t.Fatalf("zone %q, %v", z, err)
	}
}

// The pressure verdict on a snapshot that knows the workloads (Pressure, as the agent runs it) reaches the
// condition and its Event with the spenders named.
func TestSNATPortPressureNamesTheWorkloadsWithFakeClientset(t *testing.T) {
	out, err := profile.Parse([]byte(`{"name":"p","outbound":{"kind":"azure-load-balancer","allocated_ports_per_node":3600}}`))
	if err != nil {
		t.Fatal(err)
	}
	p := Pressure{Outbound: out.Outbound}
	dest := "52.1.2.3:443/tcp"
	v := p.Update(snat.Snapshot{Time: time.Now(), Max: 3310, Peak: 3310, MaxDestination: dest,
		Top: []snat.Use{{Destination: dest, InUse: 3310}}, Attributed: true, MaxWorkloads: []snat.WorkloadUse{
			{Workload: snat.Workload{Namespace: "checkout", Name: "payments-api", Kind: "Deployment"}, Destination: dest, InUse: 2410},
			{Workload: snat.Workload{Namespace: "batch", Name: "export", Kind: "CronJob"}, Destination: dest, InUse: 900},
		}})
	h := newHarness(t, kubeletNode())
	h.start()
	h.r.Report(context.Background(), applied())
	h.r.SNAT(context.Background(), v)
	h.mustSucceed()
	want := "52.1.2.3:443/tcp uses 3,310 of 3,600 ports (92%, threshold 80%); checkout/payments-api (Deployment) holds " +
		"2,410 of 3,600 ports to 52.1.2.3:443/tcp; batch/export (CronJob) 900"
	if c, _ := h.snatCondition(); c.Status != corev1.ConditionTrue || c.Message != want {
		t.Fatalf("condition %+v\nwant message %q", c, want)
	}
	if got := h.events(); len(got) != 1 || got[0] != "Warning SNATPortPressure x1: "+want {
		t.Fatalf("events %q", got)
	}
	// The annotation carries them as data, for `wirespeed drift`.
	wantWorkloads := []status.SNATWorkload{
		{Namespace: "checkout", Workload: "payments-api", Kind: "Deployment", Destination: dest, PortsInUse: 2410},
		{Namespace: "batch", Workload: "export", Kind: "CronJob", Destination: dest, PortsInUse: 900},
	}
	if a := h.annotation(); a.SNAT == nil || !slices.Equal(a.SNAT.Workloads, wantWorkloads) {
		t.Fatalf("annotation's snat %+v, want workloads %+v", a.SNAT, wantWorkloads)
	}
}
