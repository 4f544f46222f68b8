package main

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/resource/composed"

	eksv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/eks/v1beta1"
	iamv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/iam/v1beta1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
)

func init() {
	// composed.From needs the Go types of the objects it converts.
	_ = corev1.AddToScheme(composed.Scheme)
	_ = iamv1beta1.AddToScheme(composed.Scheme)
	_ = eksv1beta1.AddToScheme(composed.Scheme)
}

// planObjects lists every object the organization's spec composes. The plan
// is known before anything is fetched, so the function can ask Crossplane
// whether something else already holds each name.
func planObjects(spec v1alpha1.XKarpenterIsolationSpec, pools []pool) []ownership.Object {
	nodeClass := nodeClassGVK(spec.NodeClassRef)
	nodePool := schema.FromAPIVersionAndKind(nodePoolAPIVersion, nodePoolKind)
	out := make([]ownership.Object, 0, 3*len(pools)+4)
	for _, p := range pools {
		out = append(out,
			ownership.Object{Resource: nodeClassResourceName(p), GVK: nodeClass, Name: p.Name},
			ownership.Object{Resource: nodePoolResourceName(p), GVK: nodePool, Name: p.Name})
		for _, u := range poolUsages(spec, p, usedObjects{}) {
			out = append(out, ownership.Object{Resource: u.Resource, GVK: usageGVK, Name: u.Name})
		}
	}
	out = append(out, plannedIdentity(spec)...)
	out = append(out, plannedConfigMaps(spec)...)
	return out
}
