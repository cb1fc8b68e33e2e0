package terratest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

type natVector struct {
	Name     string                     `json:"name"`
	Module   string                     `json:"module"`
	Inputs   map[string]json.RawMessage `json:"inputs"`
	Expected *struct {
		IPs             map[string]int  `json:"ips"`
		ElasticIPs      int             `json:"elastic_ips"`
		Warnings        []string        `json:"warnings"`
		ProfileOutbound json.RawMessage `json:"profile_outbound"`
		MeasuredFrom    json.RawMessage `json:"measured_from"`
	} `json:"expected"`
	Errors []string `json:"errors"`
}

// natModules are the NAT egress modules the vectors cover: the zonal and regional ones (variables, locals, facts and
// their modules/sizing call) and aws-nat-egress, which picks one by mode (its variables: the rules about mode).
var natModules = []string{"aws-nat-egress-zonal", "aws-nat-egress-regional", "aws-nat-egress"}

func natVectors(t testing.TB) []natVector { return tftest.Vectors[natVector](t, "aws_nat_egress.json") }

func natVars(t testing.TB, inputs map[string]json.RawMessage) []byte {
	return tfvars(t, map[string]any{"name": "egress"}, inputs)
}

// Each module's variables.tf, locals.tf, facts.tf.json and sizing.tf (its call of modules/sizing and the quota
// checks), applied with the real terraform binary and no provider over Python's vectors: the Elastic IPs per AZ are
// wirespeed.aws.egress's, the tuning profile's outbound section is wirespeed.aws.snat's (NatEgress.profile_outbound),
// the default-quota warnings are warnings (the apply succeeds) with Python's text, and invalid inputs are refused
// with exactly Python's problems, all in one run per module. The regional module's
// resources need the AWS provider >= 6.24.0, which no mirror here has; these files need no provider at all.
func TestAwsNatEgressMatchesPythonPlanWithoutProviders(t *testing.T) {
	vectors := natVectors(t)
	for _, name := range natModules {
		t.Run(name, func(t *testing.T) {
			var mine []natVector
			for _, v := range vectors {
				if v.Module == name {
					mine = append(mine, v)
				}
			}
			if len(mine) == 0 {
				t.Fatalf("no vectors for %s", name)
			}
			checkNatModule(t, name, mine)
		})
	}
}

func checkNatModule(t *testing.T, name string, vectors []natVector) {
	module := filepath.Join(tftest.Root(), "modules", name)
	harness := ""
	if name != "aws-nat-egress" {
		harness = `output "ips_by_az" { value = local.ips_by_az }` + "\n" + `output "eips" { value = keys(local.eips) }` + "\n" +
			`output "profile_outbound" { value = local.profile_outbound }` + "\n" +
			`output "measured_from" { value = local.measured_from }` + "\n"
	}
	dir := tftest.PureHarness(t, module, harness)
	tf := tftest.New(t, dir)
	tftest.Init(t, tf)
	rulesHit := map[string]bool{}
	ran := 0
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			ran++
			tftest.WriteVars(t, dir, natVars(t, v.Inputs))
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
			var out bytes.Buffer
			if err := tf.ApplyJSON(context.Background(), &out); err != nil {
				t.Fatalf("apply: %v\n%s", err, out.String())
			}
			if name == "aws-nat-egress" {
				return // its own variables accept the inputs; the chosen module sizes them (its vectors above)
			}
			var warnings []string
			for _, w := range warningDetails(t, out.Bytes()) {
				summary, detail, _ := strings.Cut(w, ": ")
				if summary != "Check block assertion failed" {
					t.Errorf("unexpected warning %q", w)
					continue
				}
				warnings = append(warnings, strings.Split(detail, "\n")...)
			}
			sort.Strings(warnings)
			want := append([]string(nil), v.Expected.Warnings...)
			sort.Strings(want)
			if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
				t.Errorf("quota warnings differ from Python's\n got:\n  %s\n want:\n  %s", strings.Join(warnings, "\n  "), strings.Join(want, "\n  "))
			}
			outputs, err := tf.Output(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var ips map[string]int
			if err := json.Unmarshal(outputs["ips_by_az"].Value, &ips); err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(ips)
			wantJSON, _ := json.Marshal(v.Expected.IPs)
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("IPs per AZ: got %s, want %s", gotJSON, wantJSON)
			}
			var eips []string
			if err := json.Unmarshal(outputs["eips"].Value, &eips); err != nil {
				t.Fatal(err)
			}
			if len(eips) != v.Expected.ElasticIPs {
				t.Errorf("%d Elastic IPs planned, want %d: %v", len(eips), v.Expected.ElasticIPs, eips)
			}
			requireSameJSON(t, "profile_outbound", outputs["profile_outbound"].Value, v.Expected.ProfileOutbound)
			measured := json.RawMessage("null") // terraform output leaves a null output out
			if out, ok := outputs["measured_from"]; ok {
				measured = out.Value
			}
			requireSameJSON(t, "measured_from", measured, v.Expected.MeasuredFrom)
		})
	}
	// Every validation rule was seen refusing something.
	if blocks := validationBlocks(t, module); ran == len(vectors) && len(rulesHit) != blocks {
		t.Errorf("the vectors exercise %d of the %d validation rules: %v", len(rulesHit), blocks, rulesHit)
	}
}

// aws-nat-egress is only the choice of mode: each of its module calls passes every variable of the chosen module
// through under its own name, and each of its outputs is the chosen module's output of the same name, for every
// output both modules have (profile_outbound among them). Its resources need a provider >= 6.24.0 to plan, which no
// mirror here has, so the wiring is read from the source with HashiCorp's HCL parser and terraform-config-inspect;
// tests/dispatch.tftest.hcl applies it under the mock provider where one is.
func TestAwsNatEgressPassesTheChosenModuleThrough(t *testing.T) {
	root := filepath.Join(tftest.Root(), "modules")
	load := func(name string) *tfconfig.Module {
		module, diags := tfconfig.LoadModule(filepath.Join(root, name))
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		return module
	}
	dispatcher := load("aws-nat-egress")
	chosen := map[string]*tfconfig.Module{"zonal": load("aws-nat-egress-zonal"), "regional": load("aws-nat-egress-regional")}
	src, err := os.ReadFile(filepath.Join(root, "aws-nat-egress", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	file, diags := hclsyntax.ParseConfig(src, "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	compact := func(r hcl.Range) string { return strings.Join(strings.Fields(string(r.SliceBytes(src))), "") }
	calls := 0
	for _, block := range file.Body.(*hclsyntax.Body).Blocks {
		if block.Type != "module" {
			continue
		}
		calls++
		name := block.Labels[0]
		module, ok := chosen[name]
		if !ok {
			t.Errorf("module %q: not one of the modes", name)
			continue
		}
		if got, want := compact(block.Body.Attributes["count"].Expr.Range()), `var.mode=="`+name+`"?1:0`; got != want {
			t.Errorf("module %s: count = %s, want %s", name, got, want)
		}
		for variable := range module.Variables {
			attr, ok := block.Body.Attributes[variable]
			if !ok {
				t.Errorf("module %s: %s is not passed", name, variable)
			} else if got := compact(attr.Expr.Range()); got != "var."+variable {
				t.Errorf("module %s: %s = %s, want var.%s", name, variable, got, variable)
			}
		}
	}
	if calls != len(chosen) {
		t.Errorf("%d module calls, want one per mode", calls)
	}
	values := map[string]string{} // output name -> its value expression, compacted
	src, err = os.ReadFile(filepath.Join(root, "aws-nat-egress", "outputs.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if file, diags = hclsyntax.ParseConfig(src, "outputs.tf", hcl.InitialPos); diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, block := range file.Body.(*hclsyntax.Body).Blocks {
		if block.Type == "output" {
			values[block.Labels[0]] = compact(block.Body.Attributes["value"].Expr.Range())
		}
	}
	passed := 0
	for name := range chosen["zonal"].Outputs {
		if _, both := chosen["regional"].Outputs[name]; !both {
			continue
		}
		passed++
		want := `var.mode=="zonal"?module.zonal[0].` + name + `:module.regional[0].` + name
		if got, ok := values[name]; !ok {
			t.Errorf("output %s: both modules have it, aws-nat-egress does not pass it through", name)
		} else if got != want {
			t.Errorf("output %s = %s, want %s", name, got, want)
		}
	}
	if _, ok := dispatcher.Outputs["profile_outbound"]; !ok || passed != len(dispatcher.Outputs) {
		t.Errorf("aws-nat-egress's outputs %v, want the %d both modules have, profile_outbound among them", sortedKeys(dispatcher.Outputs), passed)
	}
}
