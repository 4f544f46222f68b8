package main

import (
	"path/filepath"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// TestCompositionInputIsValid reads the input the repository's Composition gives this function as the
// function does: strictly into the type its CRD is generated from, then validated.
func TestCompositionInputIsValid(t *testing.T) {
	path := filepath.Join("..", "..", "compositions", "karpenterisolation.yaml")
	for step, input := range fntest.CompositionInputs(t, path, "kiso-dev-function-isolation") {
		if _, err := getInput(&fnv1.RunFunctionRequest{Input: input}); err != nil {
			t.Errorf("%s, step %s: %v", path, step, err)
		}
	}
}
