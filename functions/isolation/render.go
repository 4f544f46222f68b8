package main

import (
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

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
	objects := make(map[resource.Name]*composed.Unstructured, 4*len(r.pools)+12)
	objects[organizationLockResource] = renderOrganizationLock(r.Spec, r.In, r.claim, r.keys)
	identity, err := r.renderIdentity(objects)
	if err != nil {
		return nil, err
	}
	if err := r.renderPools(objects, identity); err != nil {
		return nil, err
	}
	if err := r.renderPlacement(objects); err != nil {
		return nil, err
	}
	// A name something else holds is left to it: applying over it would fail, and would fail the organization.
	for _, h := range r.found.Held {
		delete(objects, h.Resource)
	}

	out := make(map[resource.Name]*resource.DesiredComposed, len(objects))
	for name, o := range objects {
		out[name] = &resource.DesiredComposed{Resource: o, Ready: ready.OfObserved(o, r.view, name)}
	}
	return out, nil
}
