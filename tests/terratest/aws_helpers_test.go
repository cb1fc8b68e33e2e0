package terratest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// diagnostic is one line of `terraform plan -json` / `apply -json` of type "diagnostic".
type diagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
}

// jsonDiagnostics reads the diagnostics of a -json run.
func jsonDiagnostics(t testing.TB, out []byte) []diagnostic {
	t.Helper()
	var found []diagnostic
	scanner := bufio.NewScanner(bytes.NewReader(out))
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var line struct {
			Type       string     `json:"type"`
			Diagnostic diagnostic `json:"diagnostic"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &line); err != nil {
			t.Fatalf("terraform -json line %q: %v", scanner.Text(), err)
		}
		if line.Type == "diagnostic" {
			found = append(found, line.Diagnostic)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return found
}

// validationMessages plans and returns every validation message Terraform reports, one per problem (a rule that
// lists several offending elements gives one line each), sorted, and where each failing rule is
// ("variables.tf:51,3-13"). Other errors fail the test.
func validationMessages(t testing.TB, tf *tfexec.Terraform) ([]string, []string) {
	t.Helper()
	var out bytes.Buffer
	_, err := tf.PlanJSON(context.Background(), &out)
	var messages, rules []string
	for _, d := range jsonDiagnostics(t, out.Bytes()) {
		if d.Severity != "error" {
			continue
		}
		if d.Summary != "Invalid value for variable" {
			t.Fatalf("unexpected error %q: %s", d.Summary, d.Detail)
		}
		text, rule, _ := strings.Cut(d.Detail, "\n\nThis was checked by the validation rule at ")
		messages = append(messages, strings.Split(text, "\n")...)
		rules = append(rules, strings.TrimSuffix(rule, "."))
	}
	if err == nil && len(messages) > 0 {
		t.Fatalf("plan succeeded but reported %v", messages)
	}
	sort.Strings(messages)
	return messages, rules
}

// validationBlocks counts the validation blocks of a module's variables.tf.
func validationBlocks(t testing.TB, module string) int {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(module, "variables.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(body), "\n  validation {")
}

// checkWarnings returns the detail of every warning of a -json run (check blocks report as warnings).
func warningDetails(t testing.TB, out []byte) []string {
	t.Helper()
	var found []string
	for _, d := range jsonDiagnostics(t, out) {
		if d.Severity == "warning" {
			found = append(found, d.Summary+": "+d.Detail)
		}
	}
	return found
}

func tfexecOut(path string) tfexec.PlanOption { return tfexec.Out(path) }

// strconvQuote is a Go-quoted string, which is also a valid HCL string literal for JSON text.
func strconvQuote(s string) string { return strconv.Quote(s) }
