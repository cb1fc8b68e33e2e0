//go:build tools

// Package cli pins the Pulumi CLI the engine tests run: scripts/build-pulumi-engine.sh builds
// github.com/pulumi/pulumi/pkg/v3/cmd/pulumi from this module. `go install ...@version` refuses pkg/v3 because its
// go.mod has replace directives, so this module requires it instead and repeats the one replace that is not a
// local path (go.mod). The import keeps `go mod tidy` from dropping what the CLI needs.
package cli

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
