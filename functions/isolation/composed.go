package main

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/ready"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// Composed resource names: one NodePool and one NodeClass per pool, keyed by
// the pool's name so a pool keeps its identity while other pools come and go.
func nodePoolResourceName(p pool) resource.Name  { return resource.Name("nodepool-" + p.Name) }
func nodeClassResourceName(p pool) resource.Name { return resource.Name("nodeclass-" + p.Name) }

// isReady reports whether an observed Karpenter object is ready by the one rule every composed resource
// is judged by (ready.Of): it says Ready=True and is not being deleted. A NodeClass Karpenter keeps until its
// nodes are gone may still say Ready, but no new node will use it, so a pool that replaces another must not
// count on it, and neither may the claim's readiness.
func isReady(oc resource.ObservedComposed, ok bool) bool {
	return ok && ready.Of(oc.Resource, oc, ok) == resource.ReadyTrue
}

// keepObserved returns every observed composed resource as desired, exactly
// as kiso rendered it: identity, kiso's labels and annotations, and content. It is what the function returns when it cannot render: Crossplane
// deletes any composed resource a function stops returning, and deleting a
// NodePool drains a tenant's nodes.
func keepObserved(observed map[resource.Name]resource.ObservedComposed, keys placement.Keys) map[resource.Name]*resource.DesiredComposed {
	out := make(map[resource.Name]*resource.DesiredComposed, len(observed))
	for name, oc := range observed {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": oc.Resource.GetAPIVersion(),
			"kind":       oc.Resource.GetKind(),
			"metadata":   map[string]any{"name": oc.Resource.GetName()},
		}}
		if ns := oc.Resource.GetNamespace(); ns != "" {
			u.SetNamespace(ns)
		}
		if labels := ownLabels(oc.Resource.GetLabels()); len(labels) > 0 {
			u.SetLabels(labels)
		}
		if annotations := ownAnnotations(oc.Resource.GetAnnotations(), keys); len(annotations) > 0 {
			u.SetAnnotations(annotations)
		}
		// A ConfigMap's content is its data, a Role's its rules, a
		// RoleBinding's its role and subjects; everything else kiso composes
		// keeps it in spec.
		for _, content := range []string{"spec", configMapData, "rules", "roleRef", "subjects"} {
			if v, ok := oc.Resource.Object[content]; ok {
				u.Object[content] = runtime.DeepCopyJSONValue(v)
			}
		}
		cd := composed.New()
		cd.Unstructured = *u
		out[name] = &resource.DesiredComposed{Resource: cd, Ready: ready.Of(cd, oc, true)}
	}
	return out
}

// renderedAnnotations are the annotations kiso itself renders. The external
// name is a managed resource's AWS identity: a kept Role without it would
// make provider-aws manage a role of another name.
var renderedAnnotations = []string{meta.AnnotationKeyExternalName, placement.PoolAnnotation}

// ownAnnotations keeps the annotations kiso renders and drops the ones
// Crossplane and providers write (composition resource name, external
// create times), which are theirs to keep.
func ownAnnotations(annotations map[string]string, keys placement.Keys) map[string]string {
	r := rollout.NewAnnotations(keys.Domain)
	out := make(map[string]string, len(renderedAnnotations)+3)
	for _, k := range append(renderedAnnotations[:len(renderedAnnotations):len(renderedAnnotations)], r.Cluster, r.Reference, r.Revision) {
		if v, ok := annotations[k]; ok {
			out[k] = v
		}
	}
	return out
}

// observedPool is the observed NodeClass and NodePool of one pool.
func observedPool(observed map[resource.Name]resource.ObservedComposed, p pool) map[resource.Name]resource.ObservedComposed {
	out := make(map[resource.Name]resource.ObservedComposed, 2)
	for _, name := range []resource.Name{nodeClassResourceName(p), nodePoolResourceName(p)} {
		if oc, ok := observed[name]; ok {
			out[name] = oc
		}
	}
	return out
}

// ownLabels drops the labels Crossplane itself puts on composed resources.
func ownLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if !strings.HasPrefix(k, "crossplane.io/") {
			out[k] = v
		}
	}
	return out
}

// observedNodeClassRef returns the group and kind an observed NodePool points
// at, which Karpenter forbids changing.
func observedNodeClassRef(oc resource.ObservedComposed) (schema.GroupKind, bool) {
	group, _, _ := unstructured.NestedString(oc.Resource.Object, "spec", "template", "spec", "nodeClassRef", "group")
	kind, _, _ := unstructured.NestedString(oc.Resource.Object, "spec", "template", "spec", "nodeClassRef", "kind")
	return schema.GroupKind{Group: group, Kind: kind}, kind != ""
}

// allObserved reports whether Crossplane has observed every object rendered:
// an object rendered for the first time is applied after this call, and its
// creation is an event Crossplane may still drop.
func allObserved(rendered map[resource.Name]*resource.DesiredComposed, observed map[resource.Name]resource.ObservedComposed) bool {
	for name := range rendered {
		if _, ok := observed[name]; !ok {
			return false
		}
	}
	return true
}

// objectMap starts an object as a plain map: kiso renders hundreds of
// ConfigMaps and Roles for a large organization, and converting typed objects
// cost more than the rest of their rendering. labels holds kiso's labels.
func objectMap(apiVersion, kind, name, namespace string, labels map[string]any) map[string]any {
	metadata := map[string]any{"name": name, "labels": labels}
	if namespace != "" {
		metadata["namespace"] = namespace
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": metadata}
}
