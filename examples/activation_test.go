package examples_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// managedGroup reports whether a group's kinds are managed resources of a provider kiso composes with, whose
// definitions a ManagedResourceActivationPolicy activates.
func managedGroup(group string) bool {
	return strings.HasSuffix(group, ".aws.upbound.io") || group == "kubernetes.crossplane.io" || group == "helm.crossplane.io"
}

// TestActivationPolicyActivatesExactlyWhatKisoComposes: the install's ManagedResourceActivationPolicy names every
// managed resource kind an example composes, and nothing else (activating more costs the API server a CRD each).
func TestActivationPolicyActivatesExactlyWhatKisoComposes(t *testing.T) {
	policies := readObjects(t, filepath.Join(root, "examples", "install", "activation-policy.yaml"))
	if len(policies) != 1 || policies[0]["kind"] != "ManagedResourceActivationPolicy" {
		t.Fatalf("examples/install/activation-policy.yaml holds %d objects, want one ManagedResourceActivationPolicy", len(policies))
	}
	spec, _ := policies[0]["spec"].(map[string]any)
	activated := stringList(spec["activate"])

	composed := map[string]string{}
	goldens, _ := filepath.Glob(filepath.Join(root, "examples", "*", "*", "expected.yaml"))
	for _, f := range goldens {
		for _, obj := range readObjects(t, f) {
			apiVersion, _ := obj["apiVersion"].(string)
			kind, _ := obj["kind"].(string)
			gv, err := schema.ParseGroupVersion(apiVersion)
			if err != nil || !isComposed(obj) || !managedGroup(gv.Group) {
				continue
			}
			plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
			composed[plural.Resource+"."+plural.Group] = f
		}
	}
	for mrd, example := range composed {
		if !slices.Contains(activated, mrd) {
			t.Errorf("%s is composed (%s) but not activated", mrd, example)
		}
	}
	for _, mrd := range activated {
		if _, ok := composed[mrd]; !ok {
			t.Errorf("%s is activated but no example composes it", mrd)
		}
	}
}
