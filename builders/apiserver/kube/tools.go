//go:build tools

// Package kube pins what the test fixture builds from k8s.io/kubernetes: build.sh compiles
// k8s.io/kubernetes/cmd/kube-apiserver and cmd/kubectl from this module (and ./cmd/vap-typecheck, this module's
// own), so their dependency tree stays out of agent/go.mod. The imports keep `go mod tidy` from dropping what
// those two commands need.
package kube

import (
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
)
