package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/xrfields"
)

// Karpenter's NodePool API, the same for every provider.
const (
	karpenterGroup     = "karpenter.sh"
	nodePoolAPIVersion = "karpenter.sh/v1"
	nodePoolKind       = "NodePool"
)

// decodeSpec reads the XR's spec and applies the defaults the XRD declares,
// so the function behaves the same whether or not the API server defaulted it.
func decodeSpec(xr *resource.Composite) (v1alpha1.XKarpenterIsolationSpec, error) {
	spec := v1alpha1.XKarpenterIsolationSpec{}
	if err := xrfields.Decode(xr.Resource.Object, "spec", &spec); err != nil {
		return spec, errors.Wrap(err, "cannot read the XR")
	}
	spec.Default()
	return spec, nil
}

// namespacesOf returns the namespaces a stack's pods run in: those listed, or
// <organization>-<stack> by default.
func namespacesOf(organization string, s v1alpha1.Stack) []string {
	if len(s.Namespaces) > 0 {
		return s.Namespaces
	}
	return []string{defaultNamespace(organization, s.Name)}
}

func defaultNamespace(organization, stack string) string {
	return organization + "-" + stack
}

// nodeClassGVK is the GroupVersionKind of the NodeClass the spec clones.
func nodeClassGVK(ref v1alpha1.NodeClassReference) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
}

// isEC2NodeClass reports whether the reference is AWS's EC2NodeClass, the
// only NodeClass with tags.
func isEC2NodeClass(ref v1alpha1.NodeClassReference) bool {
	gvk := nodeClassGVK(ref)
	return gvk.Group == "karpenter.k8s.aws" && gvk.Kind == "EC2NodeClass"
}
