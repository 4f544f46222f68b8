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
// organization reads reaches it within a minute of being made, though its last call asked for the hour.
func TestASettledOrganizationSeesEachChangeAtOnce(t *testing.T) {
	// Its Warn-mode step reads PlacementEnforced, which the local cluster's placement policies decide.
	sharingPlacementClusterT(t)
	// References of its own: one step edits the reference NodePool, which scenarios beside it clone.
	references := []byte(strings.ReplaceAll(string(readTestdataT(t, "isolation", "references.yaml")), "tenant-reference", "settled-reference"))
	env.ApplyT(t, references)
	t.Cleanup(func() { deleteAtCleanup(t, references) })
	const web, more = "e2e-sterling-web", "e2e-sterling-more"
	namespaces := []byte(namespaceYAML(web, "sterling") + "---\n" + namespaceYAML(more, "") + "---\n" +
		roleBinding(web, "tenant-admin", "admin", "e2e-sterling-admin"))
	env.ApplyT(t, namespaces)
	t.Cleanup(func() { deleteAtCleanup(t, namespaces) })
	tn := tenant{Namespace: "e2e-sterling", Name: "sterling", Organization: "sterling", Isolation: "stack", Stacks: []string{"web"},
		Namespaces: map[string][]string{"web": {web, more}}}
	claim := []byte(strings.ReplaceAll(string(tn.claim()), "tenant-reference", "settled-reference"))
	env.ApplyT(t, claim)
	t.Cleanup(func() { deleteAtCleanup(t, claim) })
	xr := tn.xrName(t)
	pool := tn.pool("web")
	markPoolReady(t, pool)
	env.Cluster.WaitForConditionT(t, xrSettleTimeout, IsolationClaimKind, tn.Namespace, tn.Name, "Ready")
	role := func(ns string) func(time.Duration, func(*unstructured.Unstructured) (bool, string)) {
		return func(timeout time.Duration, check func(*unstructured.Unstructured) (bool, string)) {
			env.Cluster.WaitForT(t, timeout, RBACRoleKind, ns, "kiso-placement", check)
		}
	}
	ownRole := func(u *unstructured.Unstructured) (bool, string) {
		return u.GetLabels()["kiso.dev/organization"] == "sterling" && u.GetDeletionTimestamp() == nil, "not sterling's"
	}
	role(web)(xrSettleTimeout, ownRole)

	step(t, "ANamespaceThePlatformLabels", func(t *testing.T) {
		reachesSettledT(t, xr, "the platform's label on namespace "+more, func() {
			env.TryT(t, nil, "label", "namespace", more, "kiso.dev/organization=sterling")
		}, ownRole, role(more))
	})

	step(t, "ARoleATenantAdminDeletes", func(t *testing.T) {
		before := env.Cluster.GetT(t, RBACRoleKind, web, "kiso-placement")
		reachesSettledT(t, xr, "the tenant admin's deletion of Role "+web+"/kiso-placement", func() {
			if out := env.TryT(t, nil, "delete", "role", "kiso-placement", "-n", web, "--as=e2e-sterling-admin"); out.ExitCode != 0 {
				t.Fatalf("the tenant admin cannot delete the Role: %s", out.Stderr)
			}
		}, func(u *unstructured.Unstructured) (bool, string) {
			return u.GetUID() != before.GetUID(), "not composed again yet"
		}, role(web))
	})

	step(t, "AReferenceThePlatformEdits", func(t *testing.T) {
		editReferenceNodePoolT(t, xr, env.Kubectl, env.Cluster, "settled-reference", pool, "")
		// Karpenter would report the edited pool Ready again at its new generation.
		markPoolReady(t, pool)
	})

	step(t, "ANamespaceThePlatformGivesToAnother", func(t *testing.T) {
		before := env.Cluster.GetT(t, RBACRoleKind, more, "kiso-placement")
		reachesSettledT(t, xr, "the platform's relabelling of namespace "+more, func() {
			env.TryT(t, nil, "label", "namespace", more, "--overwrite", "kiso.dev/organization=nobody")
		}, func(u *unstructured.Unstructured) (bool, string) {
			return u.GetUID() != before.GetUID() || u.GetDeletionTimestamp() != nil, "sterling's Role is still in force"
		}, func(timeout time.Duration, check func(*unstructured.Unstructured) (bool, string)) {
			waitForT(t, timeout, "sterling's Role in "+more+" withdrawn", func(ctx context.Context) (bool, string, error) {
				u, err := env.Cluster.Get(ctx, RBACRoleKind, more, "kiso-placement")
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
	step(t, "InWarnModeAPodCostsCalls", func(t *testing.T) {
		if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "karpenterisolation", tn.Name, "-n", tn.Namespace, "--type=merge", "-p", `{"spec":{"placement":{"mode":"Warn"}}}`); err != nil {
			t.Fatalf("cannot switch sterling to Warn mode: %v", err)
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
