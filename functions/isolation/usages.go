package main

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/names"
)

// Crossplane's ClusterUsage: while the using object exists, Crossplane's
// webhook refuses to delete the used one. It orders deletion without any
// waiting in kiso: nodes go before their NodeClass, a NodeClass before its
// IAM role, and every tenant pool before the controller's permissions, so
// Karpenter can still terminate the last tenant node.
const (
	usageAPIVersion = "protection.crossplane.io/v1beta1"
	usageKind       = "ClusterUsage"
	iamAPIVersion   = "iam.aws.upbound.io/v1beta1"
)

var usageGVK = schema.FromAPIVersionAndKind(usageAPIVersion, usageKind)

// objectReference is what a Usage's of and by name: a cluster-scoped object.
type objectReference struct {
	APIVersion, Kind, Name string
}

// A usage says by uses of.
type usage struct {
	Resource resource.Name
	Name     string
	Of, By   objectReference
}

// usedObjects are the objects outside the pool its usages name: the cluster's
// controller role and the organization's dedicated role and instance profile
// (empty when there are none).
type usedObjects struct {
	ControllerRole string
	NodeRole       string
	NodeProfile    string
}

// poolUsages lists the usages of one pool. Names depend on the spec only, so
// the function can plan them before it fetches anything.
func poolUsages(spec v1alpha1.XKarpenterIsolationSpec, p pool, used usedObjects) []usage {
	nodeClass := nodeClassGVK(spec.NodeClassRef)
	nc := objectReference{APIVersion: nodeClass.GroupVersion().String(), Kind: nodeClass.Kind, Name: p.Name}
	np := objectReference{APIVersion: nodePoolAPIVersion, Kind: nodePoolKind, Name: p.Name}
	out := []usage{{Resource: resource.Name("usage-" + p.Name), Name: usageName(p, "nodepool-uses-nodeclass"), Of: nc, By: np}}
	if spec.NodeRole == v1alpha1.NodeRoleDedicated {
		out = append(out,
			usage{Resource: resource.Name("usage-" + p.Name + "-node-role"), Name: usageName(p, "nodeclass-uses-node-role"),
				Of: objectReference{APIVersion: iamAPIVersion, Kind: "Role", Name: used.NodeRole}, By: nc},
			usage{Resource: resource.Name("usage-" + p.Name + "-instance-profile"), Name: usageName(p, "nodeclass-uses-instance-profile"),
				Of: objectReference{APIVersion: iamAPIVersion, Kind: "InstanceProfile", Name: used.NodeProfile}, By: nc})
	}
	if spec.ClusterRef != nil {
		out = append(out, usage{Resource: resource.Name("usage-" + p.Name + "-controller-role"), Name: usageName(p, "nodepool-uses-controller-role"),
			Of: objectReference{APIVersion: iamAPIVersion, Kind: "Role", Name: used.ControllerRole}, By: np})
	}
	return out
}

func usageName(p pool, what string) string { return names.Join(253, p.Name, what) }

// render renders the usage as a ClusterUsage. replayDeletion re-issues a
// blocked deletion of the used object once it is free, so an XR's deletion
// finishes without waiting for garbage collection to retry.
func (u usage) render(labels map[string]string) *composed.Unstructured {
	ref := func(o objectReference) map[string]any {
		return map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "resourceRef": map[string]any{"name": o.Name}}
	}
	cd := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: map[string]any{
		"apiVersion": usageAPIVersion,
		"kind":       usageKind,
		"metadata":   map[string]any{"name": u.Name},
		"spec": map[string]any{
			"of":             ref(u.Of),
			"by":             ref(u.By),
			"replayDeletion": true,
		},
	}}}
	cd.SetLabels(labels)
	return cd
}
