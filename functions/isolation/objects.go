package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
)

// planObjects lists every object the organization's spec composes in the
// namespaces the platform gives it. The plan is known before anything else is
// fetched, so the function can ask Crossplane whether something else already
// holds each name.
func planObjects(spec v1alpha1.XKarpenterIsolationSpec, pools []pool, in Input, given map[string]bool) []ownership.Object {
	nodeClass := nodeClassGVK(spec.NodeClassRef)
	nodePool := schema.FromAPIVersionAndKind(nodePoolAPIVersion, nodePoolKind)
	out := make([]ownership.Object, 0, 3*len(pools)+5)
	out = append(out, plannedOrganizationLock(spec, in))
	for _, p := range pools {
		out = append(out,
			ownership.Object{Resource: nodeClassResourceName(p), GVK: nodeClass, Name: p.Name},
			ownership.Object{Resource: nodePoolResourceName(p), GVK: nodePool, Name: p.Name})
	}
	out = append(out, plannedIdentity(spec)...)
	out = append(out, plannedNamespaceObjects(spec, given)...)
	return out
}
