//go:build tools

// Package tools pins Karpenter's KWOK provider main package so that `go mod tidy` keeps its dependencies.
package tools

import _ "sigs.k8s.io/karpenter/kwok"
