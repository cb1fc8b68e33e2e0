package terratest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

type natVector struct {
	Name     string                     `json:"name"`
	Module   string                     `json:"module"`
	Inputs   map[string]json.RawMessage `json:"inputs"`
	Expected *struct {
		IPs        map[string]int `json:"ips"`
		ElasticIPs int            `json:"elastic_ips"`
		Warnings   []string       `json:"warnings"`
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
// wirespeed.aws.egress's, the default-quota warnings are warnings (the apply succeeds) with Python's text, and
// invalid inputs are refused with exactly Python's problems, all in one run per module. The regional module's
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
		harness = `output "ips_by_az" { value = local.ips_by_az }` + "\n" + `output "eips" { value = keys(local.eips) }` + "\n"
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
		})
	}
	// Every validation rule was seen refusing something.
	if blocks := validationBlocks(t, module); ran == len(vectors) && len(rulesHit) != blocks {
		t.Errorf("the vectors exercise %d of the %d validation rules: %v", len(rulesHit), blocks, rulesHit)
	}
}
