package terratest_test

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

type eksVector struct {
	Name     string                     `json:"name"`
	Inputs   map[string]json.RawMessage `json:"inputs"`
	Expected map[string]json.RawMessage `json:"expected"`
	Errors   []string                   `json:"errors"`
}

// eksRequired are the module's required inputs that no rule reads; the vectors leave them out.
var eksRequired = map[string]any{
	"name":          "edge",
	"cluster_name":  "prod",
	"node_role_arn": "arn:aws:iam::123456789012:role/eks-node",
	"subnet_ids":    []string{"subnet-0123456789abcdef0"},
}

// The module's decisions, as the harness exposes them (the locals main.tf builds the resources from).
const eksHarness = `
output "user_data_key" { value = local.user_data_key }
output "user_data" { value = local.user_data }
output "ami_type" { value = local.ami_type }
output "ring_class" { value = local.ring_class }
output "profile" { value = local.profile_name }
output "instance_types" { value = [for t in local.found_types : t.name] }
output "labels" { value = local.labels }
output "taints" { value = var.taints }
output "scaling" { value = local.scaling }
output "max_unavailable_percentage" { value = var.max_unavailable_percentage }
output "node_group_tags" { value = local.node_group_tags }
output "launch_template_tags" { value = local.launch_template_tags }
`

func eksVectors(t testing.TB) []eksVector { return tftest.Vectors[eksVector](t, "eks_node_group.json") }

func eksVars(t testing.TB, v eksVector) []byte { return tfvars(t, eksRequired, v.Inputs) }

// The module's own variables.tf, locals.tf, catalog.tf.json and user_data.tf.json, applied with the real terraform
// binary and no provider over every vector Python wrote: valid inputs give Python's user data byte for byte (for
// every profile x OS x ENA Express key), AMI type, ring class, profile, labels, taints and sizes; invalid inputs
// are refused with exactly Python's problems, all of them in one run.
func TestEksNodeGroupMatchesPythonPlanWithoutProviders(t *testing.T) {
	module := filepath.Join(tftest.Root(), "modules", "eks-node-group")
	dir := tftest.PureHarness(t, module, eksHarness)
	tf := tftest.New(t, dir)
	tftest.Init(t, tf)
	keys := map[string]bool{}
	rulesHit := map[string]bool{}
	vectors := eksVectors(t)
	ran := 0
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			ran++
			tftest.WriteVars(t, dir, eksVars(t, v))
			if v.Expected == nil {
				got, failed := validationMessages(t, tf)
				for _, rule := range failed {
					rulesHit[rule] = true
				}
				want := append([]string(nil), v.Errors...)
				sort.Strings(want)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("validation messages differ from Python's\n got:\n  %s\n want:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
				}
				return
			}
			outputs, err := tftest.ApplyOutputs(t, tf)
			if err != nil {
				t.Fatal(err)
			}
			var userData, want string
			if err := json.Unmarshal(outputs["user_data"], &userData); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(v.Expected["user_data"], &want); err != nil {
				t.Fatal(err)
			}
			if userData != want {
				t.Errorf("user data differs from Python's render (%d bytes, want %d)", len(userData), len(want))
			}
			for _, name := range []string{"user_data_key", "ami_type", "ring_class", "profile", "instance_types", "labels", "taints", "scaling", "max_unavailable_percentage", "node_group_tags", "launch_template_tags"} {
				requireSameJSON(t, name, outputs[name], v.Expected[name])
			}
			var key string
			_ = json.Unmarshal(outputs["user_data_key"], &key)
			keys[key] = true
		})
	}
	// Every entry of user_data.tf.json was applied and compared: 2 built-in profiles x 2 OSes x ENA Express on/off.
	if ran == len(vectors) && len(keys) != 8 {
		t.Errorf("the vectors cover %d user data keys, want all 8: %v", len(keys), keys)
	}
	// Every validation rule was seen refusing something.
	if blocks := validationBlocks(t, module); ran == len(vectors) && len(rulesHit) != blocks {
		t.Errorf("the vectors exercise %d of the %d validation rules: %v", len(rulesHit), blocks, rulesHit)
	}
}
