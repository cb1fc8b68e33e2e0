#!/usr/bin/env bash
# Builds the kube-apiserver (and kubectl, and vap-typecheck) the test fixture runs (tests/apiserver.py) from k8s.io/kubernetes at
# the version kube/go.mod pins, into builders/apiserver/bin/. The first build compiles Kubernetes (minutes and ~2.4 GB
# of memory on 2 cores: bench/apiserver/RESULTS.md); the module and build caches keep it, so a rebuild takes
# seconds. kube/ is its own module so Kubernetes' dependency tree stays out of agent/go.mod.
set -euo pipefail
cd "$(dirname "$0")"
version=$(sed -n 's#^[[:space:]]*k8s.io/kubernetes \(v[0-9.]*\)$#\1#p' kube/go.mod)
major=${version#v}; major=${major%%.*}
minor=${version#v"$major".}; minor=${minor%%.*}
# Without these /version reports v0.0.0-master (k8s.io/component-base/version/base.go) and clients that
# compare versions (kubectl's skew warning) misjudge the server.
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
mkdir -p bin
cd kube
# kubectl of the same release too: the tests drive the API server with it, and a fresh machine has none.
for cmd in kube-apiserver kubectl; do
  go build -ldflags "$ldflags" -o "../bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  echo "builders/apiserver/bin/$cmd $version"
done
# The ValidatingAdmissionPolicy checks kube-controller-manager would run (status.typeChecking) and an older API
# server's create validation, from the same release's code (kube/cmd/vap-typecheck); it reuses the packages above.
go build -ldflags "-s -w" -o ../bin/vap-typecheck ./cmd/vap-typecheck
echo "builders/apiserver/bin/vap-typecheck $version"
