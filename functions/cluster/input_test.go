package main

import (
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// TestCompositionInputIsValid reads the input the repository's Composition gives this function as the
// function does: strictly into the type its CRD is generated from, then validated.
func TestCompositionInputIsValid(t *testing.T) {
	path := filepath.Join("..", "..", "compositions", "karpentercluster.yaml")
	for step, input := range fntest.CompositionInputs(t, path, "kiso-dev-function-cluster") {
		if _, err := getInput(&fnv1.RunFunctionRequest{Input: input}); err != nil {
			t.Errorf("%s, step %s: %v", path, step, err)
		}
	}
}

// TestInputRefusesAReservedKeyDomain: the policies this function composes read the keys the isolation function
// writes; a key domain of Kubernetes' or Karpenter's would let those keys pass as theirs.
func TestInputRefusesAReservedKeyDomain(t *testing.T) {
	in, err := structpb.NewStruct(map[string]any{"apiVersion": "cluster.fn.kiso.dev/v1alpha1", "kind": "Input", "keyDomain": "node.kubernetes.io"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = getInput(&fnv1.RunFunctionRequest{Input: in})
	if err == nil || !strings.Contains(err.Error(), "input.keyDomain: Forbidden: the kubernetes.io domain is reserved") {
		t.Errorf("getInput accepted or misnamed a reserved key domain: %v", err)
	}
}
