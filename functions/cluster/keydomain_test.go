package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// TestAKeyDomainChangeKeepsThePolicies: a cluster whose policies exist renders, once the function's input says
// another key domain, exactly what it rendered before, beside Crossplane and in a workload cluster (through
// Objects): its organizations keep the domain their pools carry, and policies checking another would hold none
// of them. The cluster says which domain it keeps and why.
func TestAKeyDomainChangeKeepsThePolicies(t *testing.T) {
	other := `{"apiVersion":"cluster.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":"formance.com"}`
	for name, spec := range map[string]string{"local": podIdentitySpec, "workload cluster": workloadClusterSpec} {
		t.Run(name, func(t *testing.T) {
			observed := map[string]string{}
			for n, o := range fntest.Desired(t, run(t, fntest.Request(input, xr(spec), nil))) {
				observed[n] = fntest.ToJSON(t, o)
			}
			before := run(t, fntest.Request(input, xr(spec), observed))
			after := run(t, fntest.Request(other, xr(spec), observed))
			fntest.AssertNoFatal(t, after)
			if diff := cmp.Diff(fntest.Desired(t, before), fntest.Desired(t, after)); diff != "" {
				t.Errorf("composed objects after the input's key domain changed: -before, +after:\n%s", diff)
			}
			c := fntest.Condition(t, after, TypeKeyDomainCurrent)
			if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != ReasonKeyDomainOfPolicies ||
				!strings.Contains(c.GetMessage(), "formance.com") || !strings.Contains(c.GetMessage(), "kiso.dev") {
				t.Errorf("KeyDomainCurrent: want False %s naming both domains, got %s %s: %s", ReasonKeyDomainOfPolicies, c.GetStatus(), c.GetReason(), c.GetMessage())
			}
			if c := fntest.Condition(t, before, TypeKeyDomainCurrent); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
				t.Errorf("KeyDomainCurrent as configured: want True, got %s %s: %s", c.GetStatus(), c.GetReason(), c.GetMessage())
			}
		})
	}
}
