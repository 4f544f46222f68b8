package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestTwoClaimsOfANewOrganizationAppliedTogether: the platform gives two namespaces to one new organization and
// both claims arrive in one kubectl apply, one in organization isolation and one in stack isolation (their pool
// names differ, so nothing but the organization's lock can tell them apart). Exactly one XR holds the
// organization and composes it; the other is refused, naming the holder, and composes nothing; deleting the
// refused claim deletes nothing of the holder's.
func TestTwoClaimsOfANewOrganizationAppliedTogether(t *testing.T) {
	besideOthersT(t)
	useReferenceObjectsT(t)
	const org = "pairing"
	first := tenant{Namespace: "e2e-pairing-a", Name: "pairing-a", Organization: org, Isolation: "organization", Stacks: []string{"web"},
		Namespaces: map[string][]string{"web": {"e2e-pairing-a"}}}
	second := tenant{Namespace: "e2e-pairing-b", Name: "pairing-b", Organization: org, Isolation: "stack", Stacks: []string{"api"},
		Namespaces: map[string][]string{"api": {"e2e-pairing-b"}}}
	both := []byte(string(first.claim()) + "\n---\n" + string(second.claim()))
	env.ApplyT(t, both)
	t.Cleanup(func() { deleteAtCleanup(t, both) })

	var holder, refused tenant
	step(t, "ExactlyOneXRHoldsTheOrganization", func(t *testing.T) {
		waitForT(t, xrSettleTimeout, "one claim of "+org+" refused, naming the other", func(ctx context.Context) (bool, string, error) {
			var states []string
			for _, tn := range []tenant{first, second} {
				u, err := env.Cluster.Get(ctx, IsolationClaimKind, tn.Namespace, tn.Name)
				if err != nil {
					return false, "", err
				}
				c, _ := Condition(u, "NamesAvailable")
				states = append(states, tn.Name+": NamesAvailable "+c.Status+" "+c.Reason)
				if c.Reason == "NameConflict" {
					refused = tn
				}
			}
			return refused.Name != "", strings.Join(states, "; "), nil
		})
		holder = first
		if refused.Name == first.Name {
			holder = second
		}
		holderXR := holder.xrName(t)
		assertClaimConditionT(t, refused, "NamesAvailable", "NameConflict",
			fmt.Sprintf(`spec.organization: Invalid value: %q: organization is held by XKarpenterIsolation %s (claim %s/%s); one claim only holds an organization, whatever its isolation mode`,
				org, holderXR, holder.Namespace, holder.Name))
		holderUID := env.Cluster.GetT(t, IsolationKind, "", holderXR).GetUID()
		pool := holder.pool("")
		if holder.Isolation == "stack" {
			pool = holder.pool(holder.Stacks[0])
		}
		for _, kind := range []schema.GroupVersionKind{NodePoolKind, EC2NodeClassKind} {
			env.Cluster.WaitForT(t, xrSettleTimeout, kind, "", pool, nil)
			for _, u := range env.Cluster.ListT(t, kind, "", "kiso.dev/organization="+org) {
				if owner := controllerOf(&u); owner != string(holderUID) {
					t.Errorf("%s %s of organization %s is controlled by %s, not by the holder %s", kind.Kind, u.GetName(), org, owner, holderXR)
				}
			}
		}
		if refs := resourceRefs(t, refused.xrName(t)); len(refs) != 0 {
			t.Errorf("the refused XR composes %v; want nothing", refs)
		}
	})

	step(t, "DeletingTheRefusedClaimDeletesNothingOfTheHolders", func(t *testing.T) {
		before := map[string]map[string]string{"NodePool": versions(t, NodePoolKind, "kiso.dev/organization="+org), "EC2NodeClass": versions(t, EC2NodeClassKind, "kiso.dev/organization="+org)}
		refusedXR := refused.xrName(t)
		env.DeleteT(t, refused.claimOnly())
		env.Cluster.WaitForDeletionT(t, xrSettleTimeout, IsolationKind, "", refusedXR)
		for kind, objects := range before {
			gvk := map[string]schema.GroupVersionKind{"NodePool": NodePoolKind, "EC2NodeClass": EC2NodeClassKind}[kind]
			for name, version := range objects {
				u, err := env.Cluster.Get(t.Context(), gvk, "", name)
				switch {
				case err != nil:
					t.Errorf("%s %s of the holder went with the refused claim: %v", kind, name, err)
				case u.GetDeletionTimestamp() != nil:
					t.Errorf("%s %s of the holder is being deleted with the refused claim", kind, name)
				case string(u.GetUID()) != strings.SplitN(version, "@", 2)[0]:
					t.Errorf("%s %s of the holder was composed anew", kind, name)
				}
			}
		}
		if _, err := env.Cluster.Get(t.Context(), ConfigMapKind, "crossplane-system", "kiso-organization."+org); err != nil {
			t.Errorf("the holder's lock went with the refused claim: %v", err)
		}
	})
}

// controllerOf is the UID of an object's controller, empty if none.
func controllerOf(u *unstructured.Unstructured) string {
	for _, o := range u.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return string(o.UID)
		}
	}
	return ""
}

// resourceRefs lists what an isolation XR composes, as its spec says.
func resourceRefs(t *testing.T, xr string) []string {
	t.Helper()
	u := env.Cluster.GetT(t, IsolationKind, "", xr)
	refs, found, _ := unstructured.NestedSlice(u.Object, "spec", "crossplane", "resourceRefs")
	if !found {
		refs, _, _ = unstructured.NestedSlice(u.Object, "spec", "resourceRefs")
	}
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		out = append(out, fmt.Sprint(ref["kind"], "/", ref["name"]))
	}
	return out
}
