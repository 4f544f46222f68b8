package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/xrfields"
)

// Defaults for the reference NodeClass: AWS's EC2NodeClass.
const (
	defaultNodeClassAPIVersion = "karpenter.k8s.aws/v1"
	defaultNodeClassKind       = "EC2NodeClass"
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
	applyDefaults(&spec)
	return spec, nil
}

func applyDefaults(spec *v1alpha1.XKarpenterIsolationSpec) {
	if spec.Isolation == "" {
		spec.Isolation = v1alpha1.IsolationOrganization
	}
	if spec.NodeClassRef.APIVersion == "" {
		spec.NodeClassRef.APIVersion = defaultNodeClassAPIVersion
	}
	if spec.NodeClassRef.Kind == "" {
		spec.NodeClassRef.Kind = defaultNodeClassKind
	}
	if spec.NodeRole == "" {
		spec.NodeRole = v1alpha1.NodeRoleShared
	}
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
