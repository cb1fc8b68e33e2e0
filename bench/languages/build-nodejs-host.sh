#!/usr/bin/env bash
# Builds Pulumi's Node.js language host (sdk/nodejs/cmd/pulumi-language-nodejs) from a clone of pulumi/pulumi, for
# the one TypeScript run under the engine that bench/languages/RESULTS.md records. Not part of `make engine` or CI:
# the Go module proxy does not serve this module (it is a nested module of pulumi/pulumi, not in sdk/v3's zip), so
# its source comes from a git clone (here: the `fetch` of github:pulumi/pulumi), which CI cannot count on.
#
# The clone's source is built against sdk/v3 and pkg/v3 at the CLI's pin (builders/pulumi/versions) from the module
# proxy, not against its own sibling folders, so the host speaks the protocol of the CLI the tests build. The one
# interface method that pin has and that source lacks (ResourceMonitorServer.ExistsResource) is forwarded the way
# its other methods are.
#
# Usage: bench/languages/build-nodejs-host.sh PULUMI_GIT_DIR COMMIT OUT_DIR
set -euo pipefail
git_dir=$1 commit=$2 out=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
pin=$(awk '$1 == "github.com/pulumi/pulumi/pkg/v3" {print $2}' "$root/builders/pulumi/versions")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git --git-dir "$git_dir" archive "$commit" sdk/nodejs/cmd/pulumi-language-nodejs | tar -x -C "$work"
cd "$work/sdk/nodejs/cmd/pulumi-language-nodejs"
rm -rf testdata ./*_test.go
sed -i '/pulumi\/pkg\/v3 =>/d; /pulumi\/sdk\/v3 =>/d' go.mod
go mod edit -require="github.com/pulumi/pulumi/pkg/v3@$pin" -require="github.com/pulumi/pulumi/sdk/v3@$pin"
if ! grep -q 'ExistsResource' proxy.go; then
  cat >> proxy.go <<'GO'

func (p *monitorProxy) ExistsResource(
	ctx context.Context, req *pulumirpc.ExistsResourceRequest,
) (*pulumirpc.ExistsResourceResponse, error) {
	return p.target.ExistsResource(ctx, req)
}
GO
fi
go mod tidy
mkdir -p "$out"
go build -trimpath -ldflags "-s -w" -o "$out/pulumi-language-nodejs" .
echo "$out/pulumi-language-nodejs from pulumi/pulumi $commit against sdk/v3 and pkg/v3 $pin"
