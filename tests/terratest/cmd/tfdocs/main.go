// Command tfdocs writes the inputs and outputs tables of every module's README (between the BEGIN_TF_DOCS and
// END_TF_DOCS markers) from the module's own variables and outputs, read by HashiCorp's terraform-config-inspect
// (the loader terraform-docs uses; terraform-docs itself is refused by the Go module proxy here).
//
//	go run ./cmd/tfdocs          rewrite the tables of modules/*/README.md
//	go run ./cmd/tfdocs -check   exit 1 naming every README whose tables are stale
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wirespeed-io/wirespeed/tests/terratest/tfdocs"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

func main() {
	check := flag.Bool("check", false, "report stale READMEs instead of rewriting them")
	flag.Parse()
	dirs, err := filepath.Glob(filepath.Join(tftest.Root(), "modules", "*"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	stale := 0
	for _, dir := range dirs {
		readme := filepath.Join(dir, "README.md")
		current, err := os.ReadFile(readme)
		if err != nil {
			continue // not a module directory
		}
		want, err := tfdocs.Inject(string(current), dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", readme, err)
			os.Exit(2)
		}
		if want == string(current) {
			continue
		}
		if *check {
			fmt.Fprintf(os.Stderr, "%s: tables are stale (cd tests/terratest && go run ./cmd/tfdocs)\n", readme)
			stale++
			continue
		}
		if err := os.WriteFile(readme, []byte(want), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("wrote", readme)
	}
	if stale > 0 {
		os.Exit(1)
	}
}
