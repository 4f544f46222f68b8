package main

import (
	"slices"
	"testing"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
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
