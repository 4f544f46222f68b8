package main

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

func TestUnmarkedReferenceIsRefused(t *testing.T) {
	privileged := strings.Replace(refNodePool, `"labels":{"kiso.dev/reference":"true"}`, `"labels":{"team":"platform"}`, 1)
	rsp := run(t, newRequest(t, input, xr(orgSpec), composedOrg(t, true)), cluster{refNodeClass, privileged})
	want := `spec.nodePoolRef.name: Forbidden: NodePool "default" is not a reference: a platform marks the NodePools tenants may clone with the label kiso.dev/reference: "true" (or lists them in the function input)`
	assertFatal(t, rsp, want)
	assertCondition(t, rsp, fncall.TypeSpecValid, fnv1.Status_STATUS_CONDITION_FALSE, fncall.ReasonInvalidSpec, want)
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("returned %d desired resources with a fatal result: nothing may be rendered from an unmarked reference", n)
	}

	// Listed in the function input, it may be cloned.
	listed := `{"apiVersion":"isolation.fn.kiso.dev/v1alpha1","kind":"Input","references":{"nodePools":["default"]}}`
	fntest.AssertNoFatal(t, run(t, newRequest(t, listed, xr(orgSpec), nil), cluster{refNodeClass, privileged}))
}
