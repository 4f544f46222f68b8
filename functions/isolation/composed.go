package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/ready"
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
// as kiso rendered it (fnstate.AsRendered). It is what the function returns when it cannot render: Crossplane
// deletes any composed resource a function stops returning, and deleting a
// NodePool drains a tenant's nodes.
func keepObserved(observed map[resource.Name]resource.ObservedComposed, keys placement.Keys) map[resource.Name]*resource.DesiredComposed {
	annotations := ownAnnotations(keys)
	out := make(map[resource.Name]*resource.DesiredComposed, len(observed))
	for name, oc := range observed {
		cd := fnstate.AsRendered(oc, annotations)
		out[name] = &resource.DesiredComposed{Resource: cd, Ready: ready.Of(cd, oc, true)}
	}
	return out
}

// ownAnnotations are the annotations kiso renders. The external name is a managed resource's AWS identity: a
// kept Role without it would make provider-aws manage a role of another name. A NodePool's NodeClass baseline
// is what its nodes were launched from: a kept pool without it would record the next hash as its baseline, and
// the change in between would never drift a node; a NodeClass's mark is what its NodePool's follows. The composition resource name and external create times are
// Crossplane's and the providers', theirs to keep.
func ownAnnotations(keys placement.Keys) []string {
	r := placement.NewRolloutAnnotations(keys.Domain)
	return []string{meta.AnnotationKeyExternalName, placement.PoolAnnotation, r.Cluster, r.Reference, r.Revision, r.NodeClass, r.NodeClassBaseline, keys.InstanceProfile}
}

// observedPool is the observed NodeClass and NodePool of one pool.
func observedPool(observed fnstate.Observed, p pool) map[resource.Name]resource.ObservedComposed {
	out := make(map[resource.Name]resource.ObservedComposed, 2)
	for _, name := range []resource.Name{nodeClassResourceName(p), nodePoolResourceName(p)} {
		if oc, ok := observed.Get(name); ok {
			out[name] = oc
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
func allObserved(rendered map[resource.Name]*resource.DesiredComposed, observed fnstate.Observed) bool {
	for name := range rendered {
		if !observed.Has(name) {
			return false
		}
	}
	return true
}

// objectMap starts an object as a plain map: kiso renders hundreds of
// ConfigMaps and Roles for a large organization, and converting typed objects
// cost more than the rest of their rendering. labels holds kiso's labels.
func objectMap(t metav1.TypeMeta, name, namespace string, labels map[string]any) map[string]any {
	metadata := map[string]any{"name": name, "labels": labels}
	if namespace != "" {
		metadata["namespace"] = namespace
	}
	return map[string]any{"apiVersion": t.APIVersion, "kind": t.Kind, "metadata": metadata}
}
