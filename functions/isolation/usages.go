package main

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/names"
)

// Crossplane's ClusterUsage: while the using object exists, Crossplane's
// webhook refuses to delete the used one. It orders deletion without any
// waiting in kiso: nodes go before their NodeClass, a NodeClass before its
// IAM role.
const (
	usageAPIVersion = "protection.crossplane.io/v1beta1"
	usageKind       = "ClusterUsage"
)

// usageResourceName is the composed resource name of the Usage that keeps a
// pool's NodeClass until its NodePool is gone.
func usageResourceName(p pool) resource.Name { return resource.Name("usage-" + p.Name) }

// usageName names a Usage after the pool whose deletion it orders.
func usageName(p pool) string { return names.Join(253, p.Name, "nodepool-uses-nodeclass") }

// objectReference is what a Usage's of and by name: a cluster-scoped object.
type objectReference struct {
	APIVersion, Kind, Name string
}

// renderUsage renders a ClusterUsage: by uses of. replayDeletion re-issues a
// deletion of the used object once it is free, so an XR's deletion finishes
// without waiting for garbage collection to retry.
func renderUsage(name string, of, by objectReference, labels map[string]string) *composed.Unstructured {
	ref := func(o objectReference) map[string]any {
		return map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "resourceRef": map[string]any{"name": o.Name}}
	}
	u := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: map[string]any{
		"apiVersion": usageAPIVersion,
		"kind":       usageKind,
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"of":             ref(of),
			"by":             ref(by),
			"replayDeletion": true,
		},
	}}}
	u.SetLabels(labels)
	return u
}
