//go:build tools

// Package tools pins crane's main package so that `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/google/go-containerregistry/cmd/crane"
