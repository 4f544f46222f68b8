package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// Who may claim an organization is the platform's say, in two ways:
//   - a claim may claim only the organization its own namespace is given
//     (the namespace label <keyDomain>/organization, which only the
//     platform may set); an XR without a claim was created by whoever may
//     create cluster-scoped XRs, the platform;
//   - one XR only holds an organization, whatever its isolation mode: each
//     composes a ConfigMap kiso-organization.<organization> in a namespace
//     tenants cannot write in, and a second XR finds it held and is
//     refused, as for any name kiso would otherwise adopt. Pool names
//     alone would not do: kiso-acme and kiso-acme.web never clash.

// organizationLockResource is the composed resource name of the ConfigMap.
const organizationLockResource resource.Name = "organization"

// organizationLockName names the ConfigMap of an organization. An
// organization is a DNS label, so the name always fits.
func organizationLockName(organization string) string { return "kiso-organization." + organization }

// plannedOrganizationLock is the ConfigMap the XR holds its organization by.
func plannedOrganizationLock(spec v1alpha1.XKarpenterIsolationSpec, in Input) ownership.Object {
	return ownership.Object{Resource: organizationLockResource, GVK: configMapGVK, Namespace: in.OrganizationsNamespace, Name: organizationLockName(spec.Organization)}
}

// claimOf is where the XR's claim is: its namespace and name, empty for an
// XR created without one. Crossplane writes spec.claimRef; a claim's own
// spec has no such field.
type claimOf struct{ Namespace, Name string }

func claimOfXR(xr *resource.Composite) claimOf {
	ref := xr.Resource.GetClaimReference()
	if ref == nil {
		return claimOf{}
	}
	return claimOf{Namespace: ref.Namespace, Name: ref.Name}
}

// renderOrganizationLock renders the ConfigMap that holds the organization.
func renderOrganizationLock(spec v1alpha1.XKarpenterIsolationSpec, in Input, claim claimOf, keys placement.Keys) *composed.Unstructured {
	o := plannedOrganizationLock(spec, in)
	data := map[string]any{"organization": spec.Organization}
	if claim.Namespace != "" {
		data["claim"] = claim.Namespace + "/" + claim.Name
	}
	u := composed.New()
	u.Object = objectMap(metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, o.Name, o.Namespace, map[string]any{placement.ManagedByLabel: placement.ManagedByValue, keys.Organization: spec.Organization})
	u.Object[configMapData] = data
	return u
}

// composesNothing reports whether the XR composes nothing yet, reads of a
// workload cluster aside. Not only nothing of its plan: a mode switch plans
// pools of new names while the old ones are still composed, and rendering
// the lock alone then would have Crossplane delete them.
func composesNothing(observed fnstate.Observed) bool {
	for _, name := range observed.Names() {
		if !remote.IsRead(name) {
			return false
		}
	}
	return true
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
