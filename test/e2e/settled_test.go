package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestASettledOrganizationSeesEachChangeAtOnce proves that what wakes a settled organization is the change
// itself, not a poll or a TTL: with Crossplane at its default poll and no touch of the XR, each change the
// organization reads reaches it within a minute of being made, though its last call asked for the hour. Each change
// is made to an organization of its own, so the steps run side by side: each first waits for its organization to
// settle, a minute or more, and a change to one organization must not be what wakes another.
func TestASettledOrganizationSeesEachChangeAtOnce(t *testing.T) {
	// Its Warn-mode step reads PlacementEnforced, which the local cluster's placement policies decide.
	sharingPlacementClusterT(t)
	// References of its own: one step edits a reference NodePool, which scenarios beside it would clone; that
	// step's organization clones a pair no other organization does.
	for _, name := range []string{settledReference, editedReference} {
		references := []byte(strings.ReplaceAll(string(readTestdataT(t, "isolation", "references.yaml")), "tenant-reference", name))
		env.ApplyT(t, references)
		t.Cleanup(func() { deleteAtCleanup(t, references) })
	}

	stepBeside(t, "ANamespaceThePlatformLabels", func(t *testing.T) {
		o := settleOrganizationT(t, "sterling", settledReference, false)
		reachesSettledT(t, o.xr, "the platform's label on namespace "+o.more, func() {
			env.TryT(t, nil, "label", "namespace", o.more, "kiso.dev/organization="+o.Organization)
		}, o.ownRole, o.role(t, o.more))
	})

	stepBeside(t, "ARoleATenantAdminDeletes", func(t *testing.T) {
		o := settleOrganizationT(t, "sterling-admin", settledReference, false)
		before := env.Cluster.GetT(t, RBACRoleKind, o.web, "kiso-placement")
		reachesSettledT(t, o.xr, "the tenant admin's deletion of Role "+o.web+"/kiso-placement", func() {
			if out := env.TryT(t, nil, "delete", "role", "kiso-placement", "-n", o.web, "--as="+o.admin); out.ExitCode != 0 {
				t.Fatalf("the tenant admin cannot delete the Role: %s", out.Stderr)
			}
		}, func(u *unstructured.Unstructured) (bool, string) {
			return u.GetUID() != before.GetUID(), "not composed again yet"
		}, o.role(t, o.web))
	})

	stepBeside(t, "AReferenceThePlatformEdits", func(t *testing.T) {
		o := settleOrganizationT(t, "sterling-edit", editedReference, false)
		editReferenceNodePoolT(t, o.xr, env.Kubectl, env.Cluster, editedReference, o.pool, "")
		// Karpenter would report the edited pool Ready again at its new generation.
		markPoolReady(t, o.pool)
	})

	stepBeside(t, "ANamespaceThePlatformGivesToAnother", func(t *testing.T) {
		o := settleOrganizationT(t, "sterling-given", settledReference, true)
		before := env.Cluster.GetT(t, RBACRoleKind, o.more, "kiso-placement")
		reachesSettledT(t, o.xr, "the platform's relabelling of namespace "+o.more, func() {
			env.TryT(t, nil, "label", "namespace", o.more, "--overwrite", "kiso.dev/organization=nobody")
		}, func(u *unstructured.Unstructured) (bool, string) {
			return u.GetUID() != before.GetUID() || u.GetDeletionTimestamp() != nil, o.Organization + "'s Role is still in force"
		}, func(timeout time.Duration, check func(*unstructured.Unstructured) (bool, string)) {
			waitForT(t, timeout, o.Organization+"'s Role in "+o.more+" withdrawn", func(ctx context.Context) (bool, string, error) {
				u, err := env.Cluster.Get(ctx, RBACRoleKind, o.more, "kiso-placement")
				if apierrors.IsNotFound(err) {
					return true, "", nil
				}
				if err != nil {
					return false, "", err
				}
				ok, why := check(u)
				return ok, why, nil
			})
		})
	})

	// Warn mode reads every pod of the organization's namespaces, so each pod's changes wake it (Enforce reads none):
	// what one pod created and deleted costs, in calls of the isolation function, from settled to settled.
	stepBeside(t, "InWarnModeAPodCostsCalls", func(t *testing.T) {
		o := settleOrganizationT(t, "sterling-warn", settledReference, false)
		tn, xr, web := o.tenant, o.xr, o.web
		if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "karpenterisolation", tn.Name, "-n", tn.Namespace, "--type=merge", "-p", `{"spec":{"placement":{"mode":"Warn"}}}`); err != nil {
			t.Fatalf("cannot switch %s to Warn mode: %v", tn.Organization, err)
		}
		env.Cluster.WaitForT(t, xrSettleTimeout, IsolationClaimKind, tn.Namespace, tn.Name, func(u *unstructured.Unstructured) (bool, string) {
			c, _ := Condition(u, "PlacementEnforced")
			return c.Status == "False" && c.Reason == "WarnOnly", "PlacementEnforced " + c.Status + " " + c.Reason
		})
		waitSettledT(t, xr)
		before := callsOfT(t, xr)
		pod := newPod("warned-churn", web, nil)
		if out := submitPod(t, pod, false); out.ExitCode != 0 {
			t.Fatalf("a pod selecting no pool in Warn mode: exit %d %s; want it admitted with a warning", out.ExitCode, out.Stderr)
		}
		warned := func(n int64) func(*unstructured.Unstructured) (bool, string) {
			return func(u *unstructured.Unstructured) (bool, string) {
				got, _, _ := unstructured.NestedInt64(u.Object, "status", "warnedPods")
				return got == n, fmt.Sprintf("status.warnedPods %d", got)
			}
		}
		env.Cluster.WaitForT(t, eventDeadline, IsolationClaimKind, tn.Namespace, tn.Name, warned(1))
		if out := env.TryT(t, nil, "delete", "pod", pod.Name, "-n", pod.Namespace, "--wait=true"); out.ExitCode != 0 {
			t.Fatalf("cannot delete pod %s: %s", pod.Name, out.Stderr)
		}
		env.Cluster.WaitForT(t, eventDeadline, IsolationClaimKind, tn.Namespace, tn.Name, warned(0))
		waitSettledT(t, xr)
		t.Logf("in Warn mode, one pod created and deleted in the organization's namespace cost %d calls of the isolation function (Enforce mode reads no pod)", callsOfT(t, xr)-before)
	})
}
