package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	eksv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/eks/v1beta1"
	iamv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/iam/v1beta1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

func init() {
	// composed.From needs the Go types of the objects it converts.
	_ = admissionv1.AddToScheme(composed.Scheme)
	_ = admissionv1beta1.AddToScheme(composed.Scheme)
	_ = iamv1beta1.AddToScheme(composed.Scheme)
	_ = eksv1beta1.AddToScheme(composed.Scheme)
}

// Composed resource names of the organization-wide objects.
const (
	resourcePlacementPolicy        resource.Name = "placement-policy"
	resourcePlacementBinding       resource.Name = "placement-binding"
	resourcePlacementInjectPolicy  resource.Name = "placement-inject-policy"
	resourcePlacementInjectBinding resource.Name = "placement-inject-binding"
)

// A plannedObject is one object the function composes for the organization:
// its composed resource name and the cluster-scoped object it is. The plan is
// known before the references are fetched, so the function can ask Crossplane
// whether anything already holds each name.
type plannedObject struct {
	Resource resource.Name
	Ref      objectRef
}

// planObjects lists every object the organization's spec composes.
func planObjects(spec v1alpha1.XKarpenterIsolationSpec, pools []pool) []plannedObject {
	nodeClass := nodeClassGVK(spec.NodeClassRef)
	nodePool := schema.FromAPIVersionAndKind(nodePoolAPIVersion, nodePoolKind)
	out := make([]plannedObject, 0, 3*len(pools)+4)
	for _, p := range pools {
		out = append(out,
			plannedObject{Resource: nodeClassResourceName(p), Ref: objectRef{GVK: nodeClass, Name: p.Name}},
			plannedObject{Resource: nodePoolResourceName(p), Ref: objectRef{GVK: nodePool, Name: p.Name}})
		for _, u := range poolUsages(spec, p, usedObjects{}) {
			out = append(out, plannedObject{Resource: u.Resource, Ref: objectRef{GVK: usageGVK, Name: u.Name}})
		}
	}
	out = append(out, plannedIdentity(spec)...)
	policy := placementPolicyName(spec.Organization)
	if placementEnforced(spec) {
		out = append(out,
			plannedObject{Resource: resourcePlacementPolicy, Ref: objectRef{GVK: admissionv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy"), Name: policy}},
			plannedObject{Resource: resourcePlacementBinding, Ref: objectRef{GVK: admissionv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicyBinding"), Name: policy}})
	}
	if placementInjected(spec) {
		out = append(out,
			plannedObject{Resource: resourcePlacementInjectPolicy, Ref: objectRef{GVK: admissionv1beta1.SchemeGroupVersion.WithKind("MutatingAdmissionPolicy"), Name: policy + "-inject"}},
			plannedObject{Resource: resourcePlacementInjectBinding, Ref: objectRef{GVK: admissionv1beta1.SchemeGroupVersion.WithKind("MutatingAdmissionPolicyBinding"), Name: policy + "-inject"}})
	}
	return out
}
