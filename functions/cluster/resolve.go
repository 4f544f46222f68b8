package main

import (
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

// resolve reads Crossplane's answers to what require asked for, before anything is rendered: a workload
// cluster's first (the provider's observations there become the answers), then whether the cluster serves
// prometheus-operator's PrometheusRule, a staged rollout, the MutatingAdmissionPolicy API, the tenant pools a
// Release the spec no longer asks for may still serve, Karpenter's Releases as provider-helm observed them,
// which platform namespaces exist, and the reference pairs the spec lists.
func (r *call) resolve() bool {
	if r.workload != nil {
		answered, err := r.workload.Answer(r.Req, r.Observed.ReadAll())
		if err != nil {
			return r.Fatal(err)
		}
		r.Observed = fnstate.ObservedOf(answered)
	}
	r.alerts.resolve(r)
	if err := r.rollouts.resolve(r); err != nil {
		return r.Fatal(err)
	}
	r.placement.resolve(r)
	r.namespaces.resolve(r)
	r.install.resolve(r)
	if err := r.references.resolve(r); err != nil {
		return r.Fatal(err)
	}
	return true
}
