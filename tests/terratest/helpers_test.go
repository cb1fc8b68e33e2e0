package terratest_test

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

func tfexecRecursive() tfexec.FormatOption { return tfexec.Recursive(true) }

// requireSameJSON fails the test unless Terraform's value means what Python's does (tftest.SameJSON).
func requireSameJSON(t testing.TB, what string, got, want json.RawMessage) {
	t.Helper()
	if !tftest.SameJSON(t, got, want) {
		t.Errorf("%s = %s, Python gives %s", what, got, want)
	}
}

// tfvars is a terraform.tfvars.json body: a vector's inputs (as written) over the variables every case needs.
func tfvars(t testing.TB, required map[string]any, inputs map[string]json.RawMessage) []byte {
	t.Helper()
	values := map[string]any{}
	for k, v := range required {
		values[k] = v
	}
	for k, v := range inputs {
		values[k] = v
	}
	body, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	return body
}
