package e2e

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestANamespaceFollowsThePlatformsLabel proves on a real control plane that a namespace is an
// organization's because the platform labels it so, never because a claim lists it: the namespace's
// kiso-placement ConfigMap tells its teams what their pods carry once it exists and is labelled; a claim that
// lists a namespace another organization is given gets nothing there, says so on its claim, and nothing of
// the other organization changes; and when the platform relabels the namespace, the grant moves: the first
// organization withdraws its objects and the second composes its own.
func TestANamespaceFollowsThePlatformsLabel(t *testing.T) {
	besideOthersT(t)
	useReferenceObjectsT(t)
	wayne := tenant{Namespace: "e2e-wayne", Name: "wayne", Organization: "wayne", Isolation: "stack", Stacks: []string{"gotham"}}
	env.ApplyT(t, wayne.claim())
	wayneXR := wayne.xrName(t)
	env.Cluster.WaitForT(t, 60*time.Second, NodePoolKind, "", wayne.pool("gotham"), nil)

	// The stack's namespace appears after the claim, given to wayne; its ConfigMap follows.
	gotham := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: wayne-gotham\n  labels: {kiso.dev/organization: wayne}\n")
	env.ApplyT(t, gotham)
	t.Cleanup(func() { deleteAtCleanup(t, gotham) })
	cm := env.Cluster.WaitForT(t, 90*time.Second, ConfigMapKind, "wayne-gotham", "kiso-placement", nil)
	wantData := map[string]any{
		"organization": "wayne", "stack": "gotham", "pool": "kiso-wayne.gotham",
		"nodeSelector": `{"node-restriction.kubernetes.io/kiso.dev.organization":"wayne","node-restriction.kubernetes.io/kiso.dev.stack":"gotham"}`,
		"tolerations": `[{"key":"kiso.dev/organization","operator":"Equal","value":"wayne","effect":"NoSchedule"},` +
			`{"key":"kiso.dev/stack","operator":"Equal","value":"gotham","effect":"NoSchedule"}]`,
	}
	if diff := cmp.Diff(wantData, nested(cm, "data")); diff != "" {
		t.Errorf("ConfigMap wayne-gotham/kiso-placement data: -want, +got:\n%s", diff)
	}
	env.Cluster.WaitForT(t, 90*time.Second, RBACRoleKind, "wayne-gotham", "kiso-placement", nil)
	// The claim's own namespace is wayne's too (the platform labels it so the claim may claim wayne), but no stack
	// lists it: it gets no grant, and the claim names it, without counting it against the namespaces it lists.
	assertClaimConditionT(t, wayne, "NamespacesListed", "ClaimNamespaceUnlisted",
		"every namespace the platform gives organization wayne is listed under a stack but e2e-wayne, where the claim is: it holds the claim, "+
			"and admission refuses every pod in it, in Warn mode too (list it under a stack to run pods there)")
	if _, err := env.Cluster.Get(t.Context(), RBACRoleKind, "e2e-wayne", "kiso-placement"); err == nil {
		t.Errorf("namespace e2e-wayne, which no stack lists, holds a Role kiso-placement")
	}

	selector := "kiso.dev/organization=wayne"
	snapshot := func() map[string]map[string]string {
		return map[string]map[string]string{
			"NodePool":     versions(t, NodePoolKind, selector),
			"EC2NodeClass": versions(t, EC2NodeClassKind, selector),
			"ConfigMap":    versions(t, ConfigMapKind, selector),
			"Role":         versions(t, RBACRoleKind, selector),
		}
	}
	before := snapshot()

	lex := tenant{Namespace: "e2e-lex", Name: "lex", Organization: "lex", Isolation: "stack", Stacks: []string{"metropolis"},
		Namespaces: map[string][]string{"metropolis": {"lex-metropolis", "wayne-gotham"}}}
	env.ApplyT(t, lex.claim())
	lexXR := lex.xrName(t)
	assertClaimConditionT(t, lex, "NamespacesAssigned", "NotAssigned",
		"namespaces lex-metropolis, wayne-gotham are not labelled kiso.dev/organization=lex by the platform (or do not exist yet): their pods get no grant to the organization's nodes until the platform labels them")

	// Let Crossplane reconcile both again, then check that lex got nothing in wayne's namespace and wayne lost nothing.
	touchXR(t, lexXR)
	touchXR(t, wayneXR)
	if diff := cmp.Diff(before, snapshot()); diff != "" {
		t.Errorf("the serving organization's objects changed: -before, +after:\n%s", diff)
	}
	if n := len(env.Cluster.ListT(t, RBACRoleKind, "wayne-gotham", "kiso.dev/organization=lex")); n != 0 {
		t.Errorf("lex got %d Roles in wayne-gotham by listing it", n)
	}

	// The platform gives the namespace to lex: wayne withdraws its grant, lex composes its own.
	env.TryT(t, nil, "label", "namespace", "wayne-gotham", "--overwrite", "kiso.dev/organization=lex")
	env.Cluster.WaitForT(t, xrSettleTimeout, RBACRoleKind, "wayne-gotham", "kiso-placement", func(u *unstructured.Unstructured) (bool, string) {
		return u.GetLabels()["kiso.dev/organization"] == "lex", "held by " + u.GetLabels()["kiso.dev/organization"]
	})
	assertClaimConditionT(t, wayne, "NamespacesAssigned", "NotAssigned", "")

	env.DeleteT(t, lex.claim())
	env.DeleteT(t, wayne.claim())
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", lexXR)
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", wayneXR)
	env.Cluster.WaitForDeletionT(t, 60*time.Second, ConfigMapKind, "wayne-gotham", "kiso-placement")
}
