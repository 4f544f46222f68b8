package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestNamespaceOfAnotherOrganizationIsRefused proves on a real control plane that the isolation function sees
// every organization's XR: a claim that lists a namespace another organization serves is refused with a
// condition naming the field and that organization, and nothing of the serving organization changes.
func TestNamespaceOfAnotherOrganizationIsRefused(t *testing.T) {
	useReferenceObjectsT(t)
	wayne := tenant{Namespace: "e2e-wayne", Name: "wayne", Organization: "wayne", Isolation: "stack", Stacks: []string{"gotham"}}
	env.ApplyT(t, wayne.claim())
	wayneXR := wayne.xrName(t)
	env.Cluster.WaitForT(t, 60*time.Second, IsolationKind, "", wayneXR, func(u *unstructured.Unstructured) (bool, string) {
		stack, _ := nested(u, "status", "stacks", "0").(map[string]any)
		nss, _, _ := unstructured.NestedStringSlice(stack, "namespaces")
		return cmp.Equal(nss, []string{"wayne-gotham"}), "status does not list namespace wayne-gotham yet"
	})
	env.Cluster.WaitForT(t, 60*time.Second, NodePoolKind, "", wayne.pool("gotham"), nil)
	selector := "kiso.dev/organization=wayne"
	before := map[string]map[string]string{
		"NodePool":     versions(t, NodePoolKind, selector),
		"EC2NodeClass": versions(t, EC2NodeClassKind, selector),
	}

	lex := tenant{Namespace: "e2e-lex", Name: "lex", Organization: "lex", Isolation: "stack", Stacks: []string{"metropolis"},
		Namespaces: map[string][]string{"metropolis": {"lex-metropolis", "wayne-gotham"}}}
	env.ApplyT(t, lex.claim())
	lexXR := lex.xrName(t)
	want := `spec.stacks[0].namespaces[1]: Invalid value: "wayne-gotham": namespace is served by organization "wayne" (XKarpenterIsolation ` +
		wayneXR + `, claim e2e-wayne/wayne); a namespace's pods run on one organization's pools only`
	claim := env.Cluster.WaitForT(t, 60*time.Second, IsolationClaimKind, lex.Namespace, lex.Name, func(u *unstructured.Unstructured) (bool, string) {
		c, ok := Condition(u, "SpecValid")
		return ok && c.Status == "False", "no SpecValid=False yet: " + conditionSummary(u)
	})
	if c, _ := Condition(claim, "SpecValid"); c.Reason != "InvalidSpec" || c.Message != want {
		t.Errorf("claim condition SpecValid: reason %q message %q;\nwant InvalidSpec, %q", c.Reason, c.Message, want)
	}

	// Let Crossplane reconcile both again, then check that neither organization got anything new.
	touchXR(t, lexXR, 0)
	touchXR(t, wayneXR, 0)
	if _, err := env.Cluster.Get(context.Background(), NodePoolKind, "", lex.pool("metropolis")); err == nil {
		t.Errorf("the refused organization got a NodePool")
	}
	after := map[string]map[string]string{
		"NodePool":     versions(t, NodePoolKind, selector),
		"EC2NodeClass": versions(t, EC2NodeClassKind, selector),
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("the serving organization's objects changed: -before, +after:\n%s", diff)
	}

	env.DeleteT(t, lex.claim())
	env.DeleteT(t, wayne.claim())
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", lexXR)
	env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", wayneXR)
}
