package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestTwoClaimsOfANewOrganizationAppliedTogether: the platform gives two namespaces to each of several new
// organizations and every claim arrives in one kubectl apply, for each organization one in organization
// isolation and one in stack isolation (their pool names differ, so nothing but the organization's lock tells
// them apart). Exactly one XR holds each organization and composes it; the other is refused, naming the holder,
// and composes nothing; deleting the refused claim deletes nothing of the holder's.
func TestTwoClaimsOfANewOrganizationAppliedTogether(t *testing.T) {
	besideOthersT(t)
	useReferenceObjectsT(t)
	// Several organizations, each claimed twice, all in one apply: the more XRs start together, the likelier two
	// of one organization render in the same instant, which is when rendering everything at once split one.
	const organizations = 4
	var claims []string
	pairs := make([][2]tenant, organizations)
	for i := range pairs {
		org := fmt.Sprintf("pairing%d", i+1)
		pairs[i] = [2]tenant{
			{Namespace: "e2e-" + org + "-a", Name: org + "-a", Organization: org, Isolation: "organization", Stacks: []string{"web"},
				Namespaces: map[string][]string{"web": {"e2e-" + org + "-a"}}},
			{Namespace: "e2e-" + org + "-b", Name: org + "-b", Organization: org, Isolation: "stack", Stacks: []string{"api"},
				Namespaces: map[string][]string{"api": {"e2e-" + org + "-b"}}},
		}
		claims = append(claims, string(pairs[i][0].claim()), string(pairs[i][1].claim()))
	}
	all := []byte(strings.Join(claims, "\n---\n"))
	env.ApplyT(t, all)
	t.Cleanup(func() { deleteAtCleanup(t, all) })

	refused := make([]tenant, organizations)
	holders := make([]tenant, organizations)
	step(t, "ExactlyOneXRHoldsEachOrganization", func(t *testing.T) {
		for i, pair := range pairs {
			holders[i], refused[i] = assertOneHolderT(t, pair)
		}
	})

	step(t, "DeletingTheRefusedClaimDeletesNothingOfTheHolders", func(t *testing.T) {
		for i := range pairs {
			assertRefusedDeletesNothingT(t, holders[i], refused[i])
		}
	})
}

// assertOneHolderT waits until one claim of the pair is refused, naming the other as the holder, and checks that
// every NodePool and NodeClass of the organization is the holder's and that the refused XR composes nothing.
func assertOneHolderT(t *testing.T, pair [2]tenant) (holder, refused tenant) {
	t.Helper()
	org := pair[0].Organization
	waitForT(t, xrSettleTimeout, "one claim of "+org+" refused, naming the other", func(ctx context.Context) (bool, string, error) {
		var states []string
		for _, tn := range pair {
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
	holder = pair[0]
	if refused.Name == pair[0].Name {
		holder = pair[1]
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
	// Its resourceRefs may name the lock it tried to apply; what matters is that it controls nothing.
	if controlled := controlledRefsT(t, refused.xrName(t)); len(controlled) != 0 {
		t.Errorf("the refused XR of %s controls %v; want nothing", org, controlled)
	}
	return holder, refused
}

// assertRefusedDeletesNothingT deletes the refused claim and checks that the holder's pools and lock stay.
func assertRefusedDeletesNothingT(t *testing.T, holder, refused tenant) {
	t.Helper()
	org := holder.Organization
	selector := "kiso.dev/organization=" + org
	before := map[schema.GroupVersionKind]map[string]string{NodePoolKind: versions(t, NodePoolKind, selector), EC2NodeClassKind: versions(t, EC2NodeClassKind, selector)}
	refusedXR := refused.xrName(t)
	env.DeleteT(t, refused.claimOnly())
	env.Cluster.WaitForDeletionT(t, xrSettleTimeout, IsolationKind, "", refusedXR)
	for gvk, objects := range before {
		assertStillThereT(t, gvk, objects, "the refused claim of "+org+" deleted")
	}
	if _, err := env.Cluster.Get(t.Context(), ConfigMapKind, "crossplane-system", "kiso-organization."+org); err != nil {
		t.Errorf("the holder's lock of %s went with the refused claim: %v", org, err)
	}
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

// controlledRefsT lists the objects an isolation XR's resourceRefs name that it controls.
func controlledRefsT(t *testing.T, xr string) []string {
	t.Helper()
	u := env.Cluster.GetT(t, IsolationKind, "", xr)
	uid := string(u.GetUID())
	refs, found, _ := unstructured.NestedSlice(u.Object, "spec", "crossplane", "resourceRefs")
	if !found {
		refs, _, _ = unstructured.NestedSlice(u.Object, "spec", "resourceRefs")
	}
	var out []string
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		gvk := schema.FromAPIVersionAndKind(fmt.Sprint(ref["apiVersion"]), fmt.Sprint(ref["kind"]))
		ns, _ := ref["namespace"].(string)
		o, err := env.Cluster.Get(t.Context(), gvk, ns, fmt.Sprint(ref["name"]))
		if err != nil {
			continue
		}
		if controllerOf(o) == uid {
			out = append(out, gvk.Kind+" "+o.GetName())
		}
	}
	return out
}
