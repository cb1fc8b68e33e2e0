package terratest_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

// aksVector is one case of tests/vectors/aks_node_pool.json or aks_outbound.json, written by the Python generators
// (components/wirespeed/terraform/aks_*.py) from wirespeed.azure's own validation: inputs as the module's variables,
// and either the values Python derives or the problems it reports (terraform_messages: the same text with the
// module's variable names).
type aksVector struct {
	Name              string                     `json:"name"`
	Inputs            map[string]json.RawMessage `json:"inputs"`
	Expected          map[string]json.RawMessage `json:"expected"`
	Problems          []string                   `json:"problems"`
	TerraformMessages []string                   `json:"terraform_messages"`
}

func aksVectors(t *testing.T, file string) []aksVector {
	t.Helper()
	return tftest.Vectors[aksVector](t, file)
}

// pureModule is a module's provider-free files (tftest.PureHarness) with harness outputs, initialised once; its
// cases run one after another in it (each writes its own terraform.tfvars.json).
type pureModule struct {
	dir string
	tf  *tfexec.Terraform
}

func newPureModule(t *testing.T, name, harness string) *pureModule {
	t.Helper()
	dir := tftest.PureHarness(t, filepath.Join(tftest.Root(), "modules", name), harness)
	tf := tftest.New(t, dir)
	tftest.Init(t, tf)
	return &pureModule{dir: dir, tf: tf}
}

// apply applies vars and returns every harness output as JSON, or the error Terraform reported.
func (m *pureModule) apply(t *testing.T, vars any) (map[string]json.RawMessage, error) {
	t.Helper()
	body, err := json.Marshal(vars)
	if err != nil {
		t.Fatal(err)
	}
	tftest.WriteVars(t, m.dir, body)
	return tftest.ApplyOutputs(t, m.tf)
}

// errorSummaries are Terraform's diagnostics, one line each: the validation rule's or precondition's own message.
var errorHeading = regexp.MustCompile(`Error: `)

// requireRefusal fails unless err holds exactly the messages given, each once, and no other error.
func requireRefusal(t *testing.T, err error, messages []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("applied; want refused with %q", messages)
	}
	text := tftest.OneLine(err.Error())
	for _, message := range messages {
		if n := strings.Count(text, tftest.OneLine(message)); n != 1 {
			t.Errorf("message found %d times, want once: %q\nin: %s", n, message, text)
		}
	}
	if got := len(errorHeading.FindAllStringIndex(text, -1)); got != len(messages) {
		t.Errorf("%d errors reported, want %d (%q)\nin: %s", got, len(messages), messages, text)
	}
}

// providerChecks runs, with the real azurerm provider from the plugin mirror: terraform validate of the module and
// of each of its examples (relative paths), and terraform test (mock_provider "azurerm") in each, which plans the
// resources.
func providerChecks(t *testing.T, name string, examples ...string) {
	tftest.NeedProvider(t, "azurerm")
	module := filepath.Join(tftest.CopyModules(t, name), "modules", name)
	dirs := []string{module}
	for _, example := range examples {
		dirs = append(dirs, filepath.Join(module, example))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			tf := tftest.New(t, dir)
			tftest.Init(t, tf)
			result, err := tf.Validate(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !result.Valid {
				t.Fatalf("terraform validate: %+v", result.Diagnostics)
			}
			var out strings.Builder
			if err := tf.Test(context.Background(), &out); err != nil {
				t.Fatalf("terraform test: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), "Success!") {
				t.Fatalf("terraform test ran nothing:\n%s", out.String())
			}
		})
	}
}
