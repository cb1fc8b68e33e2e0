// Command pulumi-resource-kubernetes is the kubernetes provider the engine tests run
// (github.com/pulumi/pulumi-kubernetes/provider/v4, pinned in builders/pulumi/versions). The provider's own
// cmd/pulumi-resource-kubernetes cannot be built from the module proxy's zip: its main.go embeds
// schema-embed.json and terraform-mapping-embed.json, which its release build generates and the zip lacks (it has
// schema.json and terraform-mapping.json beside main.go). `go generate` (scripts/build-pulumi-engine.sh runs it
// before the build) copies those two here under the embedded names (git-ignored), and this serves them as the
// provider's main.go does. Its generate.go also writes the release's version into the schema copy; the engine does
// not need it (the provider reports its version itself, linked in with -X), so the copy is the file as it is.
package main

//go:generate sh embed.sh

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
