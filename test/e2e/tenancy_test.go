package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ConfigMapKind is the kind of the kiso-placement object in each namespace an organization serves.
var ConfigMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// TestNamespaceOfAnotherOrganizationIsRefused proves on a real control plane that a namespace belongs to one
// organization: the namespace's kiso-placement ConfigMap tells its teams what their pods carry, and a claim
// that lists a namespace another organization serves is refused with a condition naming the field and that
// organization, while nothing of the serving organization changes. A namespace created after the claim gets
// its ConfigMap then, without anything else waiting for it.
func TestNamespaceOfAnotherOrganizationIsRefused(t *testing.T) {
	useReferenceObjectsT(t)
	wayne := tenant{Namespace: "e2e-wayne", Name: "wayne", Organization: "wayne", Isolation: "stack", Stacks: []string{"gotham"}}
	env.ApplyT(t, wayne.claim())
	wayneXR := wayne.xrName(t)
	env.Cluster.WaitForT(t, 60*time.Second, NodePoolKind, "", wayne.pool("gotham"), nil)

	// The stack's namespace appears after the claim; its ConfigMap follows.
	gotham := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: wayne-gotham\n")
	env.ApplyT(t, gotham)
	t.Cleanup(func() { deleteAtCleanup(t, gotham) })
	cm := env.Cluster.WaitForT(t, 90*time.Second, ConfigMapKind, "wayne-gotham", "kiso-placement", nil)
	wantData := map[string]any{
		"organization": "wayne", "stack": "gotham", "pool": "kiso-wayne.gotham",
		"nodeSelector": `{"kiso.dev/organization":"wayne","kiso.dev/stack":"gotham"}`,
		"tolerations": `[{"key":"kiso.dev/organization","operator":"Equal","value":"wayne","effect":"NoSchedule"},` +
			`{"key":"kiso.dev/stack","operator":"Equal","value":"gotham","effect":"NoSchedule"}]`,
	}
	if diff := cmp.Diff(wantData, nested(cm, "data")); diff != "" {
		t.Errorf("ConfigMap wayne-gotham/kiso-placement data: -want, +got:\n%s", diff)
	}

	// Crossplane labels the NodeClass in use once the Usage is ready: its write, not kiso's, done before the baseline.
	waitForUsageT(t, wayne.pool("gotham"))
	selector := "kiso.dev/organization=wayne"
	snapshot := func() map[string]map[string]string {
		return map[string]map[string]string{
			"NodePool":     versions(t, NodePoolKind, selector),
			"EC2NodeClass": versions(t, EC2NodeClassKind, selector),
			"ConfigMap":    versions(t, ConfigMapKind, selector),
		}
	}
	before := snapshot()

	lex := tenant{Namespace: "e2e-lex", Name: "lex", Organization: "lex", Isolation: "stack", Stacks: []string{"metropolis"},
		Namespaces: map[string][]string{"metropolis": {"lex-metropolis", "wayne-gotham"}}}
	env.ApplyT(t, lex.claim())
	lexXR := lex.xrName(t)
	want := `spec.stacks[0].namespaces[1]: Invalid value: "wayne-gotham": namespace is served by organization "wayne" (XKarpenterIsolation ` +
		wayneXR + `); a namespace's pods run on one organization's pools only`
	claim := env.Cluster.WaitForT(t, 60*time.Second, IsolationClaimKind, lex.Namespace, lex.Name, func(u *unstructured.Unstructured) (bool, string) {
		c, ok := Condition(u, "NamesAvailable")
		return ok && c.Status == "False", "no NamesAvailable=False yet: " + conditionSummary(u)
	})
	if c, _ := Condition(claim, "NamesAvailable"); c.Reason != "NameConflict" || c.Message != want {
		t.Errorf("claim condition NamesAvailable: reason %q message %q;\nwant NameConflict, %q", c.Reason, c.Message, want)
	}

	// Let Crossplane reconcile both again, then check that neither organization got anything new.
	touchXR(t, lexXR)
	touchXR(t, wayneXR)
	if _, err := env.Cluster.Get(context.Background(), NodePoolKind, "", lex.pool("metropolis")); err == nil {
		t.Errorf("the refused organization got a NodePool")
	}
	if diff := cmp.Diff(before, snapshot()); diff != "" {
		t.Errorf("the serving organization's objects changed: -before, +after:\n%s", diff)
	}

	env.DeleteT(t, lex.claim())
	env.DeleteT(t, wayne.claim())
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", lexXR)
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", wayneXR)
	env.Cluster.WaitForDeletionT(t, 60*time.Second, ConfigMapKind, "wayne-gotham", "kiso-placement")
}
