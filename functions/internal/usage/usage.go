// Package usage renders Crossplane ClusterUsages, kiso's way of ordering
// deletion: while the using object exists, Crossplane's webhook refuses to
// delete the used one, so nodes go before their NodeClass, a NodeClass before
// its IAM identity, and every tenant pool before Karpenter's permissions,
// without any waiting in kiso.
package usage

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

// ClusterUsage's API.
const (
	APIVersion = "protection.crossplane.io/v1beta1"
	Kind       = "ClusterUsage"
	Group      = "protection.crossplane.io"
)

// A Ref names a cluster-scoped object.
type Ref struct {
	APIVersion, Kind, Name string
}

// RefOf names the object of a kind and name.
func RefOf(gvk schema.GroupVersionKind, name string) Ref {
	return Ref{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name}
}

// A Usage says By uses Of: Of cannot be deleted while By exists. A Usage
// with no By (its zero Ref) keeps Of for as long as the Usage itself exists,
// and says why in Reason: Crossplane's webhook quotes it when it refuses.
type Usage struct {
	Name   string
	Of, By Ref
	Reason string
}

// Render renders the usage as a ClusterUsage. replayDeletion re-issues a
// blocked deletion of the used object once it is free, so an XR's deletion
// finishes without waiting for garbage collection to retry.
func (u Usage) Render(labels map[string]string) *composed.Unstructured {
	ref := func(o Ref) map[string]any {
		return map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "resourceRef": map[string]any{"name": o.Name}}
	}
	spec := map[string]any{"of": ref(u.Of), "replayDeletion": true}
	if u.By != (Ref{}) {
		spec["by"] = ref(u.By)
	}
	if u.Reason != "" {
		spec["reason"] = u.Reason
	}
	cd := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: map[string]any{
		"apiVersion": APIVersion,
		"kind":       Kind,
		"metadata":   map[string]any{"name": u.Name},
		"spec":       spec,
	}}}
	if len(labels) > 0 {
		cd.SetLabels(labels)
	}
	return cd
}
