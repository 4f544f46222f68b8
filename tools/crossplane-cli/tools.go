//go:build tools

// Package tools pins the Crossplane CLI so hack/build-tool.sh builds it from this module's go.sum.
package tools

import _ "github.com/crossplane/cli/v2/cmd/crossplane"
