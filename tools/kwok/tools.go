//go:build tools

// Package tools pins kwok's main package so that `go mod tidy` keeps its dependencies.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
