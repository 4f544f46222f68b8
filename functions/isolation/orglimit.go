package main

import (
	"maps"
	"slices"

	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

// One limit across an organization's pools. Karpenter's limits are per NodePool, and Karpenter knows no limit
// across pools, so spec.limits is kept by setting each pool's own: what the organization has left beside what
// its other pools hold, as Karpenter counts it in their NodePools' status (status.resources, which it updates
// within seconds of a node's launch or removal), and never above the pool's own limit. Every change of that count
// is an event that calls the function again (Crossplane watches the NodePools it composes), so the limits follow
// the organization's usage; they depend only on what the other pools hold, which a change of limits does not
// change, so a reconcile that wrote them is followed by one that writes nothing.
//
// Between a change of usage and the limits that follow it, each pool may grow up to the limit it was given, so
// the organization may go over spec.limits by at most (pools - 1) x what it had left when the limits were last
// set: with two pools and nothing used, up to twice its limit, if both grow at once before either's new nodes
// are counted. For cpu and memory Karpenter keeps each pool within its own limit (it counts a node being
// launched at the largest instance type it may become); for nodes it only checks that one is left, so one
// provisioning round of one pool may launch more nodes than are left.

// nodesResource is the limit on a pool's node count, which Karpenter counts in a NodePool's status.resources
// beside what its nodes hold.
const nodesResource = "nodes"

// organizationLimit is spec.limits, and what each of the organization's NodePools holds as Karpenter counts it.
type organizationLimit struct {
	// Limits are spec.limits, parsed.
	Limits map[string]k8sresource.Quantity
	// Used is, per observed NodePool (by composed resource name), what it holds of each limited resource.
	Used map[resource.Name]map[string]k8sresource.Quantity
}

// newOrganizationLimit reads spec.limits and what every NodePool the XR composes holds, retired ones included:
// their nodes are the organization's until they are gone.
func newOrganizationLimit(spec v1alpha1.XKarpenterIsolationSpec, observed fnstate.Observed) organizationLimit {
	o := organizationLimit{Limits: map[string]k8sresource.Quantity{}, Used: map[resource.Name]map[string]k8sresource.Quantity{}}
	for k, v := range spec.Limits {
		if q, err := k8sresource.ParseQuantity(v.String()); err == nil {
			o.Limits[k] = q
		}
	}
	if len(o.Limits) == 0 {
		return o
	}
	for _, name := range observed.Names() {
		if h, _ := observed.Head(name); h.GVK.Kind != nodePoolKind {
			continue
		}
		oc, _ := observed.Get(name)
		o.Used[name] = holds(&oc.Resource.Unstructured, slices.Collect(maps.Keys(o.Limits)))
	}
	return o
}

// countBeingDeleted adds what each NodePool being deleted holds, those Crossplane no longer observes though they
// still drain (requireNodeClassUsers reads them by name): their nodes are the organization's until they are gone.
func (o organizationLimit) countBeingDeleted(nodePools []*unstructured.Unstructured) {
	if len(o.Limits) == 0 {
		return
	}
	for _, np := range nodePools {
		o.Used[resource.Name("being-deleted-"+np.GetName())] = holds(np, slices.Collect(maps.Keys(o.Limits)))
	}
}

// holds is what a NodePool's status says its nodes hold of each resource; nothing counted is nothing held.
func holds(np *unstructured.Unstructured, resources []string) map[string]k8sresource.Quantity {
	out := make(map[string]k8sresource.Quantity, len(resources))
	for _, r := range resources {
		v, found, _ := unstructured.NestedFieldNoCopy(np.Object, "status", "resources", r)
		if !found && r == nodesResource {
			v, found, _ = unstructured.NestedFieldNoCopy(np.Object, "status", "nodes")
		}
		if !found {
			continue
		}
		if q, err := k8sresource.ParseQuantity(quantityText(v)); err == nil {
			out[r] = q
		}
	}
	return out
}

// left is, per limited resource, what the organization has left for a pool: spec.limits less what its other
// pools hold, and never below zero.
func (o organizationLimit) left(p pool) map[string]k8sresource.Quantity {
	out := make(map[string]k8sresource.Quantity, len(o.Limits))
	for r, limit := range o.Limits {
		q := limit.DeepCopy()
		for name, used := range o.Used {
			if name == nodePoolResourceName(p) {
				continue
			}
			if u, ok := used[r]; ok {
				q.Sub(u)
			}
		}
		if q.Sign() < 0 {
			q = k8sresource.Quantity{}
		}
		out[r] = q
	}
	return out
}

// limit sets a pool's rendered NodePool's limits to what the organization has left for it, where that is
// lower than its own. A static NodePool (spec.replicas) takes only limits.nodes, as Karpenter allows.
func (o organizationLimit) limit(np *unstructured.Unstructured, p pool) {
	if len(o.Limits) == 0 {
		return
	}
	spec, ok := np.Object["spec"].(map[string]any)
	if !ok {
		return
	}
	_, static := spec["replicas"]
	own, _ := spec["limits"].(map[string]any)
	// The rendered spec may share its limits with the reference: write a copy.
	limits := maps.Clone(own)
	if limits == nil {
		limits = map[string]any{}
	}
	left := o.left(p)
	for _, r := range slices.Sorted(maps.Keys(left)) {
		if static && r != nodesResource {
			continue
		}
		if v, set := limits[r]; set {
			if q, err := k8sresource.ParseQuantity(quantityText(v)); err == nil && q.Cmp(left[r]) <= 0 {
				continue
			}
		}
		q := left[r]
		limits[r] = q.String()
	}
	spec["limits"] = limits
}

// reportLimits puts spec.limits in status.usage in place of the sum of the pools' limits, which it bounds:
// each limited resource of usageResources, and nodes.
func (o organizationLimit) reportLimits(u *v1alpha1.Usage) {
	if u == nil || len(o.Limits) == 0 {
		return
	}
	if u.Limits == nil {
		u.Limits = map[string]string{}
	}
	for _, r := range append(slices.Clone(usageResources), nodesResource) {
		if q, ok := o.Limits[r]; ok {
			u.Limits[r] = q.String()
		}
	}
}
