#!/usr/bin/env bash
# Builds the Terraform provider plugins that no package registry serves as binaries but the Go module proxy serves
# as source, into a filesystem mirror the module tests use (tests/terratest/tftest: WIRESPEED_TF_PLUGIN_MIRROR,
# else this mirror, else /opt/tf-plugins). Not part of CI: azurerm is ~2,000 packages, 30 min wall and 13 min CPU
# on 2 loaded cores (bench: modules/README.md), for `terraform validate`, `terraform test` with mock providers and
# plans of the AKS modules; without it those tests are skipped by name.
#
#   builders/tfproviders/build.sh            # -> builders/tfproviders/mirror
#
# azurerm's go.mod has no /v5 suffix, so the proxy serves its releases only as pseudo-versions: azurerm/go.mod pins
# commit fae580791926 (2026-08-24, four days after the 5.2.0 release, CHANGELOG.md), labelled 5.2.0 here.
set -euo pipefail
cd "$(dirname "$0")"
mirror=${1:-$PWD/mirror}
version=5.2.0
platform=$(go env GOOS)_$(go env GOARCH)
dir=$mirror/registry.terraform.io/hashicorp/azurerm/$version/$platform
mkdir -p "$dir"
(cd azurerm && go build -ldflags "-s -w" -o "$dir/terraform-provider-azurerm_v$version" github.com/hashicorp/terraform-provider-azurerm)
echo "$dir/terraform-provider-azurerm_v$version"
