// Command sdkgen writes the wirespeed Pulumi package's SDKs for Node.js (TypeScript), Go and Python from the
// package schema (provider/schema.json), with the code generators of the Pulumi release the tests run
// (github.com/pulumi/pulumi/pkg/v3, pinned in builders/pulumi/versions; this module's go.mod requires the same one).
//
// `pulumi package gen-sdk` would do this, but in v3.276 it hands the schema to each language's host
// (pulumi-language-nodejs, -go, -python), which the Go module proxy does not serve. The generators themselves are
// packages of pkg/v3 (codegen/nodejs, codegen/go, codegen/python), called here as the hosts call them, with what
// `pulumi package add` sets (pkg/cmd/pulumi/packages/packages.go, InstallPackage): the schema bound with dangling
// references allowed, SupportPack on (the Go SDK gets its own go.mod) and local on for Node.js (the package
// compiles itself with tsc when installed, so `npm install <checkout>/sdk/nodejs` works). One setting is ours: the
// Go settings: the import path, so the committed Go SDK is the module github.com/wirespeed-io/wirespeed/sdk/go of
// this repository (without it the generator names example.com/pulumi-wirespeed), and generateExtraInputTypes,
// without which it does not compile (readSpec says why).
//
// Usage: go run -trimpath . -schema ../../../provider/schema.json -out ../../../sdk (scripts/gen-sdks.sh).
// Each language's folder under -out (nodejs, go, python) is replaced whole.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/blang/semver"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// Tool is what every generated source file names as its generator (the header each generator writes).
const Tool = "builders/pulumi/sdkgen (make regen) from provider/schema.json"

// GoImportBasePath is the Go SDK's root package; its module is the folder above it (sdk/go in this repository).
const GoImportBasePath = "github.com/wirespeed-io/wirespeed/sdk/go/wirespeed"

// Languages are the SDKs written, by folder under -out. The dotnet and java generators are not in pkg/v3 (they live
// in pulumi-dotnet and pulumi-java, which the Go module proxy does not serve): sdk/README.md says so.
var Languages = []string{"nodejs", "go", "python"}

func main() {
	schemaPath := flag.String("schema", "", "the package schema (provider/schema.json)")
	out := flag.String("out", "", "the folder to write <language>/ into (sdk)")
	flag.Parse()
	if *schemaPath == "" || *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: sdkgen -schema provider/schema.json -out sdk")
		os.Exit(2)
	}
	if err := run(*schemaPath, *out); err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen:", err)
		os.Exit(1)
	}
}

func run(schemaPath, out string) error {
	spec, err := readSpec(schemaPath)
	if err != nil {
		return err
	}
	for _, language := range Languages {
		files, err := generate(spec, language)
		if err != nil {
			return fmt.Errorf("%s SDK from %s: %w", language, schemaPath, err)
		}
		if err := write(filepath.Join(out, language), files); err != nil {
			return err
		}
	}
	return nil
}

// readSpec reads the schema and adds the Go settings (not in the provider's schema: that is what the running
// plugin serves, which tests/engine/test_provider_engine.py compares).
func readSpec(path string) (schema.PackageSpec, error) {
	var spec schema.PackageSpec
	raw, err := os.ReadFile(path)
	if err != nil {
		return spec, err
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return spec, fmt.Errorf("%s is not a package schema: %w", path, err)
	}
	goInfo := map[string]any{}
	if existing, ok := spec.Language["go"]; ok {
		if err := json.Unmarshal(existing, &goInfo); err != nil {
			return spec, fmt.Errorf("%s: language.go is not an object: %w", path, err)
		}
	}
	goInfo["importBasePath"] = GoImportBasePath
	// Without it the Go SDK does not compile: a component's plain input that is an array of an object type
	// (KarpenterNodePool.taints, NetworkOptimizedCluster.autoProvisionedPools) is typed []TaintArgs,
	// []AutoProvisionedPoolSpecArgs, and the generator writes those Args types only for object types some input
	// or output uses as an Input (codegen/go/gen.go, the mark(input || goInfo.GenerateExtraInputTypes, ...) calls).
	goInfo["generateExtraInputTypes"] = true
	encoded, err := json.Marshal(goInfo)
	if err != nil {
		return spec, err
	}
	if spec.Language == nil {
		spec.Language = map[string]schema.RawMessage{}
	}
	spec.Language["go"] = encoded
	return spec, nil
}

// generate binds the schema afresh (each generator records its language's settings in the bound package) and runs
// one language's generator.
func generate(spec schema.PackageSpec, language string) (map[string][]byte, error) {
	pkg, diags, err := schema.BindSpec(spec, noLoader{}, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	pkg.SupportPack = true
	switch language {
	case "nodejs":
		return nodejs.GeneratePackage(Tool, pkg, nil, nil, true, noLoader{})
	case "go":
		return gogen.GeneratePackage(Tool, pkg, nil)
	case "python":
		return python.GeneratePackage(Tool, pkg, nil, noLoader{})
	}
	return nil, fmt.Errorf("no generator for %q", language)
}

// write replaces dir with exactly files (paths relative to dir), in a stable order.
func write(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// noLoader refuses every package: the wirespeed schema refers to no other package (only its own types and
// pulumi.json#/Any), so a generator asking for one means the schema changed in a way this program must learn.
type noLoader struct{}

var errNoOtherPackages = errors.New("the wirespeed schema refers to no other package; sdkgen loads none")

func (noLoader) LoadPackage(pkg string, _ *semver.Version) (*schema.Package, error) {
	return nil, fmt.Errorf("%s: %w", pkg, errNoOtherPackages)
}

func (noLoader) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, fmt.Errorf("%s: %w", d.Name, errNoOtherPackages)
}

func (noLoader) LoadPackageReference(pkg string, _ *semver.Version) (schema.PackageReference, error) {
	return nil, fmt.Errorf("%s: %w", pkg, errNoOtherPackages)
}

func (noLoader) LoadPackageReferenceV2(
	_ context.Context, d *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return nil, fmt.Errorf("%s: %w", d.Name, errNoOtherPackages)
}
