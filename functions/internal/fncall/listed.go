package fncall

import (
	"fmt"
	"strings"
)

// MaxListed bounds how many items (namespaces, workloads) a condition's message names.
const MaxListed = 10

// Listed names up to MaxListed items, and how many more there are.
func Listed(items []string) string {
	if len(items) <= MaxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:MaxListed], ", "), len(items)-MaxListed)
}
