// Package tfdocs renders a module's inputs and outputs as Markdown tables, from the module's own code.
package tfdocs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

// Markers delimit the generated part of a README (terraform-docs' convention, so its users feel at home).
const (
	Begin = "<!-- BEGIN_TF_DOCS -->"
	End   = "<!-- END_TF_DOCS -->"
)

// Tables renders the module in dir: required providers, then inputs in source order (which the module tests hold
// to required first, then optional, each alphabetical: the Azure Verified Modules order), then outputs in source
// order.
func Tables(dir string) (string, error) {
	module, diags := tfconfig.LoadModule(dir)
	if diags.HasErrors() {
		return "", diags.Err()
	}
	var b strings.Builder
	if len(module.RequiredProviders) > 0 || len(module.RequiredCore) > 0 {
		b.WriteString("## Requirements\n\n| Name | Version |\n|---|---|\n")
		for _, c := range module.RequiredCore {
			fmt.Fprintf(&b, "| terraform | `%s` |\n", c)
		}
		names := make([]string, 0, len(module.RequiredProviders))
		for name := range module.RequiredProviders {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := module.RequiredProviders[name]
			fmt.Fprintf(&b, "| %s (`%s`) | `%s` |\n", name, p.Source, strings.Join(p.VersionConstraints, ", "))
		}
		b.WriteString("\n")
	}
	variables := make([]*tfconfig.Variable, 0, len(module.Variables))
	for _, v := range module.Variables {
		variables = append(variables, v)
	}
	sort.Slice(variables, func(i, j int) bool { return before(variables[i].Pos, variables[j].Pos) })
	b.WriteString("## Inputs\n\n| Name | Description | Type | Default |\n|---|---|---|---|\n")
	for _, v := range variables {
		def := "required"
		if !v.Required {
			encoded, err := json.Marshal(v.Default)
			if err != nil {
				return "", err
			}
			def = "`" + cell(string(encoded)) + "`"
		}
		kind := v.Type
		if kind == "" {
			kind = "any"
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", v.Name, cell(v.Description), cell(kind), def)
	}
	outputs := make([]*tfconfig.Output, 0, len(module.Outputs))
	for _, o := range module.Outputs {
		outputs = append(outputs, o)
	}
	sort.Slice(outputs, func(i, j int) bool { return before(outputs[i].Pos, outputs[j].Pos) })
	b.WriteString("\n## Outputs\n\n| Name | Description |\n|---|---|\n")
	for _, o := range outputs {
		fmt.Fprintf(&b, "| `%s` | %s |\n", o.Name, cell(o.Description))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Inject returns readme with the text between the markers replaced by Tables(dir).
func Inject(readme, dir string) (string, error) {
	head, rest, ok := strings.Cut(readme, Begin)
	if !ok {
		return "", fmt.Errorf("no %s marker", Begin)
	}
	_, tail, ok := strings.Cut(rest, End)
	if !ok {
		return "", fmt.Errorf("no %s marker", End)
	}
	tables, err := Tables(dir)
	if err != nil {
		return "", err
	}
	return head + Begin + "\n" + tables + "\n" + End + tail, nil
}

func before(a, b tfconfig.SourcePos) bool {
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	return a.Line < b.Line
}

func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", "\\|")
}
