package main

import (
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
	"github.com/kiso-dev/kiso/functions/internal/ready"
)

// render renders what the organization composes: nothing new while something it needs is not there yet (what
// it composed is kept as it is), a new organization's lock alone (takeOrganization), else every object of the
// organization, each pool from the revision of its reference pair its rollout wave allows (poolSources).
func (r *call) render() bool {
	r.stacks = stackStatuses(r.Spec, r.pools, r.keys)
	switch {
	case r.found.Unresolved():
		r.rendered = keepObserved(r.view.ReadAll(), r.keys)
		return true
	case composesNothing(r.view):
		r.taking = true
		r.rendered = r.takeOrganization()
		return true
	}
	var err error
	if r.rr, err = r.poolSources(); err != nil {
		return r.Fatal(err)
	}
	if r.rendered, err = r.renderOrganization(); err != nil {
		return r.Fatal(err)
	}
	return true
}

// renderOrganization renders every object of the organization: the
// ConfigMap by which it holds the organization, its dedicated node identity
// if it has one, each pool's NodeClass and NodePool, and the placement Role and ConfigMap of each namespace the
// platform gives it.
func (r *call) renderOrganization() (map[resource.Name]*resource.DesiredComposed, error) {
	spec, pools, found, observed, keys := r.Spec, r.pools, r.found, r.view, r.keys
	objects := make(map[resource.Name]*composed.Unstructured, 4*len(pools)+12)
	objects[organizationLockResource] = renderOrganizationLock(spec, r.In, r.claim, keys)
	var identity *nodeidentity.Identity
	if c := found.Cluster; c != nil {
		if spec.NodeRole == v1alpha1.NodeRoleDedicated {
			id := dedicatedIdentity(spec, c, organizationTags(spec, c, keys), keys)
			identity = &id
			ios, err := identityObjects(id, keys)
			if err != nil {
				return nil, err
			}
			for name, o := range ios {
				objects[name] = o
			}
		}
	}

	limit := newOrganizationLimit(spec, observed)
	for _, p := range pools {
		gvk := nodeClassGVK(p.Class.NodeClassRef)
		src := r.rr.Sources[p.Name]
		if src.Keep {
			for name, dc := range keepObserved(observedPool(observed, p), keys) {
				objects[name] = dc.Resource
			}
		} else {
			nc, err := renderNodeClass(src.NodeClass, p, keys, nodeAccount{Inherited: found.Cluster.inheritedTags(), Identity: identity})
			if err != nil {
				return nil, err
			}
			np, err := renderNodePool(src.NodePool, p, gvk, keys)
			if err != nil {
				return nil, err
			}
			limit.limit(np, p)
			annotate(nc, spec, src, keys)
			annotate(np, spec, src, keys)
			if err := markNodeClass(np, observedNodePool(observed.Get(nodePoolResourceName(p))), nc, keys); err != nil {
				return nil, err
			}
			objects[nodeClassResourceName(p)] = &composed.Unstructured{Unstructured: *nc}
			objects[nodePoolResourceName(p)] = &composed.Unstructured{Unstructured: *np}
		}
	}
	for name, o := range placementRoles(spec, r.stacks, r.served, keys) {
		objects[name] = o
	}
	configMaps, err := placementConfigMaps(spec, r.stacks, r.served, keys)
	if err != nil {
		return nil, err
	}
	for name, o := range configMaps {
		objects[name] = o
	}
	// A name something else holds is left to it: applying over it would fail, and would fail the organization.
	for _, h := range found.Held {
		delete(objects, h.Resource)
	}

	out := make(map[resource.Name]*resource.DesiredComposed, len(objects))
	for name, o := range objects {
		out[name] = &resource.DesiredComposed{Resource: o, Ready: ready.OfObserved(o, observed, name)}
	}
	return out, nil
}

// takeOrganization renders a new organization's first composition: its lock
// alone. Crossplane applies a response's objects in no fixed order and skips
// each one another XR controls, so two XRs of one new organization (two
// claims applied together) that each rendered everything at once could each
// take part of it, one the lock and a NodePool, the other the NodeClass, and
// both then fail for ever, each holding objects the other's nodes run on.
// Rendered alone, the lock goes to exactly one XR; that one renders the rest
// once it observes the lock, and the other finds the lock held and is
// refused, having composed nothing. The lock is not Ready meanwhile, so
// neither is the organization: it has no pool yet.
// The report says so (reportTaking).
func (r *call) takeOrganization() map[resource.Name]*resource.DesiredComposed {
	return map[resource.Name]*resource.DesiredComposed{
		organizationLockResource: {Resource: renderOrganizationLock(r.Spec, r.In, r.claim, r.keys), Ready: resource.ReadyFalse},
	}
}
