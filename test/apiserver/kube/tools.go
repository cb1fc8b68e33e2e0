//go:build tools

// Package kube pins the kube-apiserver the test fixture builds; build.sh compiles
// k8s.io/kubernetes/cmd/kube-apiserver from this module so its dependency tree stays out of agent/go.mod.
package kube

import _ "k8s.io/kubernetes/cmd/kube-apiserver/app"
