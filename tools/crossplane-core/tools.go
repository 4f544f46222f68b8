//go:build tools

// Package tools pins Crossplane core so hack/build-tool.sh builds it from this module's go.sum.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crossplane"
