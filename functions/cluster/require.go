package main

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// require plans what the cluster composes (the plans every concern reads) and asks Crossplane, concern by
// concern, for what it reads to render it, all known from the spec, the input and what the cluster composed before: the MutatingAdmissionPolicy API the
// apiserver serves, prometheus-operator's CRD, the platform namespaces, a staged rollout's pools, the reference
// pairs the spec lists, and the tenant pools that may still use a Release the spec no longer asks for. Whatever
// a workload cluster holds is read there (settle hands the requirements over).
func (r *call) require() {
	r.plan = newPlan(r.Spec)
	r.placement = newPlacementPlan(r.name(), r.Spec, r.In, r.keys)
	r.required = map[string]*fnv1.ResourceSelector{}
	each(r, func(c requirer) { c.require(&r.state) })
}
