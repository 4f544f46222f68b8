package main

import (
	"strings"
	"testing"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// Without examples/rbac/crossplane-karpenter.yaml, Crossplane may not apply the placement policies: its error
// reaches only the XR's Synced condition. The next call stops and changes nothing: the AWS objects already
// composed stay exactly as they are.
func TestRefusedCrossplaneStopsAndChangesNothing(t *testing.T) {
	observed := map[string]string{}
	for name, o := range fntest.Desired(t, run(t, newRequest(t, xr(podIdentitySpec), nil))) {
		observed[name] = fntest.ToJSON(t, o)
	}
	forbidden := `cannot compose resources: cannot apply composed resource \"placement-policy\": validatingadmissionpolicies.admissionregistration.k8s.io \"kiso-placement\" is forbidden: User \"system:serviceaccount:crossplane-system:crossplane\" cannot patch resource \"validatingadmissionpolicies\" in API group \"admissionregistration.k8s.io\" at the cluster scope`
	x := strings.TrimSuffix(xr(podIdentitySpec), "}") + `,"status":{"conditions":[{"type":"Synced","status":"False","reason":"ReconcileError","message":"` + forbidden + `","lastTransitionTime":"2026-12-01T12:00:00Z"}]}}`
	rsp := run(t, newRequest(t, x, observed))

	want := fncall.Refusal{User: "system:serviceaccount:crossplane-system:crossplane", Verb: "patch", Resource: "validatingadmissionpolicies", Group: "admissionregistration.k8s.io"}.Message()
	fntest.AssertChangesNothing(t, rsp, want, observed)
	conditions := map[string]string{}
	for _, c := range rsp.GetConditions() {
		conditions[c.GetType()] = c.GetStatus().String() + " " + c.GetReason()
	}
	if got := conditions[fncall.TypePermitted]; got != "STATUS_CONDITION_FALSE "+fncall.ReasonForbidden {
		t.Errorf("%s condition %q, want False %s", fncall.TypePermitted, got, fncall.ReasonForbidden)
	}
}
