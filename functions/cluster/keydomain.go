package main

import (
	"fmt"

	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// A cluster's key domain is set once. Its organizations' pools taint and label their nodes with keys in the
// domain its policies check, and an organization keeps the domain its pools carry (a new one would replace every
// node at once), so a cluster whose policies switched domain would stop holding them. The domain the cluster's
// placement policy was composed with therefore stays the cluster's whatever the function's input says later.

// TypeKeyDomainCurrent is False while the cluster's policies check another domain than the function's input
// says, and says why.
const TypeKeyDomainCurrent = "KeyDomainCurrent"

// KeyDomainCurrent's reasons.
const (
	ReasonKeyDomainConfigured = "Configured"
	// ReasonKeyDomainOfPolicies: the cluster's policies check another domain, kept.
	ReasonKeyDomainOfPolicies = "KeptOnPolicies"
)

// keyDomain is the domain of the keys the cluster's policies check, and the function input's.
type keyDomain struct {
	Configured, Domain string
}

// chooseKeyDomain returns the domain the cluster's placement policy was composed with, as kiso last asked for it
// (in a workload cluster, the manifest of its Object), else configured.
func chooseKeyDomain(configured string, observed fnstate.Observed) keyDomain {
	kd := keyDomain{Configured: configured, Domain: configured}
	oc, ok := observed.Get(crPlacementPolicy)
	if !ok {
		return kd
	}
	policy := oc.Resource
	if policy.GroupVersionKind().GroupKind() == remote.ObjectGVK.GroupKind() {
		policy = remote.Unwrap(policy)
	}
	if d := placement.Published(policy.GetAnnotations()).KeyDomain; d != "" {
		kd.Domain = d
	}
	return kd
}

// report says which domain the cluster's policies check, and why when it is not the input's.
func (kd *keyDomain) report(r *state) {
	rsp := r.Rsp
	if kd.Domain == kd.Configured {
		response.ConditionTrue(rsp, TypeKeyDomainCurrent, ReasonKeyDomainConfigured).
			WithMessage(fmt.Sprintf("the placement policies check keys of domain %s, as the function's input says", kd.Domain)).
			TargetComposite()
		return
	}
	response.ConditionFalse(rsp, TypeKeyDomainCurrent, ReasonKeyDomainOfPolicies).
		WithMessage(fmt.Sprintf("the function's input says keyDomain %s, and this cluster's placement policies were composed with %s: kiso keeps %s, "+
			"since its organizations' pools keep the domain they carry (another would replace every node at once) and the policies must check it; "+
			"a domain applies to clusters created after it is set", kd.Configured, kd.Domain, kd.Domain)).
		TargetComposite()
}
