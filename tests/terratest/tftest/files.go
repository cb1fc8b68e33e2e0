package tftest

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// CopyModules builds <tmp>/modules with copies of the named modules (examples and tests included) and links to
// every other module, so `source = "../sizing"` and the examples' `source = "../.."` resolve as in the repository
// while init, validate, test and apply write nothing into it. It returns <tmp>.
func CopyModules(t testing.TB, names ...string) string {
	t.Helper()
	root := t.TempDir()
	tree := filepath.Join(root, "modules")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	copied := map[string]bool{}
	for _, name := range names {
		copied[name] = true
		src := filepath.Join(Root(), "modules", name)
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			if d.IsDir() && d.Name() == ".terraform" {
				return filepath.SkipDir
			}
			dst := filepath.Join(tree, name, rel)
			if d.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			if strings.HasPrefix(d.Name(), "terraform.tfstate") || d.Name() == ".terraform.lock.hcl" {
				return nil // left by someone's local run: never part of what is tested
			}
			body, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, body, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, module := range Modules(t) {
		if !copied[filepath.Base(module)] {
			if err := os.Symlink(module, filepath.Join(tree, filepath.Base(module))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// Vectors reads the "cases" of tests/vectors/<file>, written by `python -m wirespeed.terraform` from the Python
// engine; inputs kept as json.RawMessage reach Terraform exactly as written (1.36, not 1.3600000000000001).
func Vectors[T any](t testing.TB, file string) []T {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(Root(), "tests", "vectors", file))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []T `json:"cases"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("tests/vectors/%s: %v", file, err)
	}
	if len(doc.Cases) == 0 {
		t.Fatalf("tests/vectors/%s has no cases: run python -m wirespeed.terraform", file)
	}
	return doc.Cases
}

// ApplyOutputs applies the working directory and returns every root output as JSON, or Terraform's error.
func ApplyOutputs(t testing.TB, tf *tfexec.Terraform) (map[string]json.RawMessage, error) {
	t.Helper()
	ctx := context.Background()
	if err := tf.Apply(ctx); err != nil {
		return nil, err
	}
	outputs, err := tf.Output(ctx)
	if err != nil {
		t.Fatalf("terraform output in %s: %v", tf.WorkingDir(), err)
	}
	values := map[string]json.RawMessage{}
	for name, meta := range outputs {
		values[name] = meta.Value
	}
	return values, nil
}

// SameJSON compares two JSON documents by meaning (Equal); an empty document counts as null (terraform output
// leaves nulls out).
func SameJSON(t testing.TB, got, want []byte) bool {
	t.Helper()
	return Equal(Decode(t, got), Decode(t, want))
}

// Decode decodes JSON keeping every number as written (json.Number): 408 stays 408, never a float64 that could
// hide 408.00000000000006.
func Decode(t testing.TB, raw []byte) any {
	t.Helper()
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var v any
	if err := decoder.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

// Equal compares decoded JSON by meaning: key order and number spelling aside (1.0 equals 1, since Python writes
// some whole values as floats), every number compared as its exact rational value, so 408 and 409, or 0.1 and
// 0.1000000000000001, stay different.
func Equal(got, want any) bool { return reflect.DeepEqual(exact(got), exact(want)) }

func exact(v any) any {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return "unparsable number " + string(x)
		}
		return "number " + r.RatString()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = exact(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = exact(e)
		}
		return out
	default:
		return x
	}
}
