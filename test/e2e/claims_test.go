package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestClaimsTakeOnlyWhatThePlatformGives proves on a real control plane that a claim cannot take a platform
// namespace or clone an object the platform did not mark as a reference, nor one it keeps for other
// organizations, even applied by the organization's own tenant admin (each a field error, nothing rendered), and that two organizations listing a namespace that does not exist yet never both hold it once
// it does: the one the platform gives it to gets its ConfigMap and Role, the other nothing, and
// NamespacesAssigned=False says so.
func TestClaimsTakeOnlyWhatThePlatformGives(t *testing.T) {
	sharingPlacementClusterT(t)
	useReferenceObjectsT(t)
	waitForTypeCheckedT(t, placementPolicy)

	// Platform namespaces: default, and crossplane-system, which kiso's composition lists.
	platform := tenant{Namespace: "e2e-initech", Name: "initech", Organization: "initech", Isolation: "organization", Stacks: []string{"web"},
		Namespaces: map[string][]string{"web": {"default", "crossplane-system"}}}
	env.ApplyT(t, platform.claim())
	t.Cleanup(func() { deleteAtCleanup(t, platform.claim()) })
	wantPlatform := `[spec.stacks[0].namespaces[0]: Invalid value: "default": the default namespace is every user's: no organization may hold it, ` +
		`spec.stacks[0].namespaces[1]: Invalid value: "crossplane-system": a platform namespace of XKarpenterCluster "e2e-placement" (crossplane-system, kube-system): its pods are exempt from placement]`
	assertClaimConditionT(t, platform, "SpecValid", "InvalidSpec", wantPlatform)

	// A NodePool the platform never marked as a reference.
	privileged := []byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: e2e-privileged\nspec:\n  template:\n    spec:\n" +
		"      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: tenant-reference}\n      requirements: []\n")
	env.ApplyT(t, privileged)
	t.Cleanup(func() { deleteAtCleanup(t, privileged) })
	cloner := tenant{Namespace: "e2e-bachman", Name: "bachman", Organization: "bachman", Isolation: "organization", Stacks: []string{"web"}}
	manifest := []byte(strings.Replace(string(cloner.claim()), "nodePoolRef:\n    name: tenant-reference", "nodePoolRef:\n    name: e2e-privileged", 1))
	env.ApplyT(t, manifest)
	t.Cleanup(func() { deleteAtCleanup(t, manifest) })
	assertClaimConditionT(t, cloner, "SpecValid", "InvalidSpec",
		`spec.nodePoolRef.name: Forbidden: NodePool "e2e-privileged" is not a reference: a platform marks the NodePools tenants may clone with the label kiso.dev/reference: "true" (or lists them in the function input)`)
	if pools := env.Cluster.ListT(t, NodePoolKind, "", "kiso.dev/organization=bachman"); len(pools) != 0 {
		t.Errorf("a pool was rendered from an unmarked reference: %d NodePools", len(pools))
	}

	// A reference the platform keeps for another organization (a GPU pair, say), named by the tenant admin of an
	// organization that writes its own claim, with its own credentials: ClusterRole admin in its namespace, and
	// kiso:claim-writer there, which the platform binds to let a tenant write its claim (examples/rbac).
	kept := []byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: e2e-gpu-reference\n  labels: {kiso.dev/reference: \"true\"}\n" +
		"  annotations: {kiso.dev/organizations: globex}\nspec:\n  template:\n    spec:\n" +
		"      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: tenant-reference}\n      requirements: []\n")
	env.ApplyT(t, kept)
	t.Cleanup(func() { deleteAtCleanup(t, kept) })
	own := tenant{Namespace: "e2e-kruger", Name: "kruger", Organization: "kruger", Isolation: "organization", Stacks: []string{"imports"}}
	namespace, _, _ := strings.Cut(string(own.claim()), "---\n")
	env.ApplyT(t, []byte(namespace))
	t.Cleanup(func() { deleteAtCleanup(t, own.claim()) })
	const krugerAdmin = "e2e-kruger-admin"
	claimWriter := readRepoFileT(t, "examples/rbac/claim-writer.yaml")
	env.ApplyT(t, claimWriter)
	t.Cleanup(func() { deleteAtCleanup(t, claimWriter) })
	for _, role := range []string{"admin", "kiso:claim-writer"} {
		if out := env.TryT(t, nil, "create", "rolebinding", "kruger-"+strings.ReplaceAll(role, ":", "-"), "--clusterrole="+role, "--user="+krugerAdmin, "-n", own.Namespace); out.ExitCode != 0 {
			t.Fatalf("cannot bind %s to %s: %s", role, krugerAdmin, out.Stderr)
		}
	}
	gpuClaim := []byte(strings.Replace(string(own.claimOnly()), "nodePoolRef:\n    name: tenant-reference", "nodePoolRef:\n    name: e2e-gpu-reference", 1))
	if out := env.TryT(t, gpuClaim, "apply", "-f", "-", "--as="+krugerAdmin); out.ExitCode != 0 {
		t.Fatalf("the tenant admin cannot apply its own claim: %s", out.Stderr)
	}
	assertClaimConditionT(t, own, "SpecValid", "InvalidSpec",
		`spec.nodePoolRef.name: Forbidden: NodePool "e2e-gpu-reference" is the platform's for organizations globex only (its annotation kiso.dev/organizations), not for kruger`)
	if pools := env.Cluster.ListT(t, NodePoolKind, "", "kiso.dev/organization=kruger"); len(pools) != 0 {
		t.Errorf("a pool was rendered from a reference kept for another organization: %d NodePools", len(pools))
	}

	// Two organizations list a namespace that does not exist yet; once it does, the one the platform gives it to holds it.
	a := tenant{Namespace: "e2e-pendant", Name: "pendant", Organization: "pendant", Isolation: "organization", Stacks: []string{"imports"},
		Namespaces: map[string][]string{"imports": {"e2e-future"}}}
	b := tenant{Namespace: "e2e-kramerica", Name: "kramerica", Organization: "kramerica", Isolation: "organization", Stacks: []string{"oil"},
		Namespaces: map[string][]string{"oil": {"e2e-future"}}}
	for _, tn := range []tenant{a, b} {
		env.ApplyT(t, tn.claim())
		t.Cleanup(func() { deleteAtCleanup(t, tn.claim()) })
		assertClaimConditionT(t, tn, "NamespacesAssigned", "NotAssigned", "")
	}
	future := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: e2e-future\n  labels: {kiso.dev/organization: kramerica}\n")
	env.ApplyT(t, future)
	t.Cleanup(func() { deleteAtCleanup(t, future) })
	role := env.Cluster.WaitForT(t, 90*time.Second, RBACRoleKind, "e2e-future", "kiso-placement", nil)
	if got := role.GetLabels()["kiso.dev/organization"]; got != b.Organization {
		t.Errorf("Role e2e-future/kiso-placement is organization %q's; the platform gave the namespace to %q", got, b.Organization)
	}
	assertClaimConditionT(t, b, "NamespacesAssigned", "Assigned", "")
	assertClaimConditionT(t, a, "NamespacesAssigned", "NotAssigned",
		"namespaces e2e-future are not labelled kiso.dev/organization=pendant by the platform (or do not exist yet): their pods get no grant to the organization's nodes until the platform labels them")
	if got := env.Cluster.GetT(t, ConfigMapKind, "e2e-future", "kiso-placement").GetLabels()["kiso.dev/organization"]; got != b.Organization {
		t.Errorf("ConfigMap e2e-future/kiso-placement is organization %q's, the Role organization %q's", got, b.Organization)
	}
}
