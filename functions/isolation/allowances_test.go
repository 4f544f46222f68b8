package main

import (
	"strings"
	"testing"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// TestWhatThePlatformAllowsAnOrganization: a reference kept for organizations the platform lists is cloned by
// each of them; an organization that asks for no limit gets the most its cluster allows (spec.organizationLimits)
// on every pool, and one that asks for less keeps its own. The refusals are in TestBadInputChangesNothing.
func TestWhatThePlatformAllowsAnOrganization(t *testing.T) {
	kept := strings.Replace(refNodeClass, `"labels":{"kiso.dev/reference":"true"}`, `"labels":{"kiso.dev/reference":"true"},"annotations":{"kiso.dev/organizations":"globex,acme"}`, 1)
	capped := strings.Replace(clusterXR, `"partition":"aws",`, `"partition":"aws","organizationLimits":{"cpu":1000,"nodes":50},`, 1)
	bound := strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeClassRef"`, 1)

	rsp := run(t, newRequest(t, input, xr(bound), nil), cluster{kept, refNodePool, capped})
	fntest.AssertNoFatal(t, rsp)
	pool := fntest.Desired(t, rsp)["nodepool-kiso-acme"]
	if pool == nil {
		t.Fatalf("no NodePool kiso-acme among %v", fntest.Desired(t, rsp))
	}
	if got := fntest.Dig(pool, "spec", "limits"); fntest.ToJSON(t, got) != `{"cpu":1000,"memory":"4000Gi","nodes":"50"}` {
		t.Errorf("an organization without limits gets NodePool limits %v, want the cluster's ceiling (cpu 1000, nodes 50) beside the reference's memory", fntest.ToJSON(t, got))
	}

	own := strings.Replace(bound, `"nodeClassRef"`, `"limits":{"cpu":"200"},"nodeClassRef"`, 1)
	rsp = run(t, newRequest(t, input, xr(own), nil), cluster{kept, refNodePool, capped})
	fntest.AssertNoFatal(t, rsp)
	if got := fntest.Dig(fntest.Desired(t, rsp)["nodepool-kiso-acme"], "spec", "limits"); fntest.ToJSON(t, got) != `{"cpu":"200","memory":"4000Gi","nodes":"50"}` {
		t.Errorf("an organization asking for 200 CPUs gets NodePool limits %v, want its own cpu and the cluster's nodes", got)
	}
}
