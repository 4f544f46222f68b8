package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// planObjects lists every object the organization's spec composes in the
// namespaces the platform gives it. The plan is known before anything else is
// fetched, so the function can ask Crossplane whether something else already
// holds each name.
func planObjects(spec v1alpha1.XKarpenterIsolationSpec, pools []pool, in Input, served []specNamespace) []ownership.Object {
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
	out = append(out, plannedNamespaceObjects(served)...)
	return out
}

// plannedNamespaceObjects lists the placement ConfigMap and Role of every
// namespace served, for the ownership check: a Role kiso-placement that kiso
// did not compose is never taken over.
func plannedNamespaceObjects(served []specNamespace) []ownership.Object {
	out := make([]ownership.Object, 0, 2*len(served))
	for _, ns := range served {
		out = append(out,
			ownership.Object{Resource: placementConfigMapResourceName(ns.Name), GVK: configMapGVK, Namespace: ns.Name, Name: placementConfigMapName},
			ownership.Object{Resource: placementRoleResourceName(ns.Name), GVK: roleGVK, Namespace: ns.Name, Name: placement.Name})
	}
	return out
}
