package nodestatus

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// Condition reasons (CamelCase, as Kubernetes condition reasons are). The Event reasons for the
// transitions are status.Event reasons the core does not send: the Reporter owns them.
const (
	ReasonApplied   = "TuningApplied"
	ReasonDegraded  = "TuningDegraded"
	ReasonDryRun    = "DryRun"
	ReasonRecovered = "TuningRecovered"

	// SNATPortPressure's condition reasons and the Events of its transitions.
	ReasonPortsNearCapacity   = "PortsNearCapacity"
	ReasonPortsWithinCapacity = "PortsWithinCapacity"
	ReasonSNATPressure        = "SNATPortPressure"         // Warning, when it turns True
	ReasonSNATRelieved        = "SNATPortPressureRelieved" // Normal, when it leaves True
)

// desiredCondition is the NetworkTuningDegraded condition rep calls for, without times.
func desiredCondition(rep status.Report) corev1.NodeCondition {
	c := corev1.NodeCondition{
		Type:    corev1.NodeConditionType(status.ConditionType),
		Status:  corev1.ConditionFalse,
		Message: truncate(fmt.Sprintf("profile %q: %s", rep.Profile, rep.Reason), maxMessageBytes),
	}
	switch rep.State {
	case status.StateDegraded:
		c.Status, c.Reason = corev1.ConditionTrue, ReasonDegraded
	case status.StateDryRun:
		c.Reason = ReasonDryRun
	default:
		c.Reason = ReasonApplied
	}
	return c
}

// desiredSNATCondition is the SNATPortPressure condition s calls for, without times.
func desiredSNATCondition(s status.SNAT) corev1.NodeCondition {
	c := corev1.NodeCondition{
		Type:    corev1.NodeConditionType(status.SNATConditionType),
		Status:  corev1.ConditionFalse,
		Reason:  ReasonPortsWithinCapacity,
		Message: truncate(s.Message, maxMessageBytes),
	}
	if s.Pressure {
		c.Status, c.Reason = corev1.ConditionTrue, ReasonPortsNearCapacity
	}
	return c
}

// conditionWriter keeps one of the agent's conditions on the Node. It reads the Node's existing condition
// once, so a restarted agent keeps lastTransitionTime and does not announce a transition that did not
// happen.
type conditionWriter struct {
	condType        string
	raised, cleared string // Event reasons when it turns True and when it leaves True
	// messageLags: a new message alone waits for the heartbeat. SNATPortPressure's message carries port
	// counts that move every second; rewriting the Node for each would send every Node watcher an update.
	messageLags bool

	read       bool // the Node's existing condition has been read once
	known      bool // the condition exists on the Node
	status     corev1.ConditionStatus
	transition metav1.Time
	key        string    // status, reason and message of the last write
	at         time.Time // when it was written
}

// sync writes want (a condition without times) when it differs from the last write or the heartbeat is
// due. It returns the Event announcing the transition when the write was one, and on failure the part
// that failed ("get nodes", "patch nodes/status").
func (w *conditionWriter) sync(ctx context.Context, node ownNode, now time.Time, want corev1.NodeCondition) (*status.Event, string, error) {
	key := string(want.Status) + "\x00" + want.Reason
	if !w.messageLags {
		key += "\x00" + want.Message
	}
	if w.read && key == w.key && now.Sub(w.at) < heartbeatPeriod {
		return nil, "", nil
	}
	if !w.read {
		if err := w.readExisting(ctx, node); err != nil {
			return nil, "get nodes", err
		}
	}

	cond := want
	cond.LastHeartbeatTime = metav1.NewTime(now)
	cond.LastTransitionTime = w.transition
	changed := !w.known || w.status != cond.Status
	if changed {
		cond.LastTransitionTime = metav1.NewTime(now)
	}
	// A strategic merge patch merges conditions by type, so the kubelet's own conditions are untouched.
	patch := map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}}
	if err := node.patch(ctx, types.StrategicMergePatchType, patch, "status"); err != nil {
		return nil, "patch nodes/status", err
	}

	var announce *status.Event
	if changed {
		announce = w.transitionEvent(cond)
	}
	w.known, w.status, w.transition = true, cond.Status, cond.LastTransitionTime
	w.key, w.at = key, now
	return announce, "", nil
}

func (w *conditionWriter) readExisting(ctx context.Context, node ownNode) error {
	n, err := node.get(ctx)
	if err != nil {
		return err
	}
	for _, c := range n.Status.Conditions {
		if string(c.Type) == w.condType {
			w.known, w.status, w.transition = true, c.Status, c.LastTransitionTime
		}
	}
	w.read = true
	return nil
}

// transitionEvent announces cond replacing the condition last known: w.raised (TuningDegraded,
// SNATPortPressure) when it turned True, w.cleared (TuningRecovered, SNATPortPressureRelieved) when it left
// True, nothing when it became False without having been True.
func (w *conditionWriter) transitionEvent(cond corev1.NodeCondition) *status.Event {
	switch {
	case cond.Status == corev1.ConditionTrue:
		return &status.Event{Reason: w.raised, Message: cond.Message, Warning: true}
	case w.known && w.status == corev1.ConditionTrue:
		return &status.Event{Reason: w.cleared, Message: cond.Message}
	}
	return nil
}
