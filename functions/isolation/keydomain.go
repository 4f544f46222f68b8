package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// An organization's keys are set once. Every taint and label of its pools is in its key domain, so a new domain
// would change every pool's template at once and Karpenter would replace every node in the same minute, outside
// the cluster's waves. The domain an organization's pools already carry therefore stays theirs whatever the
// function's input says later; an organization with no pool yet takes the domain its cluster's policies check,
// which the cluster keeps the same way, so that both sides agree; only an organization with neither takes the
// input's.

// TypeKeyDomainCurrent is False while the organization's keys are in another domain than the function's input
// says, and says why.
const TypeKeyDomainCurrent = "KeyDomainCurrent"

// KeyDomainCurrent's reasons.
const (
	ReasonKeyDomainConfigured = "Configured"
	// ReasonKeyDomainOfPools: the pools carry another domain, kept.
	ReasonKeyDomainOfPools = "KeptOnPools"
	// ReasonKeyDomainOfCluster: no pool yet, and the cluster's policies check another domain, followed.
	ReasonKeyDomainOfCluster = "ClusterKeeps"
)

// keyDomain is the domain of an organization's keys and where it comes from.
type keyDomain struct {
	// Configured is the function input's domain, Domain the one in use.
	Configured, Domain string
	// Reason is KeyDomainCurrent's reason for Domain; Cluster names the cluster it follows.
	Reason, Cluster string
}

// chooseKeyDomain returns the domain of the keys the organization uses: the one its pools carry, else the one
// the policies of its cluster c check (nil before it is fetched, or when the organization names none), else
// configured.
func chooseKeyDomain(configured, organization string, view fnstate.Observed, c *boundCluster) keyDomain {
	kd := keyDomain{Configured: configured, Domain: configured, Reason: ReasonKeyDomainConfigured}
	switch pools, ok := poolsKeyDomain(view, organization); {
	case ok:
		kd.Domain = pools
		if pools != configured {
			kd.Reason = ReasonKeyDomainOfPools
		}
	case c != nil && c.Status.Placement != nil && c.Status.Placement.KeyDomain != "" && c.Status.Placement.KeyDomain != configured:
		kd.Domain, kd.Reason, kd.Cluster = c.Status.Placement.KeyDomain, ReasonKeyDomainOfCluster, c.Name
	}
	return kd
}

// poolsKeyDomain reads the key domain of the first of the organization's observed NodePools that carries one, by
// the node identity label kiso gives every pool's nodes (placement.Keys.NodeOrganization); false when none does.
func poolsKeyDomain(view fnstate.Observed, organization string) (string, bool) {
	for _, name := range view.Names() {
		if h, _ := view.Head(name); h.GVK.Kind != nodePoolKind {
			continue
		}
		oc, _ := view.Get(name)
		labels, _, _ := unstructured.NestedStringMap(oc.Resource.Object, "spec", "template", "metadata", "labels")
		for key, value := range labels {
			if domain, ok := placement.DomainOfNodeOrganizationLabel(key); ok && value == organization {
				return domain, true
			}
		}
	}
	return "", false
}

// report says which domain the organization's keys are in, and why when it is not the input's.
func (kd keyDomain) report(rsp *fnv1.RunFunctionResponse) {
	switch kd.Reason {
	case ReasonKeyDomainOfPools:
		response.ConditionFalse(rsp, TypeKeyDomainCurrent, kd.Reason).
			WithMessage(fmt.Sprintf("the function's input says keyDomain %s, and this organization's pools carry keys of domain %s: kiso keeps %s, "+
				"since another domain would change every pool's taints and labels and Karpenter would replace every node at once; "+
				"a domain applies to organizations created after it is set", kd.Configured, kd.Domain, kd.Domain)).
			TargetCompositeAndClaim()
	case ReasonKeyDomainOfCluster:
		response.ConditionFalse(rsp, TypeKeyDomainCurrent, kd.Reason).
			WithMessage(fmt.Sprintf("the function's input says keyDomain %s, and the policies of XKarpenterCluster %q check keys of domain %s, "+
				"which the cluster keeps: this organization's keys are in %s, so that its policies hold them", kd.Configured, kd.Cluster, kd.Domain, kd.Domain)).
			TargetCompositeAndClaim()
	default:
		response.ConditionTrue(rsp, TypeKeyDomainCurrent, kd.Reason).
			WithMessage(fmt.Sprintf("keys in domain %s, as the function's input says", kd.Domain)).
			TargetCompositeAndClaim()
	}
}
