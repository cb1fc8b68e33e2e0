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
