#!/usr/bin/env bash
# Writes the wirespeed Pulumi package's SDKs (Node.js/TypeScript, Go, Python) from provider/schema.json into
# OUT/nodejs, OUT/go, OUT/python (OUT: sdk, the committed copies; tests/engine/test_sdks.py passes a temporary folder and
# compares). The generators are Pulumi's own (github.com/pulumi/pulumi/pkg/v3 codegen, at the version
# builders/pulumi/versions pins), called by builders/pulumi/sdkgen: `pulumi package gen-sdk` needs language hosts the Go
# module proxy does not serve. Built with -trimpath like the engine (scripts/build-pulumi-engine.sh), so it reuses
# pkg/v3's compiled packages from the Go build cache; cold and warm times are in bench/setup/RESULTS.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/sdk}
case $out in /*) ;; *) out=$PWD/$out ;; esac
dir=$root/builders/pulumi/sdkgen
module=github.com/pulumi/pulumi/pkg/v3
pinned=$(awk -v m="$module" '$1 == m {print $2}' "$root/builders/pulumi/versions")
required=$(cd "$dir" && go list -m -f '{{.Version}}' "$module")
if [ "$required" != "$pinned" ]; then
  echo "error: builders/pulumi/sdkgen/go.mod requires $module $required, builders/pulumi/versions pins $pinned: run" \
    "(cd builders/pulumi/sdkgen && go get $module@$pinned && go mod tidy), commit go.mod and go.sum, then make regen" >&2
  exit 2
fi
bin=$root/build/sdkgen
mkdir -p "$bin"
(cd "$dir" && go build -trimpath -o "$bin/sdkgen" .)
"$bin/sdkgen" -schema "$root/provider/schema.json" -out "$out"
