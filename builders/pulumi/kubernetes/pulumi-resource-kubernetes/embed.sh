#!/bin/sh
# Run by `go generate` (main.go) in this folder: copies the two files the provider's main.go embeds from the module
# the builder requires (its cmd/pulumi-resource-kubernetes), under the names main.go embeds them by. Git-ignored.
set -eu
src=$(go list -m -f '{{.Dir}}' github.com/pulumi/pulumi-kubernetes/provider/v4)/cmd/pulumi-resource-kubernetes
install -m 0644 "$src/schema.json" schema-embed.json
install -m 0644 "$src/terraform-mapping.json" terraform-mapping-embed.json
