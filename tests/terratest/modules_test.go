package terratest_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirespeed-io/wirespeed/tests/terratest/tfdocs"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

// Every module is `terraform fmt` clean, its examples included (fmt needs no provider).
func TestEveryModuleIsFormatted(t *testing.T) {
	for _, module := range tftest.Modules(t) {
		t.Run(filepath.Base(module), func(t *testing.T) {
			tf := tftest.New(t, module)
			ok, files, err := tf.FormatCheck(context.Background(), tfexecRecursive())
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Fatalf("terraform fmt would change %v (run terraform fmt -recursive modules)", files)
			}
		})
	}
}

// The README tables are generated from the module's code (cmd/tfdocs); a stale one fails here.
func TestReadmeTablesAreCurrent(t *testing.T) {
	for _, module := range tftest.Modules(t) {
		t.Run(filepath.Base(module), func(t *testing.T) {
			readme := filepath.Join(module, "README.md")
			current, err := os.ReadFile(readme)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tfdocs.Inject(string(current), module)
			if err != nil {
				t.Fatalf("%s: %v", readme, err)
			}
			if want != string(current) {
				t.Fatalf("%s tables are stale: cd tests/terratest && go run ./cmd/tfdocs", readme)
			}
		})
	}
}

// Every module has the files the house style promises a reader, so none is found half-built.
func TestEveryModuleHasItsFiles(t *testing.T) {
	for _, module := range tftest.Modules(t) {
		t.Run(filepath.Base(module), func(t *testing.T) {
			for _, name := range []string{"main.tf", "variables.tf", "outputs.tf", "versions.tf", "README.md"} {
				if _, err := os.Stat(filepath.Join(module, name)); err != nil {
					t.Errorf("missing %s", name)
				}
			}
		})
	}
}

// markdownLink is a Markdown link's target: [text](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link in the modules' READMEs names a file or folder that exists: the AKS example one module's README
// points into another module's folder, and a move would otherwise leave readers a dead link.
func TestReadmeLinksResolve(t *testing.T) {
	readmes, err := filepath.Glob(filepath.Join(tftest.Root(), "modules", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readmes = append(readmes, filepath.Join(tftest.Root(), "modules", "README.md"))
	links := 0
	for _, readme := range readmes {
		body, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		for _, match := range markdownLink.FindAllStringSubmatch(string(body), -1) {
			target, _, _ := strings.Cut(match[1], "#")
			if target == "" || strings.Contains(target, "://") {
				continue
			}
			links++
			if _, err := os.Stat(filepath.Join(filepath.Dir(readme), target)); err != nil {
				rel, _ := filepath.Rel(tftest.Root(), readme)
				t.Errorf("%s links to %s, which does not exist", rel, match[1])
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative links found in the modules' READMEs")
	}
}
