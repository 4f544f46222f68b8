//go:build tools

// Package tools pins golangci-lint's main package so that `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
