//go:build tools

// Package tools pins provider-helm's main package so that `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/crossplane-contrib/provider-helm/cmd/provider"
