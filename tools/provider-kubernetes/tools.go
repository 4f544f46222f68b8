//go:build tools

// Package tools pins provider-kubernetes' main package so that `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
