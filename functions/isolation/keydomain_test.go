package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// otherDomainInput is the function input of a platform that changed its key domain.
const otherDomainInput = `{"apiVersion":"isolation.fn.kiso.dev/v1alpha1","kind":"Input","keyDomain":"formance.com"}`

// TestAKeyDomainChangeReplacesNoNode: an organization whose pools exist renders, once the function's input says
// another key domain, exactly what it rendered before (taints, labels, tags, grants: every object), and says on
// the claim which domain it keeps and why. A pool whose taints and labels changed would be drifted by Karpenter,
// every node of every organization in the same minute.
func TestAKeyDomainChangeReplacesNoNode(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterXR, namespace("acme-web"), namespace("acme-jobs")}
	for name, spec := range map[string]string{"organization": orgSpec, "stack": stackSpec, "every kind": everyKindSpec} {
		t.Run(name, func(t *testing.T) {
			observed := composedIn(t, spec, world, true)
			before := run(t, newRequest(t, input, xr(spec), observed), world)
			after := run(t, newRequest(t, otherDomainInput, xr(spec), observed), world)
			fntest.AssertNoFatal(t, after)
			if diff := cmp.Diff(fntest.Desired(t, before), fntest.Desired(t, after)); diff != "" {
				t.Errorf("composed objects after the input's key domain changed: -before, +after:\n%s", diff)
			}
			c := fntest.Condition(t, after, TypeKeyDomainCurrent)
			if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != ReasonKeyDomainOfPools ||
				!strings.Contains(c.GetMessage(), "formance.com") || !strings.Contains(c.GetMessage(), "kiso.dev") {
				t.Errorf("KeyDomainCurrent: want False %s naming both domains, got %s %s: %s", ReasonKeyDomainOfPools, c.GetStatus(), c.GetReason(), c.GetMessage())
			}
			if c := fntest.Condition(t, before, TypeKeyDomainCurrent); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
				t.Errorf("KeyDomainCurrent as configured: want True, got %s %s: %s", c.GetStatus(), c.GetReason(), c.GetMessage())
			}
		})
	}
}

// TestANewOrganizationTakesItsClustersKeyDomain: an organization with no pool yet, on a cluster whose policies
// check kiso.dev, takes kiso.dev whatever its input says, so that the cluster's policies hold its nodes; with no
// cluster to follow it takes its input's.
func TestANewOrganizationTakesItsClustersKeyDomain(t *testing.T) {
	publishing := strings.Replace(clusterXR, `"status":{`, `"status":{"placement":{"cluster":"prod","keyDomain":"kiso.dev"},`, 1)
	spec := strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeClassRef"`, 1)
	world := cluster{refNodeClass, refNodePool, publishing, namespace("acme-web"), namespace("acme-jobs")}
	rsp := run(t, newRequest(t, otherDomainInput, xr(spec), nil), world)
	fntest.AssertNoFatal(t, rsp)
	taints := fntest.Dig(fntest.Desired(t, rsp)["nodepool-kiso-acme"], "spec", "template", "spec", "taints").([]any)
	if key := taints[len(taints)-1].(map[string]any)["key"]; key != "kiso.dev/organization" {
		t.Errorf("organization taint key: want the cluster's kiso.dev/organization, got %v", key)
	}
	if c := fntest.Condition(t, rsp, TypeKeyDomainCurrent); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != ReasonKeyDomainOfCluster || !strings.Contains(c.GetMessage(), `"prod"`) {
		t.Errorf("KeyDomainCurrent: want False %s naming the cluster, got %s %s: %s", ReasonKeyDomainOfCluster, c.GetStatus(), c.GetReason(), c.GetMessage())
	}

	// The references carry kiso.dev/reference: the input lists them.
	listing := strings.Replace(otherDomainInput, `}`, `,"references":{"nodeClasses":["default"],"nodePools":["default"]}}`, 1)
	alone := run(t, newRequest(t, listing, xr(orgSpec), nil), world)
	fntest.AssertNoFatal(t, alone)
	taints = fntest.Dig(fntest.Desired(t, alone)["nodepool-kiso-acme"], "spec", "template", "spec", "taints").([]any)
	if key := taints[len(taints)-1].(map[string]any)["key"]; key != "formance.com/organization" {
		t.Errorf("organization taint key without a cluster: want the input's formance.com/organization, got %v", key)
	}
}
