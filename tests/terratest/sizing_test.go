package terratest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

// The shared vectors are written by the Python engine (python -m wirespeed.terraform): inputs with either the
// engine's outputs ("expected") or the field it refuses ("error"). modules/sizing must give the same numbers and
// refuse the same inputs with its own validation rules.
const (
	vectorsGlob    = "tests/vectors/sizing_*.json"
	readmeVectors  = "sizing_readme_examples.json" // the engine's numbers for the README usage, no inputs
	sizingReadme   = "modules/sizing/README.md"
	sizingModule   = "modules/sizing"
	readmeSource   = `source = "./modules/sizing"`
	caseModuleName = "case"
)

type sizingError struct {
	Field    string `json:"field"`
	Variable string `json:"variable"`
}

type sizingCase struct {
	File     string
	Name     string                     `json:"name"`
	Inputs   map[string]json.RawMessage `json:"inputs"`
	Output   string                     `json:"output"` // the module output the case is about; "" for the load balancer ones
	Expected json.RawMessage            `json:"expected"`
	Error    *sizingError               `json:"error"`
}

func readCases(t *testing.T, path string) []sizingCase {
	t.Helper()
	cases := tftest.Vectors[sizingCase](t, filepath.Base(path)) // inputs stay raw: 1.36 reaches Terraform as written
	for i := range cases {
		cases[i].File = filepath.Base(path)
	}
	return cases
}

// sizingVectors returns every valid and every invalid case of the shared vectors, the README's excepted.
func sizingVectors(t *testing.T) (valid, invalid []sizingCase) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tftest.Root(), vectorsGlob))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, file := range files {
		if filepath.Base(file) == readmeVectors {
			continue
		}
		for _, c := range readCases(t, file) {
			if other, dup := seen[c.Name]; dup {
				t.Fatalf("case %q is in both %s and %s: names must be unique, they key the root's for_each", c.Name, other, c.File)
			}
			seen[c.Name] = c.File
			switch {
			case c.Expected != nil && c.Error == nil:
				valid = append(valid, c)
			case c.Error != nil && c.Expected == nil:
				invalid = append(invalid, c)
			default:
				t.Fatalf("%s: case %q needs exactly one of expected and error", c.File, c.Name)
			}
		}
	}
	if len(valid) == 0 || len(invalid) == 0 {
		t.Fatalf("no vectors under %s: run python -m wirespeed.terraform", vectorsGlob)
	}
	return valid, invalid
}

// writeCasesRoot writes a root module instantiating modules/sizing once per case (for_each over cases.json), so
// one init and one apply cover them all. Every input any case uses is passed, null when a case leaves it out.
func writeCasesRoot(t *testing.T, dir string, cases []sizingCase) {
	t.Helper()
	inputs := map[string]map[string]json.RawMessage{}
	names := map[string]bool{}
	for _, c := range cases {
		inputs[c.Name] = c.Inputs
		for name := range c.Inputs {
			names[name] = true
		}
	}
	body, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	var arguments []string
	for name := range names {
		arguments = append(arguments, fmt.Sprintf("  %s = try(each.value.%s, null)", name, name))
	}
	sort.Strings(arguments)
	main := fmt.Sprintf(`locals {
  cases = jsondecode(file("${path.module}/cases.json"))
}

module %q {
  source   = %q
  for_each = local.cases

%s
}

output "results" {
  value = module.%s
}
`, caseModuleName, filepath.Join(tftest.Root(), sizingModule), strings.Join(arguments, "\n"), caseModuleName)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
}

// applyOutputs runs init and apply in dir and returns every root output, numbers kept as written (tftest.Decode).
func applyOutputs(t *testing.T, dir string) map[string]any {
	t.Helper()
	tf := tftest.New(t, dir)
	tftest.Init(t, tf)
	outputs, err := tftest.ApplyOutputs(t, tf)
	if err != nil {
		t.Fatalf("terraform apply in %s: %v", dir, err)
	}
	values := map[string]any{}
	for name, raw := range outputs {
		values[name] = tftest.Decode(t, raw)
	}
	return values
}

func show(v any) string {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(body)
}

// moduleOutputs are the outputs of modules/sizing that are one object per capability (null when its input is
// not given); every other output belongs to the load balancer plan.
var moduleOutputs = []string{"azure_nat_gateway", "aws_nat_gateway", "backlog", "rings"}

// compareCase checks one instance of modules/sizing (all its outputs) against a case's expected values: the
// case's own output object exactly, and for a load balancer case each output the engine gives; the
// capabilities the case did not ask for must be null.
func compareCase(t *testing.T, got any, c sizingCase) {
	t.Helper()
	outputs, ok := got.(map[string]any)
	if !ok {
		t.Fatalf("no module outputs for case %s: %s", c.Name, show(got))
	}
	expected, ok := tftest.Decode(t, c.Expected).(map[string]any)
	if !ok {
		t.Fatalf("%s: expected of %s is not an object", c.File, c.Name)
	}
	if c.Output != "" {
		got, _ := outputs[c.Output].(map[string]any)
		compared := got
		if expected["feasible"] == false {
			// The engine raises InfeasibleError with the numbers that fall short and nothing else: those are compared.
			compared = map[string]any{}
			for key := range expected {
				compared[key] = got[key]
			}
		}
		if !tftest.Equal(compared, expected) {
			t.Errorf("%s (%s): module.%s.%s\n got  %s\n want %s", c.Name, c.File, caseModuleName, c.Output, show(outputs[c.Output]), show(expected))
		}
		if outputs["allocated_outbound_ports"] != nil {
			t.Errorf("%s: allocated_outbound_ports = %s without pools, want null", c.Name, show(outputs["allocated_outbound_ports"]))
		}
	} else {
		for key, want := range expected {
			value, present := outputs[key]
			if !present {
				t.Errorf("%s: modules/sizing has no output %q", c.Name, key)
			} else if !tftest.Equal(value, want) {
				t.Errorf("%s (%s): %s\n got  %s\n want %s", c.Name, c.File, key, show(value), show(want))
			}
		}
	}
	for _, name := range moduleOutputs {
		if name != c.Output && outputs[name] != nil {
			t.Errorf("%s: %s = %s although the case does not ask for it, want null", c.Name, name, show(outputs[name]))
		}
	}
}

// One root holds every valid vector (one init, one apply); each case is then compared on its own.
func TestSizingVectorsGiveTheEnginesNumbers(t *testing.T) {
	t.Parallel()
	valid, _ := sizingVectors(t)
	dir := t.TempDir()
	writeCasesRoot(t, dir, valid)
	results, ok := applyOutputs(t, dir)["results"].(map[string]any)
	if !ok {
		t.Fatal("the root has no results output")
	}
	if len(results) != len(valid) {
		t.Fatalf("%d module instances for %d valid cases", len(results), len(valid))
	}
	for _, c := range valid {
		t.Run(c.Name, func(t *testing.T) { compareCase(t, results[c.Name], c) })
	}
}

// Each invalid vector is planned alone (a refused variable stops the whole plan): the module's own validation
// rule must refuse it, naming the variable and the field as the engine does.
func TestSizingInvalidVectorsAreRefusedByValidation(t *testing.T) {
	t.Parallel()
	_, invalid := sizingVectors(t)
	for _, c := range invalid {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel() // own directory, own terraform process
			dir := t.TempDir()
			writeCasesRoot(t, dir, []sizingCase{c})
			tf := tftest.New(t, dir)
			tftest.Init(t, tf)
			_, err := tf.Plan(context.Background(), tfexec.Refresh(false))
			if err == nil {
				t.Fatalf("%s: terraform plan accepted %s", c.Name, show(c.Inputs))
			}
			output := tftest.OneLine(err.Error()) // Terraform wraps long messages
			field := c.Error.Field[strings.LastIndex(c.Error.Field, ".")+1:]
			for _, want := range []string{
				"Error: Invalid value for variable",
				"checked by the validation rule at .terraform/modules/" + caseModuleName + "/variables.tf",
				"var." + c.Error.Variable,
				field,
				"is not allowed",
			} {
				if !strings.Contains(output, want) {
					t.Errorf("%s: the plan error does not say %q:\n%s", c.Name, want, output)
				}
			}
		})
	}
}

var (
	hclBlock   = regexp.MustCompile("(?s)```hcl\n(.*?)```")
	moduleName = regexp.MustCompile(`(?m)^module "([a-z_]+)" \{`)
)

// The README's usage examples, applied as written (source pointed at the module), give the engine's numbers:
// sizing_readme_examples.json holds them, one case per example module, named as the README names it.
func TestSizingReadmeExamplesApply(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(tftest.Root(), sizingReadme))
	if err != nil {
		t.Fatal(err)
	}
	var examples, names []string
	for _, block := range hclBlock.FindAllStringSubmatch(string(readme), -1) {
		if !strings.Contains(block[1], readmeSource) {
			t.Fatalf("a usage example does not read %s:\n%s", readmeSource, block[1])
		}
		examples = append(examples, strings.ReplaceAll(block[1], readmeSource, fmt.Sprintf("source = %q", filepath.Join(tftest.Root(), sizingModule))))
		for _, m := range moduleName.FindAllStringSubmatch(block[1], -1) {
			names = append(names, m[1])
			examples = append(examples, fmt.Sprintf("output %q {\n  value = module.%s\n}\n", m[1], m[1]))
		}
	}
	cases := readCases(t, filepath.Join(tftest.Root(), "tests", "vectors", readmeVectors))
	var vectorNames []string
	for _, c := range cases {
		vectorNames = append(vectorNames, c.Name)
	}
	sort.Strings(names)
	sort.Strings(vectorNames)
	if !slices.Equal(names, vectorNames) {
		t.Fatalf("README example modules %v, vectors for %v: regenerate with python -m wirespeed.terraform", names, vectorNames)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(strings.Join(examples, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := applyOutputs(t, dir)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { compareCase(t, outputs[c.Name], c) })
	}
}

// The comparison the vector tests rely on: equal rationals match whatever their spelling, anything else does not.
func TestSizingNumbersCompareAsExactRationals(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		same      bool
	}{
		{"1.0", "1", true},
		{"1e3", "1000", true},
		{"408", "409", false},
		{"0.1", "0.1000000000000001", false},
		{`{"rx": 8192.0, "capped": [false]}`, `{"rx": 8192, "capped": [false]}`, true},
		{`{"rx": 8192}`, `{"rx": 8192, "tx": null}`, false},
	} {
		t.Run(tc.got+" vs "+tc.want, func(t *testing.T) {
			if same := tftest.Equal(tftest.Decode(t, []byte(tc.got)), tftest.Decode(t, []byte(tc.want))); same != tc.same {
				t.Errorf("tftest.Equal(%s, %s) = %v, want %v", tc.got, tc.want, same, tc.same)
			}
		})
	}
}

// The rings rules' messages, whole: field, value and allowed range, every problem of one input at once. The
// driver lists are read from the generated facts.tf.json, so a new driver in nic_drivers.json needs no edit here.
func TestSizingRingsValidationMessages(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join(tftest.Root(), sizingModule, "facts.tf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var facts struct {
		Locals struct {
			Facts struct {
				NicDrivers map[string]struct {
					Rx json.RawMessage `json:"rx"`
				} `json:"nic_drivers"`
			} `json:"facts"`
		} `json:"locals"`
	}
	if err := json.Unmarshal(body, &facts); err != nil {
		t.Fatal(err)
	}
	var known, withRings []string
	for name, driver := range facts.Locals.Facts.NicDrivers {
		known = append(known, name)
		if string(driver.Rx) != "null" {
			withRings = append(withRings, name)
		}
	}
	sort.Strings(known)
	sort.Strings(withRings)

	dir := t.TempDir()
	root := fmt.Sprintf(`module "every_problem" {
  source = %[1]q
  rings  = { driver = "ixgbe", line_rate_gbps = 801, stall_ms = 0, packet_bytes = 1500.5, queues = 513 }
}

module "ringless" {
  source = %[1]q
  rings  = { driver = "HV_NETVSC", line_rate_gbps = 25 }
}
`, filepath.Join(tftest.Root(), sizingModule))
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(root), 0o644); err != nil {
		t.Fatal(err)
	}
	tf := tftest.New(t, dir)
	tftest.Init(t, tf)
	_, err = tf.Plan(context.Background(), tfexec.Refresh(false))
	if err == nil {
		t.Fatal("terraform plan accepted invalid rings")
	}
	output := tftest.OneLine(err.Error())
	want := []string{
		`rings.driver: "ixgbe" is not allowed: must be a NIC driver wirespeed knows: ` + strings.Join(known, ", ") + ".",
		`rings.line_rate_gbps: 801 is not allowed: must be between 0.001 and 800.`,
		`rings.stall_ms: 0 is not allowed: must be between 0.001 and 1000.`,
		`rings.packet_bytes: 1500.5 is not allowed: must be a whole number between 64 and 9216.`,
		`rings.queues: 513 is not allowed: must be a whole number between 1 and 512.`,
		`rings.driver: "HV_NETVSC" is not allowed: must be a driver with NIC rings (` + strings.Join(withRings, ", ") + `); hv_netvsc has none: tune its VF.`,
	}
	for _, message := range want {
		if !strings.Contains(output, message) {
			t.Errorf("the plan does not say %q:\n%s", message, output)
		}
	}
	if got := strings.Count(output, "Error: Invalid value for variable"); got != len(want) {
		t.Errorf("%d validation errors, want one per problem (%d):\n%s", got, len(want), output)
	}
}
