package nodestatus

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// maxAnnotationBytes bounds the tuning-status annotation. Kubernetes allows 256 KiB for all of an
// object's annotations together (k8s.io/apimachinery/pkg/api/validation/objectmeta.go,
// TotalAnnotationSizeLimitB), shared with the kubelet, the CNI and every other controller, and every
// byte of a Node is sent to each Node watcher on every change: the agent takes a small share.
const maxAnnotationBytes = 8 << 10

// maxTextBytes bounds each free-text field once a report has to be shrunk.
const maxTextBytes = 256

// maxErrors bounds Report.Errors once a report has to be shrunk.
const maxErrors = 8

// annotation is the JSON stored in status.AnnotationKey: a status.Report (it decodes as one) holding
// only the selected interfaces, plus counts of what was left out to fit maxAnnotationBytes.
//
// Unselected links (pod veths, bridges, cilium_*) are never included: they carry no tuning values and
// change with every pod, so including them would rewrite the Node object on pod churn.
type annotation struct {
	status.Report
	OmittedInterfaces int `json:"omittedInterfaces,omitempty"`
	OmittedErrors     int `json:"omittedErrors,omitempty"`
}

// annotationWriter keeps the annotation on the Node equal to the latest report: it writes a new content
// at once and an unchanged one (only the report time differs) once per heartbeatPeriod.
type annotationWriter struct {
	key string    // contentKey of the last write
	at  time.Time // when it was written
}

func (w *annotationWriter) sync(ctx context.Context, node ownNode, now time.Time, p *pendingReport) error {
	if p.key == w.key && now.Sub(w.at) < heartbeatPeriod {
		return nil
	}
	patch := map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{status.AnnotationKey: string(p.annotation)}},
	}
	if err := node.patch(ctx, types.MergePatchType, patch); err != nil {
		return err
	}
	w.key, w.at = p.key, now
	return nil
}

// encodeAnnotation returns the annotation value for r, at most maxAnnotationBytes long.
func encodeAnnotation(r status.Report) []byte {
	a := annotation{Report: r}
	a.Interfaces = make([]status.Interface, 0, len(r.Interfaces))
	for _, i := range r.Interfaces {
		if i.Selected {
			a.Interfaces = append(a.Interfaces, i)
		}
	}
	if b := marshal(a); len(b) <= maxAnnotationBytes {
		return b
	}

	// Too big: shorten the free text first, since the numbers are what the annotation is for.
	a.Reason = truncate(a.Reason, maxTextBytes)
	if len(a.Errors) > maxErrors {
		a.OmittedErrors = len(a.Errors) - maxErrors
		a.Errors = a.Errors[:maxErrors]
	}
	errs := make([]string, len(a.Errors))
	for n, e := range a.Errors {
		errs[n] = truncate(e, maxTextBytes)
	}
	a.Errors = errs
	for n := range a.Interfaces {
		a.Interfaces[n].Reason = truncate(a.Interfaces[n].Reason, maxTextBytes)
		a.Interfaces[n].Error = truncate(a.Interfaces[n].Error, maxTextBytes)
	}
	// Then keep as many interfaces as fit, dropping from the end (a binary search, so a node with
	// hundreds of selected links costs a few encodings, not hundreds).
	all := a.Interfaces
	fits := func(n int) ([]byte, bool) {
		a.Interfaces, a.OmittedInterfaces = all[:n], len(all)-n
		b := marshal(a)
		return b, len(b) <= maxAnnotationBytes
	}
	if b, ok := fits(len(all)); ok {
		return b
	}
	if _, ok := fits(0); ok {
		lo, hi := 0, len(all) // fits(lo) holds, fits(hi) does not
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if _, ok := fits(mid); ok {
				lo = mid
			} else {
				hi = mid
			}
		}
		b, _ := fits(lo)
		return b
	}
	// Only a profile with an absurd number of sysctls gets here: keep the summary.
	a.OmittedErrors += len(a.Errors)
	a.Errors = nil
	a.Sysctls = nil
	a.Profile = truncate(a.Profile, maxTextBytes)
	return marshal(a)
}

// contentKey is the annotation without the report time and the SNAT numbers: two reports with the same
// key say the same thing, so the Node need not be rewritten until the heartbeat is due. The SNAT port counts
// change every second; only whether there is pressure rewrites the Node at once.
func contentKey(r status.Report) string {
	r.Time = time.Time{}
	if r.SNAT != nil {
		r.SNAT = &status.SNAT{Pressure: r.SNAT.Pressure, Capacity: r.SNAT.Capacity}
	}
	return string(encodeAnnotation(r))
}

func marshal(a annotation) []byte {
	b, err := json.Marshal(a)
	if err != nil {
		// A Report holds only strings, numbers and a time: json.Marshal cannot fail on it.
		panic("nodestatus: marshal report: " + err.Error())
	}
	return b
}

// truncate shortens s to at most n bytes without splitting a UTF-8 sequence, marking the cut.
func truncate(s string, n int) string {
	const mark = "..."
	if len(s) <= n {
		return s
	}
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
