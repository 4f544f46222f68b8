package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// poolWithEveryUsage is a pool with every Usage a pool can have: a Dedicated node role and a cluster.
func poolWithEveryUsage() (v1alpha1.XKarpenterIsolationSpec, pool, usedObjects) {
	spec := v1alpha1.XKarpenterIsolationSpec{NodeRole: v1alpha1.NodeRoleDedicated, ClusterRef: &v1alpha1.ClusterReference{Name: "prod-eu"}}
	used := usedObjects{NodeRole: "kiso-acme-node", NodeProfile: "kiso-acme-node"}
	return spec, pool{Name: "kiso-acme"}, used
}

// A draining pool's objects are left to their deletion by name (withoutPools, planTransition): every Usage a
// pool can have must be among them, or a draining pool would keep one rendered onto a pool being deleted.
func TestPoolObjectNamesCoverEveryUsage(t *testing.T) {
	spec, p, used := poolWithEveryUsage()
	names := poolObjectNames(p)
	usages := poolUsages(spec, p, used)
	if len(usages) != 4 {
		t.Fatalf("poolUsages composed %d Usages, want 4 (NodeClass, node role, instance profile, cluster)", len(usages))
	}
	for _, u := range usages {
		if !slices.Contains(names, u.Resource) {
			t.Errorf("Usage %s (%s) is not among the pool's object names %v", u.Resource, u.Name, names)
		}
	}
}

// Karpenter keeps no finalizer on a NodePool: deleted, it goes at once while its NodeClaims still drain. The
// NodeClass is what Karpenter holds until its last NodeClaim is gone, so every object outside the pool (the
// identity, the cluster, which keeps the controller role and Karpenter's Release) must be used by the NodeClass.
func TestObjectsOutsideThePoolAreUsedByItsNodeClass(t *testing.T) {
	spec, p, used := poolWithEveryUsage()
	nodeClass := usage.RefOf(nodeClassGVK(spec.NodeClassRef), p.Name)
	for _, u := range poolUsages(spec, p, used) {
		if u.Of == nodeClass {
			if u.By.Kind != nodePoolKind || u.By.Name != p.Name {
				t.Errorf("Usage %s of the NodeClass is by %s %s, want the pool's NodePool", u.Name, u.By.Kind, u.By.Name)
			}
			continue
		}
		if u.By != nodeClass {
			t.Errorf("Usage %s of %s %s is by %s %s, want the pool's NodeClass %s", u.Name, u.Of.Kind, u.Of.Name, u.By.Kind, u.By.Name, nodeClass.Kind)
		}
	}
}

// Releases before this one composed, per pool, a Usage of the cluster's controller role and of Karpenter's
// Release. Upgraded, an organization stops composing them (Crossplane deletes them: nothing uses a Usage) and
// changes nothing else: every other object is rendered as before, and the pools stay settled.
func TestUpgradeDropsThePoolsUsagesOfTheClustersObjects(t *testing.T) {
	spec := strings.Replace(orgSpec, `"nodeClassRef"`, `"clusterRef":{"name":"prod"},"nodeClassRef"`, 1)
	installed := strings.Replace(clusterXR, `"status":{`, `"status":{"karpenterReleaseResource":"prod-eu-karpenter-release",`, 1)
	world := cluster{refNodeClass, refNodePool, installed, namespace("acme-web"), namespace("acme-jobs")}
	current := composedIn(t, spec, world, true)
	observed := maps.Clone(current)
	legacy := map[string]usage.Ref{
		"usage-kiso-acme-controller-role": {APIVersion: "iam.aws.upbound.io/v1beta1", Kind: "Role", Name: "prod-eu-karpenter-controller"},
		"usage-kiso-acme-karpenter":       {APIVersion: "helm.crossplane.io/v1beta1", Kind: "Release", Name: "prod-eu-karpenter-release"},
	}
	for name, of := range legacy {
		u := usage.Usage{Name: "kiso-acme-" + name, Of: of, By: usage.RefOf(nodeClassGVK(v1alpha1.NodeClassReference{}), "kiso-acme")}
		observed[name] = fntest.ToJSON(t, u.Render(nil).Object)
	}

	rsp := run(t, newRequest(t, input, xr(spec), observed), world)
	fntest.AssertNoFatal(t, rsp)
	got := observedAfter(t, rsp, true)
	for name := range legacy {
		if _, ok := got[name]; ok {
			t.Errorf("%s still composed after the upgrade", name)
		}
	}
	if diff := cmp.Diff(current, got); diff != "" {
		t.Errorf("upgraded with the pool's Usages of the controller role and the Release: -without them, +rendered:\n%s", diff)
	}
	assertCondition(t, rsp, TypePoolsSettled, fnv1.Status_STATUS_CONDITION_TRUE, ReasonSettled, "")
}
