package terratest_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

// maxDescriptionLine is the longest line a variable's or output's description may take in the source; a longer text
// is a heredoc (description = <<-EOT), wrapped, as the Azure Verified Modules write theirs.
const maxDescriptionLine = 200

// tfVariable is one variable block as written: whether Terraform requires it (no default), and where it stands.
type tfVariable struct {
	name     string
	required bool
	at       string
}

// tfDir is one directory of Terraform files below modules/ (a module, an example), with its variables in source
// order: files by name (filepath.WalkDir walks in lexical order), then by line, as the README tables list them.
type tfDir struct {
	rel       string
	variables []tfVariable
}

// parseModules parses every *.tf file below modules/ (the modules, their examples) with HashiCorp's HCL parser and
// calls each with the file's path relative to the repository, its lines and its body.
func parseModules(t *testing.T, each func(rel string, lines []string, body *hclsyntax.Body)) {
	t.Helper()
	root := filepath.Join(tftest.Root(), "modules")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(path) != ".tf" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tftest.Root(), path)
		file, diags := hclsyntax.ParseConfig(src, rel, hcl.InitialPos)
		if diags.HasErrors() {
			t.Errorf("%s: %s", rel, diags.Error())
			return nil
		}
		each(rel, strings.Split(string(src), "\n"), file.Body.(*hclsyntax.Body))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func variableDirs(t *testing.T) []tfDir {
	t.Helper()
	byDir := map[string]*tfDir{}
	parseModules(t, func(rel string, _ []string, body *hclsyntax.Body) {
		dir := filepath.Dir(rel)
		if byDir[dir] == nil {
			byDir[dir] = &tfDir{rel: dir}
		}
		for _, block := range body.Blocks {
			if block.Type == "variable" && len(block.Labels) == 1 {
				_, hasDefault := block.Body.Attributes["default"]
				at := fmt.Sprintf("%s:%d", rel, block.DefRange().Start.Line)
				byDir[dir].variables = append(byDir[dir].variables, tfVariable{block.Labels[0], !hasDefault, at})
			}
		}
	})
	var dirs []tfDir
	for _, d := range byDir {
		dirs = append(dirs, *d)
	}
	slices.SortFunc(dirs, func(a, b tfDir) int { return strings.Compare(a.rel, b.rel) })
	return dirs
}

// avmOrder is the order the Azure Verified Modules give variables: required first, then optional, each by name.
func avmOrder(variables []tfVariable) []tfVariable {
	want := slices.Clone(variables)
	slices.SortStableFunc(want, func(a, b tfVariable) int {
		if a.required != b.required {
			if a.required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return want
}

func names(variables []tfVariable) []string {
	out := make([]string, len(variables))
	for i, v := range variables {
		out[i] = v.name
		if v.required {
			out[i] += " (required)"
		}
	}
	return out
}

// Every module and example declares its variables required first, then optional, each alphabetically, so a reader
// (and the README's inputs table, which follows the source) finds an input where the Azure Verified Modules put it.
func TestVariablesAreRequiredFirstThenAlphabetical(t *testing.T) {
	dirs := variableDirs(t)
	checked := 0
	for _, dir := range dirs {
		if len(dir.variables) == 0 {
			continue
		}
		checked++
		got, want := names(dir.variables), names(avmOrder(dir.variables))
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: %s stands where %s belongs (%s); want the order %s", dir.rel, got[i], want[i], dir.variables[i].at, strings.Join(want, ", "))
				break
			}
		}
	}
	if checked < len(tftest.Modules(t)) {
		t.Fatalf("found variables in %d directories, fewer than the %d modules", checked, len(tftest.Modules(t)))
	}
}

// The ordering rule itself: required before optional whatever their names, each group by name.
func TestAvmOrder(t *testing.T) {
	in := []tfVariable{{"zones", false, ""}, {"vm_size", true, ""}, {"labels", false, ""}, {"name", true, ""}}
	want := []string{"name (required)", "vm_size (required)", "labels", "zones"}
	if got := names(avmOrder(in)); !slices.Equal(got, want) {
		t.Fatalf("avmOrder = %q, want %q", got, want)
	}
}

// No variable or output description takes a source line over maxDescriptionLine characters: longer ones are heredocs
// wrapped to the file's width, which a review reads without scrolling sideways.
func TestDescriptionsFitTheirLines(t *testing.T) {
	seen := 0
	parseModules(t, func(rel string, lines []string, body *hclsyntax.Body) {
		for _, block := range body.Blocks {
			if block.Type != "variable" && block.Type != "output" {
				continue
			}
			description, ok := block.Body.Attributes["description"]
			if !ok {
				continue
			}
			seen++
			span := description.SrcRange
			for n := span.Start.Line; n <= span.End.Line; n++ {
				if width := len([]rune(lines[n-1])); width > maxDescriptionLine {
					t.Errorf("%s:%d: %s %q: a description line of %d characters, over %d: write it as a heredoc (description = <<-EOT), wrapped",
						rel, n, block.Type, block.Labels[0], width, maxDescriptionLine)
				}
			}
		}
	})
	if seen == 0 {
		t.Fatal("no descriptions found below modules/")
	}
}
