//go:build tools

// Package yaml pins the YAML language host the engine tests run: scripts/build-pulumi-engine.sh builds
// github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml from this module. It is not ../cli: pulumi-yaml v1.25.0
// is written against pkg/v3 v3.206.0 and does not compile against the CLI's v3.276.0 (plugin.NewContextWithRoot
// and schema.NewPluginLoader changed), so each keeps the dependency set it was released with. The import keeps
// `go mod tidy` from dropping what the host needs.
package yaml

import _ "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml"
