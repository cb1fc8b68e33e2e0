// Package tftest runs the real terraform binary for the module tests, through HashiCorp's terraform-exec.
//
// The issue asks for Terratest; gruntwork-io/terratest cannot be fetched here (the Go module proxy answers 403
// for it), so these helpers do what its terraform module does (init, apply, output, plan) with terraform-exec and
// terraform-json, the libraries Terratest's own maintainers point to for programmatic Terraform.
//
// Providers are never downloaded: every run uses a CLI config whose only installation method is a filesystem
// mirror (WIRESPEED_TF_PLUGIN_MIRROR, default /opt/tf-plugins, the layout `terraform providers mirror` writes).
// A module that needs a provider the mirror lacks is skipped with the provider's name and the command that fills
// the mirror (docs: modules/README.md); under CI=true only the providers tests/allowed-skips.json names may be
// missing, any other fails the test. Provider-free checks (sizing, validation rules, the computed locals of every
// module) always run.
package tftest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// DefaultMirror is where the machine image keeps provider plugins (the real AWS provider on this project's CI
// machines).
const DefaultMirror = "/opt/tf-plugins"

// FillMirror is the documented way to run the provider-backed tests elsewhere (modules/README.md).
const FillMirror = "docs/development.md, 'Skipped tests': builders/tfproviders/build.sh builds azurerm from the Go module proxy; for others, terraform providers mirror <dir> where the registry is reachable, then WIRESPEED_TF_PLUGIN_MIRROR=<dir>"

// Root is the repository root (this file is tests/terratest/tftest/tftest.go).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Modules lists modules/<name> directories, sorted.
func Modules(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(Root(), "modules"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(Root(), "modules", e.Name()))
		}
	}
	return out
}

// Binary is the terraform on PATH; missing, the test fails under CI=true and is skipped (named) elsewhere.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("terraform")
	if err != nil {
		Require(t, "needs the terraform binary on PATH (>= 1.9): the module tests run the real Terraform")
	}
	return path
}

// Require is the suite's one prerequisite rule, as tests/conftest.py's: skip with the reason locally, fail
// under CI=true (CI installs everything it needs, so a missing prerequisite there is a broken CI).
func Require(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, so this is a failure, not a skip", reason)
	}
	t.Skip(reason)
}

// Mirrors are the provider mirror directories in use, existing ones only: WIRESPEED_TF_PLUGIN_MIRROR, the mirror
// builders/tfproviders/build.sh fills, and the machine image's.
func Mirrors() []string {
	candidates := []string{os.Getenv("WIRESPEED_TF_PLUGIN_MIRROR"), filepath.Join(Root(), "test", "tfproviders", "mirror"), DefaultMirror}
	var out []string
	for _, dir := range candidates {
		if info, err := os.Stat(dir); dir != "" && err == nil && info.IsDir() {
			out = append(out, dir)
		}
	}
	return out
}

// HasProvider reports whether a mirror holds hashicorp/<name> for this platform.
func HasProvider(name string) bool {
	for _, mirror := range Mirrors() {
		pattern := filepath.Join(mirror, "registry.terraform.io", "hashicorp", name, "*", runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-"+name+"*")
		if found, _ := filepath.Glob(pattern); len(found) > 0 {
			return true
		}
	}
	return false
}

// NeedProvider skips when no mirror has hashicorp/<name>, naming the provider, the mirrors and how to fill one.
// Under CI=true it fails instead, unless tests/allowed-skips.json names the provider: plugins come from no package
// registry, so CI has exactly the ones its machine image carries (hashicorp/aws in /opt/tf-plugins).
func NeedProvider(t testing.TB, name string) {
	t.Helper()
	if HasProvider(name) {
		return
	}
	address := "hashicorp/" + name
	// The words tests/conftest.py's require_provider uses; scripts/testreport.py matches them to the allow-list.
	reason := fmt.Sprintf("needs the Terraform provider %s in a plugin mirror (looked in %v; provider plugins cannot be downloaded here): %s", address, Mirrors(), FillMirror)
	if !AllowedMissingProvider(t, address) {
		Require(t, reason)
	}
	t.Skip(reason)
}

// AllowedMissingProvider reports whether tests/allowed-skips.json lets a CI run lack the provider at address.
func AllowedMissingProvider(t testing.TB, address string) bool {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(Root(), "tests", "allowed-skips.json"))
	if err != nil {
		t.Fatal(err)
	}
	var allowed struct {
		TerraformProviders map[string]string `json:"terraform_providers"`
	}
	if err := json.Unmarshal(body, &allowed); err != nil {
		t.Fatalf("tests/allowed-skips.json: %v", err)
	}
	_, ok := allowed.TerraformProviders[address]
	return ok
}

// NeedProviderVersion is NeedProvider for a provider at least `minimum` (a release such as 6.24.0), naming what the
// mirrors hold; under CI=true it fails unless tests/allowed-skips.json names "hashicorp/<name> >= <minimum>".
func NeedProviderVersion(t testing.TB, name, minimum string) {
	t.Helper()
	held, ok := heldVersions(name, minimum)
	if ok {
		return
	}
	address := "hashicorp/" + name + " >= " + minimum
	reason := fmt.Sprintf("needs the Terraform provider %s in a plugin mirror (the mirrors %v hold %v; provider plugins cannot be downloaded here): %s", address, Mirrors(), held, FillMirror)
	if !AllowedMissingProvider(t, address) {
		Require(t, reason)
	}
	t.Skip(reason)
}

// heldVersions lists the releases of hashicorp/<name> the mirrors hold for this platform, and whether one is at
// least minimum.
func heldVersions(name, minimum string) ([]string, bool) {
	var held []string
	for _, mirror := range Mirrors() {
		pattern := filepath.Join(mirror, "registry.terraform.io", "hashicorp", name, "*", runtime.GOOS+"_"+runtime.GOARCH)
		found, _ := filepath.Glob(pattern)
		for _, dir := range found {
			version := filepath.Base(filepath.Dir(dir))
			if atLeast(version, minimum) {
				return held, true
			}
			held = append(held, version)
		}
	}
	return held, false
}

// atLeast compares dotted release numbers (6.24.0 >= 6.3.1); anything unparsable is not at least anything.
func atLeast(version, minimum string) bool {
	have, want := strings.Split(version, "."), strings.Split(minimum, ".")
	for i := range want {
		if i >= len(have) {
			return false
		}
		h, errH := strconv.Atoi(have[i])
		w, errW := strconv.Atoi(want[i])
		if errH != nil || errW != nil {
			return false
		}
		if h != w {
			return h > w
		}
	}
	return true
}

// New returns terraform-exec bound to dir with a CLI config that installs providers only from the mirrors.
func New(t testing.TB, dir string) *tfexec.Terraform {
	t.Helper()
	return NewWithEnv(t, dir, nil)
}

// NewWithEnv is New with extra environment variables (AzureIdentity's, a moto endpoint's).
func NewWithEnv(t testing.TB, dir string, extra map[string]string) *tfexec.Terraform {
	t.Helper()
	tf, err := tfexec.NewTerraform(dir, Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "terraformrc")
	var body strings.Builder
	body.WriteString("disable_checkpoint = true\nprovider_installation {\n")
	for _, mirror := range Mirrors() {
		fmt.Fprintf(&body, "  filesystem_mirror {\n    path = %q\n  }\n", mirror)
	}
	body.WriteString("}\n")
	if err := os.WriteFile(config, []byte(body.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TF_CLI_CONFIG_FILE": config, "CHECKPOINT_DISABLE": "1"} // terraform-exec sets TF_IN_AUTOMATION itself
	for k, v := range extra {
		env[k] = v
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if _, set := env[k]; !set && !strings.HasPrefix(k, "TF_") {
			env[k] = v
		}
	}
	if err := tf.SetEnv(env); err != nil {
		t.Fatal(err)
	}
	return tf
}

// Init runs `terraform init` (providers from the mirror only).
func Init(t testing.TB, tf *tfexec.Terraform) {
	t.Helper()
	if err := tf.Init(context.Background(), tfexec.Upgrade(false)); err != nil {
		t.Fatalf("terraform init in %s: %v", tf.WorkingDir(), err)
	}
}

// PureFiles are the files of a module that never reference a provider: its variables (with their validation
// rules), its computed locals, its call of the provider-free modules/sizing (sizing.tf) and the generated facts.
// main.tf, outputs.tf and versions.tf may name resources and required providers, so they are left out.
func PureFiles(t testing.TB, module string) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"variables.tf", "locals*.tf", "sizing.tf", "*.tf.json"} {
		found, err := filepath.Glob(filepath.Join(module, pattern))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, found...)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no provider-free files (variables.tf, locals*.tf, *.tf.json)", module)
	}
	return out
}

// PureHarness copies a module's provider-free files (PureFiles) into a new directory and adds extra as
// harness.tf (outputs exposing the locals under test). Applying it runs the module's own validation rules
// and computations with the real terraform binary, with no provider at all: the files are the module's, not
// copies kept by hand.
func PureHarness(t testing.TB, module, extra string) string {
	t.Helper()
	// modules/<name> inside a new tree whose other modules link to the real ones, so `source = "../sizing"`
	// resolves as it does in the repository.
	tree := filepath.Join(t.TempDir(), "modules")
	dir := filepath.Join(tree, filepath.Base(module))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sibling := range Modules(t) {
		if sibling != module {
			if err := os.Symlink(sibling, filepath.Join(tree, filepath.Base(sibling))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, src := range PureFiles(t, module) {
		body, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "harness.tf"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// WriteVars writes values as a terraform.tfvars.json in dir (picked up by plan and apply).
func WriteVars(t testing.TB, dir string, values []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars.json"), values, 0o644); err != nil {
		t.Fatal(err)
	}
}

// OneLine joins Terraform's wrapped diagnostic text so a message can be matched whole.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
