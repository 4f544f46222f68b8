package main

import (
	"strings"
	"testing"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// Without examples/rbac/crossplane-karpenter.yaml, Crossplane may not read the reference NodePool: its error
// reaches only the XR's Synced condition. The next call stops, changes nothing, and tells the claim.
func TestRefusedCrossplaneStopsAndTellsTheClaim(t *testing.T) {
	forbidden := `cannot compose resources: cannot run Composition pipeline step \"isolation\": fetching resources for nodePoolRef: cannot get required resource by name: nodepools.karpenter.sh \"tenant-reference\" is forbidden: User \"system:serviceaccount:crossplane-system:crossplane\" cannot get resource \"nodepools\" in API group \"karpenter.sh\" at the cluster scope`
	x := strings.TrimSuffix(xr(orgSpec), "}") + `,"status":{"conditions":[{"type":"Synced","status":"False","reason":"ReconcileError","message":"` + forbidden + `","lastTransitionTime":"2026-12-01T12:00:00Z"}]}}`
	observed := composedOrg(t, false)
	rsp := run(t, newRequest(t, input, x, observed), cluster{refNodeClass, refNodePool})

	want := fncall.Refusal{User: "system:serviceaccount:crossplane-system:crossplane", Verb: "get", Resource: "nodepools", Group: "karpenter.sh"}.Message()
	fntest.AssertChangesNothing(t, rsp, want, observed)
	if len(rsp.GetRequirements().GetResources()) > 0 {
		t.Errorf("requirements %v: a refused call must not ask Crossplane for what it may not read", rsp.GetRequirements().GetResources())
	}
	var found bool
	for _, c := range rsp.GetConditions() {
		if c.GetType() == fncall.TypePermitted {
			found = true
			if c.GetReason() != fncall.ReasonForbidden || c.GetMessage() != want || c.GetTarget().String() != "TARGET_COMPOSITE_AND_CLAIM" {
				t.Errorf("condition %v, want Permitted=False Forbidden %q for the claim", c, want)
			}
		}
	}
	if !found {
		t.Errorf("no %s condition in %v", fncall.TypePermitted, rsp.GetConditions())
	}
}
