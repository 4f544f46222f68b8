package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestStackIsolationLifecycle is scenarios 1, 2 and 6 of the end-to-end issue: an organization's claim in
// stack isolation with two stacks becomes its pools with the right names, labels, taints, tags and owners;
// the claim is Ready once Karpenter reports the pools Ready; adding and removing a stack touches only that
// stack's objects; and with nothing changed, nothing composed is rewritten.
func TestStackIsolationLifecycle(t *testing.T) {
	besideOthersT(t)
	useReferenceObjectsT(t)
	tn := tenant{Namespace: "e2e-acme", Name: "acme", Organization: "acme", Isolation: "stack", Stacks: []string{"web", "jobs"}}
	env.ApplyT(t, tn.claim())
	xr := tn.xrName(t)

	step(t, "ThePoolsAppearWithTheirNamesLabelsTaintsTagsAndOwner", func(t *testing.T) {
		for _, stack := range tn.Stacks {
			pool := tn.pool(stack)
			np := env.Cluster.WaitForT(t, 60*time.Second, NodePoolKind, "", pool, nil)
			nc := env.Cluster.WaitForT(t, 60*time.Second, EC2NodeClassKind, "", pool, nil)

			wantLabels := map[string]string{"app.kubernetes.io/managed-by": "kiso", "kiso.dev/organization": "acme", "kiso.dev/stack": stack, "kiso.dev/customer": "acme-corp"}
			for _, o := range []*unstructured.Unstructured{np, nc} {
				if diff := cmp.Diff(wantLabels, withoutCrossplaneLabels(o.GetLabels())); diff != "" {
					t.Errorf("%s %s labels: -want, +got:\n%s", o.GetKind(), pool, diff)
				}
				owner := metav1.GetControllerOf(o)
				if owner == nil || owner.Kind != "XKarpenterIsolation" || owner.Name != xr {
					t.Errorf("%s %s: controller owner %v, want the XR %s", o.GetKind(), pool, owner, xr)
				}
			}
			wantTaints := []any{
				map[string]any{"key": "platform.example.com/dedicated", "value": "tenants", "effect": "NoSchedule"},
				map[string]any{"key": "kiso.dev/organization", "value": "acme", "effect": "NoSchedule"},
				map[string]any{"key": "kiso.dev/stack", "value": stack, "effect": "NoSchedule"},
			}
			if diff := cmp.Diff(wantTaints, nested(np, "spec", "template", "spec", "taints")); diff != "" {
				t.Errorf("NodePool %s taints (the reference's own kept, in order): -want, +got:\n%s", pool, diff)
			}
			wantStartup := []any{map[string]any{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}}
			if diff := cmp.Diff(wantStartup, nested(np, "spec", "template", "spec", "startupTaints")); diff != "" {
				t.Errorf("NodePool %s startup taints: -want, +got:\n%s", pool, diff)
			}
			wantRef := map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool}
			if diff := cmp.Diff(wantRef, nested(np, "spec", "template", "spec", "nodeClassRef")); diff != "" {
				t.Errorf("NodePool %s nodeClassRef: -want, +got:\n%s", pool, diff)
			}
			wantTags := map[string]any{"platform.example.com/team": "platform", "cost-center": "42", "kiso.dev/organization": "acme", "kiso.dev/stack": stack, "kiso.dev/customer": "acme-corp"}
			if diff := cmp.Diff(wantTags, nested(nc, "spec", "tags")); diff != "" {
				t.Errorf("EC2NodeClass %s tags: -want, +got:\n%s", pool, diff)
			}
		}

	})

	step(t, "TheClaimIsReadyOnceKarpenterReportsThePoolsReadyAndNotBefore", func(t *testing.T) {
		claim := env.Cluster.GetT(t, IsolationClaimKind, tn.Namespace, tn.Name)
		if c, _ := Condition(claim, "Ready"); c.Status == "True" {
			t.Errorf("claim Ready before any pool is Ready")
		}
		for _, stack := range tn.Stacks {
			markPoolReady(t, tn.pool(stack))
		}
		claim = env.Cluster.WaitForConditionT(t, 90*time.Second, IsolationClaimKind, tn.Namespace, tn.Name, "Ready")
		if diff := cmp.Diff(map[string]any{nodeOrganizationKey: "acme", nodeStackKey: "web"}, nested(claim, "status", "stacks", "0", "nodeSelector")); diff != "" {
			t.Errorf("claim status.stacks[0].nodeSelector: -want, +got:\n%s", diff)
		}

	})

	selector := "kiso.dev/organization=acme"
	var after map[string]map[string]string
	step(t, "ReconcilesWithNothingChangedRewriteNothing", func(t *testing.T) {
		touchXR(t, xr)
		before := map[string]map[string]string{"NodePool": versions(t, NodePoolKind, selector), "EC2NodeClass": versions(t, EC2NodeClassKind, selector)}
		for range 3 {
			touchXR(t, xr)
		}
		after = map[string]map[string]string{"NodePool": versions(t, NodePoolKind, selector), "EC2NodeClass": versions(t, EC2NodeClassKind, selector)}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("composed objects changed across reconciles with nothing changed: -before, +after:\n%s", diff)
		}

	})

	var added map[string]string
	step(t, "AddingAStackAddsItsPoolAndTouchesNoOther", func(t *testing.T) {
		tn.Stacks = []string{"web", "jobs", "search"}
		env.ApplyT(t, tn.claimOnly())
		env.Cluster.WaitForT(t, 60*time.Second, NodePoolKind, "", tn.pool("search"), nil)
		markPoolReady(t, tn.pool("search"))
		env.Cluster.WaitForConditionT(t, 90*time.Second, IsolationClaimKind, tn.Namespace, tn.Name, "Ready")
		added = versions(t, NodePoolKind, selector)
		for _, stack := range []string{"web", "jobs"} {
			if added[tn.pool(stack)] != after["NodePool"][tn.pool(stack)] {
				t.Errorf("adding a stack rewrote NodePool %s", tn.pool(stack))
			}
		}

	})

	step(t, "RemovingAStackRemovesOnlyItsObjects", func(t *testing.T) {
		// Once every remaining pool is Ready, which they are.
		nodeClasses := versions(t, EC2NodeClassKind, selector)
		tn.Stacks = []string{"web", "search"}
		env.ApplyT(t, tn.claimOnly())
		env.Cluster.WaitForDeletionT(t, 90*time.Second, NodePoolKind, "", tn.pool("jobs"))
		env.Cluster.WaitForDeletionT(t, 90*time.Second, EC2NodeClassKind, "", tn.pool("jobs"))
		remainingPools, remainingClasses := versions(t, NodePoolKind, selector), versions(t, EC2NodeClassKind, selector)
		for _, stack := range []string{"web", "search"} {
			pool := tn.pool(stack)
			if remainingPools[pool] != added[pool] {
				t.Errorf("removing stack jobs rewrote NodePool %s: %s -> %s", pool, added[pool], remainingPools[pool])
			}
			if remainingClasses[pool] != nodeClasses[pool] {
				t.Errorf("removing stack jobs rewrote EC2NodeClass %s: %s -> %s", pool, nodeClasses[pool], remainingClasses[pool])
			}
		}

	})

	env.DeleteT(t, tn.claim())
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", xr)
}

// TestForeignNodePoolIsNeverAdopted is scenario 3: a platform-owned NodePool already holds a name kiso would
// use. The claim says so, naming it, and the platform's NodePool is byte-for-byte unchanged.
func TestForeignNodePoolIsNeverAdopted(t *testing.T) {
	besideOthersT(t)
	useReferenceObjectsT(t)
	platform := []byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: kiso-umbrella
  labels:
    platform.example.com/owner: platform-team
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: tenant-reference
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: [on-demand]
`)
	env.ApplyT(t, platform)
	before := env.Cluster.GetT(t, NodePoolKind, "", "kiso-umbrella")

	tn := tenant{Namespace: "e2e-umbrella", Name: "umbrella", Organization: "umbrella", Isolation: "organization", Stacks: []string{"labs"}}
	env.ApplyT(t, tn.claim())
	xr := tn.xrName(t)
	want := `NodePool "kiso-umbrella" already exists and is not composed by this XKarpenterIsolation; kiso never adopts or overwrites an object it did not create`
	claim := env.Cluster.WaitForT(t, 60*time.Second, IsolationClaimKind, tn.Namespace, tn.Name, func(u *unstructured.Unstructured) (bool, string) {
		c, ok := Condition(u, "NamesAvailable")
		if !ok || c.Status != "False" {
			return false, "no NamesAvailable=False yet: " + conditionSummary(u)
		}
		return true, ""
	})
	if c, _ := Condition(claim, "NamesAvailable"); c.Reason != "NameConflict" || c.Message != want {
		t.Errorf("claim condition NamesAvailable: reason %q message %q; want NameConflict, %q", c.Reason, c.Message, want)
	}
	// The claim's Synced is about the claim itself; the XR's says its pipeline stopped on the conflict.
	if c, _ := Condition(env.Cluster.GetT(t, IsolationKind, "", xr), "Synced"); c.Status != "False" || !strings.Contains(c.Message, want) {
		t.Errorf("XR condition Synced: %s %q; want False naming the NodePool", c.Status, c.Message)
	}

	// Give Crossplane a few more reconciles to do anything it would do, then compare.
	touchXR(t, xr)
	after := env.Cluster.GetT(t, NodePoolKind, "", "kiso-umbrella")
	if diff := cmp.Diff(before.Object, after.Object); diff != "" {
		t.Errorf("the platform's NodePool changed: -before, +after:\n%s", diff)
	}
	if _, err := env.Cluster.Get(context.Background(), EC2NodeClassKind, "", "kiso-umbrella"); err == nil {
		t.Errorf("kiso rendered an EC2NodeClass beside a NodePool it refused to overwrite")
	}

	env.DeleteT(t, tn.claim())
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", xr)
	after = env.Cluster.GetT(t, NodePoolKind, "", "kiso-umbrella")
	if diff := cmp.Diff(before.Object, after.Object); diff != "" {
		t.Errorf("deleting the claim changed the platform's NodePool: -before, +after:\n%s", diff)
	}
	env.DeleteT(t, platform)
}

// TestDeletingAClaimLeavesNothingBehind is scenario 4: deleting a claim garbage-collects every object it
// composed, and nothing else in the cluster changes.
func TestDeletingAClaimLeavesNothingBehind(t *testing.T) {
	useReferenceObjectsT(t)
	// Earlier tests' pools may still be on their way out (garbage collection runs after their XR is gone);
	// their going is not this claim's doing.
	waitForGarbageCollectionT(t)
	others := func() map[string]map[string]string {
		return map[string]map[string]string{
			"NodePool":     versions(t, NodePoolKind, "kiso.dev/organization!=initech"),
			"EC2NodeClass": versions(t, EC2NodeClassKind, "kiso.dev/organization!=initech"),
		}
	}
	before := others()

	tn := tenant{Namespace: "e2e-initech", Name: "initech", Organization: "initech", Isolation: "stack", Stacks: []string{"tps", "printer"}}
	env.ApplyT(t, tn.claim())
	xr := tn.xrName(t)
	for _, stack := range tn.Stacks {
		env.Cluster.WaitForT(t, 60*time.Second, NodePoolKind, "", tn.pool(stack), nil)
	}
	composed := env.Cluster.GetT(t, IsolationKind, "", xr)
	refs, _, _ := unstructured.NestedSlice(composed.Object, "spec", "resourceRefs")
	if len(refs) == 0 {
		t.Fatalf("XR %s lists no composed resources", xr)
	}

	env.DeleteT(t, tn.claimOnly())
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", xr)
	for _, r := range refs {
		ref := r.(map[string]any)
		gvk := schema.FromAPIVersionAndKind(ref["apiVersion"].(string), ref["kind"].(string))
		env.Cluster.WaitForDeletionT(t, 90*time.Second, gvk, "", ref["name"].(string))
	}
	if diff := cmp.Diff(before, others()); diff != "" {
		t.Errorf("deleting a claim changed objects it did not compose: -before, +after:\n%s", diff)
	}
	env.DeleteT(t, tn.claim())
}

// waitForGarbageCollectionT waits until no NodePool or EC2NodeClass is being deleted or still controlled by
// an XKarpenterIsolation that is gone.
func waitForGarbageCollectionT(t *testing.T) {
	t.Helper()
	err := waitFor(context.Background(), 90*time.Second, "garbage collection of deleted organizations' pools", func(ctx context.Context) (bool, string, error) {
		for _, gvk := range []schema.GroupVersionKind{NodePoolKind, EC2NodeClassKind} {
			objects, err := env.Cluster.List(ctx, gvk, "", "")
			if err != nil {
				return false, "", err
			}
			for _, o := range objects {
				if o.GetDeletionTimestamp() != nil {
					return false, gvk.Kind + " " + o.GetName() + " is being deleted", nil
				}
				owner := metav1.GetControllerOf(&o)
				if owner == nil || owner.Kind != IsolationKind.Kind {
					continue
				}
				if _, err := env.Cluster.Get(ctx, IsolationKind, "", owner.Name); err == nil {
					continue
				}
				return false, gvk.Kind + " " + o.GetName() + " outlives its XR " + owner.Name, nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
