package nodestatus

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// snatConditionType is the condition the agent's SNAT accounting sets (issue 19's contract: SNATPortPressure).
// The policy allows it already, so shipping that accounting needs no policy change.
const snatConditionType = "SNATPortPressure"

// ownConditionTypes are the Node conditions the agent owns: the only ones own-node-policy.yaml lets it write.
var ownConditionTypes = []string{status.ConditionType, snatConditionType}

func ownNodePolicy(t *testing.T) (admissionregistrationv1.ValidatingAdmissionPolicy, admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	docs := yamlDocuments(t, "own-node-policy.yaml")
	if len(docs) != 2 {
		t.Fatalf("own-node-policy.yaml has %d documents, want the policy and its binding", len(docs))
	}
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict(docs[0], &policy); err != nil || policy.Kind != "ValidatingAdmissionPolicy" {
		t.Fatalf("own-node-policy.yaml, first document: kind %q, %v", policy.Kind, err)
	}
	if err := yaml.UnmarshalStrict(docs[1], &binding); err != nil || binding.Kind != "ValidatingAdmissionPolicyBinding" {
		t.Fatalf("own-node-policy.yaml, second document: kind %q, %v", binding.Kind, err)
	}
	return policy, binding
}

func policyVariable(t *testing.T, policy admissionregistrationv1.ValidatingAdmissionPolicy, name string) string {
	t.Helper()
	for _, v := range policy.Spec.Variables {
		if v.Name == name {
			return v.Expression
		}
	}
	t.Fatalf("own-node-policy.yaml has no variable %q", name)
	return ""
}

// celList is a CEL list literal of strings, as the policy writes it: ["a", "b"].
func celList(items []string) string {
	return `["` + strings.Join(items, `", "`) + `"]`
}

// The policy allows exactly what the Reporter writes: its annotation and its condition types.
func TestOwnNodePolicyNamesTheAgentsAnnotationAndConditions(t *testing.T) {
	policy, _ := ownNodePolicy(t)
	if got, want := policyVariable(t, policy, "annotation"), `"`+status.AnnotationKey+`"`; got != want {
		t.Errorf("variable annotation = %s, want %s", got, want)
	}
	if got, want := policyVariable(t, policy, "conditionTypes"), celList(ownConditionTypes); got != want {
		t.Errorf("variable conditionTypes = %s, want %s", got, want)
	}
}

// Every write the Reporter makes to its Node is one the policy allows: through nodes only the annotation,
// through nodes/status only conditions of its own types.
func TestTheReporterWritesOnlyWhatTheOwnNodePolicyAllows(t *testing.T) {
	h := newHarness(t, kubeletNode())
	h.start()
	h.r.Report(context.Background(), degraded())
	h.mustSucceed()
	h.clk.Step(heartbeatPeriod)
	h.r.Report(context.Background(), applied())
	h.mustSucceed()

	var annotations, conditions int
	for _, a := range h.cs.Actions() {
		patch, ok := a.(k8stesting.PatchAction)
		if !ok || a.GetResource().Resource != "nodes" {
			continue
		}
		var body map[string]map[string]json.RawMessage
		if err := json.Unmarshal(patch.GetPatch(), &body); err != nil {
			t.Fatalf("patch %s: %v", patch.GetPatch(), err)
		}
		switch a.GetSubresource() {
		case "":
			var meta metav1.ObjectMeta
			if len(body) != 1 || len(body["metadata"]) != 1 || json.Unmarshal(body["metadata"]["annotations"], &meta.Annotations) != nil {
				t.Fatalf("nodes patch %s writes more than metadata.annotations", patch.GetPatch())
			}
			for key := range meta.Annotations {
				if key != status.AnnotationKey {
					t.Errorf("nodes patch writes the annotation %q, which the policy refuses", key)
				}
			}
			annotations++
		case "status":
			var written []struct {
				Type string `json:"type"`
			}
			if len(body) != 1 || len(body["status"]) != 1 || json.Unmarshal(body["status"]["conditions"], &written) != nil {
				t.Fatalf("nodes/status patch %s writes more than status.conditions", patch.GetPatch())
			}
			for _, c := range written {
				if !slices.Contains(ownConditionTypes, c.Type) {
					t.Errorf("nodes/status patch writes the condition %q, which the policy refuses", c.Type)
				}
			}
			conditions++
		default:
			t.Errorf("patch of nodes/%s, which the policy does not cover", a.GetSubresource())
		}
	}
	if annotations == 0 || conditions == 0 {
		t.Fatalf("%d annotation and %d condition patches: the run should make both", annotations, conditions)
	}
}

// The policy covers every Node write rbac.yaml grants, refuses what it cannot evaluate, and is bound to deny.
func TestOwnNodePolicyCoversWhatTheClusterRoleGrants(t *testing.T) {
	policy, binding := ownNodePolicy(t)
	spec := policy.Spec
	if spec.FailurePolicy == nil || *spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v, want Fail: an expression that cannot be evaluated must refuse", spec.FailurePolicy)
	}
	var covered []string
	for _, rule := range spec.MatchConstraints.ResourceRules {
		if !slices.Equal(rule.APIGroups, []string{""}) || !slices.Equal(rule.Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Update}) {
			t.Errorf("rule %+v: want UPDATE in the core group (a PATCH is admitted as an UPDATE)", rule.RuleWithOperations)
		}
		covered = append(covered, rule.Resources...)
	}
	var granted []string
	for p := range grantedByRBAC(t).cluster {
		resource, verb, _ := strings.Cut(p, " ")
		// get, list and watch are reads: admission never sees them, so the policy need not (and cannot) match them.
		if !slices.Contains([]string{"get", "list", "watch"}, verb) && !slices.Contains(granted, resource) {
			granted = append(granted, resource)
		}
	}
	slices.Sort(covered)
	slices.Sort(granted)
	if !slices.Equal(covered, granted) {
		t.Errorf("the policy matches %v, the ClusterRole lets the agent write %v", covered, granted)
	}
	if binding.Spec.PolicyName != policy.Name || binding.Name != policy.Name {
		t.Errorf("binding %q binds %q, want the policy %q under its own name", binding.Name, binding.Spec.PolicyName, policy.Name)
	}
	if !slices.Equal(binding.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("validationActions %v, want [Deny]", binding.Spec.ValidationActions)
	}
}
