package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What testdata/safety composes.
const (
	safetyCluster   = "e2e-safety"
	soylentNS       = "e2e-soylent"
	soylentClaim    = "soylent"
	soylentPool     = "kiso-soylent"
	soylentIdentity = "kiso-soylent-node"
	// soylentProfile is the AWS name of soylent's instance profile, which its EC2NodeClass names.
	soylentProfile = "kiso-safety-eu-org-soylent-node"
)

// composedRefsT lists what an XR composed: spec.crossplane.resourceRefs for a v2 XR, spec.resourceRefs for a
// legacy one.
func composedRefsT(t *testing.T, gvk schema.GroupVersionKind, xr string) []composedRef {
	t.Helper()
	u := env.Cluster.GetT(t, gvk, "", xr)
	refs, found, _ := unstructured.NestedSlice(u.Object, "spec", "crossplane", "resourceRefs")
	if !found {
		refs, _, _ = unstructured.NestedSlice(u.Object, "spec", "resourceRefs")
	}
	out := make([]composedRef, 0, len(refs))
	for _, r := range refs {
		ref := r.(map[string]any)
		ns, _ := ref["namespace"].(string)
		out = append(out, composedRef{GVK: schema.FromAPIVersionAndKind(ref["apiVersion"].(string), ref["kind"].(string)), Namespace: ns, Name: ref["name"].(string)})
	}
	if len(out) == 0 {
		t.Fatalf("%s %s lists no composed resources", gvk.Kind, xr)
	}
	return out
}

// awsRefs keeps the provider-aws managed resources.
func awsRefs(refs []composedRef) []composedRef {
	return slices.DeleteFunc(slices.Clone(refs), func(r composedRef) bool { return !strings.HasSuffix(r.GVK.Group, ".aws.upbound.io") })
}

// keptRefs keeps what must outlive every tenant pool: the provider-aws managed resources, and the admission
// policies and bindings that keep organizations apart.
func keptRefs(refs []composedRef) []composedRef {
	return slices.DeleteFunc(slices.Clone(refs), func(r composedRef) bool {
		return !strings.HasSuffix(r.GVK.Group, ".aws.upbound.io") && r.GVK.Group != "admissionregistration.k8s.io"
	})
}

// waitInUseT waits until Crossplane's usage controller has labelled an object in use: only then does its
// webhook refuse the object's deletion.
func waitInUseT(t *testing.T, r composedRef) {
	t.Helper()
	env.Cluster.WaitForT(t, 90*time.Second, r.GVK, r.Namespace, r.Name, func(u *unstructured.Unstructured) (bool, string) {
		return u.GetLabels()["crossplane.io/in-use"] == "true", "not yet labelled in use"
	})
}

// TestDeletingAClusterWaitsForItsOrganizations deletes an XKarpenterCluster while an organization's pool
// exists, as an operator tearing a cluster down in the wrong order would. The deletion is refused while the
// pool is bound to the cluster: Karpenter keeps everything it needs to drain and terminate the tenant's nodes
// (its role, policies, attachments, Pod Identity association, queue and rules, and the nodes their role), and
// the admission policies keep other pods off the tenant's nodes meanwhile. Karpenter keeps no finalizer on a
// NodePool: deleting the claim deletes the NodePool at once, while its NodeClaims still drain. What Karpenter
// holds is the EC2NodeClass (its termination finalizer waits until no NodeClaim refers to it; a finalizer of
// the test's stands in for it here), so that is what keeps the cluster and the organization's dedicated role,
// instance profile, access entry and policy attachments: the cluster's deletion policy refuses each deletion
// while it exists, the garbage collector's too. Then everything goes, the cluster once the operator deletes it
// again.
func TestDeletingAClusterWaitsForItsOrganizations(t *testing.T) {
	inLocalClusterLaneT(t)
	useReferenceObjectsT(t)
	cluster := readTestdataT(t, "safety", "cluster.yaml")
	claim := readTestdataT(t, "safety", "claim.yaml")
	env.ApplyT(t, cluster)
	t.Cleanup(func() { deleteLocalClusterAtCleanup(t, cluster) })
	env.ApplyT(t, claim)
	t.Cleanup(func() {
		releaseObject(t, EC2NodeClassKind, "ec2nodeclass", soylentPool)
		deleteAtCleanup(t, claim)
	})

	env.Cluster.WaitForConditionT(t, xrSettleTimeout, ClusterKind, "", safetyCluster, "Synced")
	clusterObjects := keptRefs(composedRefsT(t, ClusterKind, safetyCluster))
	tn := tenant{Namespace: soylentNS, Name: soylentClaim, Organization: "soylent"}
	xr := tn.xrName(t)
	env.Cluster.WaitForT(t, 90*time.Second, NodePoolKind, "", soylentPool, nil)
	env.Cluster.WaitForConditionT(t, 90*time.Second, IsolationKind, "", xr, "Synced")
	identityObjects := awsRefs(composedRefsT(t, IsolationKind, xr))
	if len(identityObjects) == 0 {
		t.Fatalf("XR %s composed no dedicated identity", xr)
	}
	// The cluster's AWS objects are in use by its controller role, which its own Usage keeps while it exists.
	for _, r := range awsRefs(clusterObjects) {
		waitInUseT(t, r)
	}

	// Karpenter has tenant nodes to drain: it holds the EC2NodeClass, as its termination finalizer would.
	holdObject(t, EC2NodeClassKind, "ec2nodeclass", soylentPool)

	step(t, "DeletingTheClusterFirstIsRefusedAndKeepsTheBoundary", func(t *testing.T) {
		// Refused while the tenant's pool is bound to it, so nothing of it goes, the admission policies included.
		waitUntilDeletionRefusedT(t, []string{"xkarpentercluster", safetyCluster}, clusterGuardPolicy, clusterPoolsGuardPolicy)
		waitUntilDeletionRefusedT(t, []string{"roles.iam.aws.upbound.io", soylentIdentity}, clusterGuardPolicy)
		assertClusterDeletionRefusedT(t, clusterObjects)
		// Organizations are bound to the cluster, not its controller role: deleted directly, the role is refused
		// too, by the cluster's own Usage, which goes only with the cluster.
		role, _, _ := unstructured.NestedString(env.Cluster.GetT(t, ClusterKind, "", safetyCluster).Object, "status", "controllerRoleResource")
		out := env.TryT(t, nil, "delete", "roles.iam.aws.upbound.io", role, "--wait=false")
		if want := "XKarpenterCluster " + safetyCluster; out.ExitCode == 0 || !strings.Contains(out.Stderr, "This resource is in-use by") || !strings.Contains(out.Stderr, want) {
			t.Errorf("deleting the controller role %s directly: exit %d %s; want it refused by a Usage naming %s", role, out.ExitCode, strings.TrimSpace(out.Stderr), want)
		}
		if u, err := env.Cluster.Get(t.Context(), RoleKind, "", role); err != nil || u.GetDeletionTimestamp() != nil {
			t.Errorf("the controller role %s went while organization soylent's pool still drains (err %v)", role, err)
		}
		// The organization's own role, deleted directly, is refused while its EC2NodeClass names its profile.
		assertDeletionRefusedT(t, []string{"roles.iam.aws.upbound.io", soylentIdentity}, clusterGuardPolicy,
			"Role "+soylentIdentity+" is in use: EC2NodeClass "+soylentPool+" launches nodes with instance profile "+soylentProfile+
				", whose identity it is part of; it goes once that NodeClass, and so its last node, is gone")
		// The boundary holds: a pod of no organization's namespace may not tolerate soylent's nodes.
		tolerateSoylent := corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: "soylent", Effect: corev1.TaintEffectNoSchedule}
		assertRefusedT(t, newPod("tolerates-soylent", "default", nil, tolerateSoylent), placementPolicy,
			"pod in namespace default tolerates organization soylent's taint (toleration kiso.dev/organization=soylent), but the namespace is not that organization's "+
				"(the platform labels it with no organization): remove the toleration; only pods in platform namespaces may (crossplane-system, e2e-safety-karpenter, kube-system, "+
				"and any the platform labels kiso.dev/placement-exempt=true)")
	})

	step(t, "TheClaimAndItsNodePoolGoWhileKarpenterDrainsAndEverythingTheNodesNeedStays", func(t *testing.T) {
		refused := deletionsRefusedT(t, clusterGuardPolicy)
		if _, err := env.Kubectl.Run(t.Context(), nil, "delete", "karpenterisolation", soylentClaim, "-n", soylentNS, "--wait=false"); err != nil {
			t.Fatalf("cannot delete claim %s/%s: %v", soylentNS, soylentClaim, err)
		}
		env.Cluster.WaitForDeletionT(t, 90*time.Second, IsolationKind, "", xr)
		// Nothing holds the NodePool (Karpenter keeps no finalizer on it): it goes. The EC2NodeClass's deletion,
		// refused while the NodePool launched from it, goes through then, and Karpenter holds it.
		env.Cluster.WaitForDeletionT(t, 90*time.Second, NodePoolKind, "", soylentPool)
		env.Cluster.WaitForT(t, 180*time.Second, EC2NodeClassKind, "", soylentPool, func(u *unstructured.Unstructured) (bool, string) {
			return u.GetDeletionTimestamp() != nil, "not being deleted yet"
		})
		// The garbage collector tried to delete every identity object, and was refused each time.
		waitForDeletionRefusedT(t, clusterGuardPolicy, refused, len(identityObjects))
		// The NodePool is gone; the nodes are still draining. The cluster must still be refused, and every AWS
		// object the nodes or Karpenter need must still be there.
		assertClusterDeletionRefusedT(t, append(slices.Clone(clusterObjects), identityObjects...))
	})

	step(t, "OnceTheLastNodeIsGoneEverythingGoes", func(t *testing.T) {
		releaseObject(t, EC2NodeClassKind, "ec2nodeclass", soylentPool)
		env.Cluster.WaitForDeletionT(t, 90*time.Second, EC2NodeClassKind, "", soylentPool)
		// The garbage collector's next attempt deletes the identity (it backs off while refused).
		for _, r := range identityObjects {
			env.Cluster.WaitForDeletionT(t, 300*time.Second, r.GVK, r.Namespace, r.Name)
		}
		// The operator deletes the cluster again: nothing is bound to it any more.
		if _, err := env.Kubectl.Run(t.Context(), nil, "delete", "xkarpentercluster", safetyCluster, "--wait=false"); err != nil {
			t.Fatalf("deleting XKarpenterCluster %s once its organizations are gone: %v", safetyCluster, err)
		}
		env.Cluster.WaitForDeletionT(t, 180*time.Second, ClusterKind, "", safetyCluster)
		for _, r := range clusterObjects {
			env.Cluster.WaitForDeletionT(t, 180*time.Second, r.GVK, r.Namespace, r.Name)
		}
	})
}

// clusterGuardPolicy is the safety cluster's admission policy that keeps it, and its organizations' dedicated
// identities, while a tenant EC2NodeClass needs them; clusterPoolsGuardPolicy keeps it while a tenant NodePool
// is bound to it.
const (
	clusterGuardPolicy      = "kiso-deletion-order." + safetyCluster
	clusterPoolsGuardPolicy = "kiso-deletion-order-pools." + safetyCluster
)

// assertClusterDeletionRefusedT deletes the safety cluster, as an operator would, and checks the cluster's
// deletion policy refuses it naming soylent's pool (its NodePool or EC2NodeClass has the pool's name), and that
// neither the XKarpenterCluster nor any of kept is gone or being deleted.
func assertClusterDeletionRefusedT(t *testing.T, kept []composedRef) {
	t.Helper()
	out := env.TryT(t, nil, "delete", "xkarpentercluster", safetyCluster, "--wait=false")
	inUse := "XKarpenterCluster " + safetyCluster + " is in use: "
	byGuard := strings.Contains(out.Stderr, "ValidatingAdmissionPolicy '"+clusterGuardPolicy+"'") || strings.Contains(out.Stderr, "ValidatingAdmissionPolicy '"+clusterPoolsGuardPolicy+"'")
	if out.ExitCode == 0 || !byGuard || !strings.Contains(out.Stderr, inUse) || !strings.Contains(out.Stderr, soylentPool+" of an organization is bound to it") {
		t.Errorf("deleting XKarpenterCluster %s while organization soylent's pool %s is bound to it: exit %d %s; want it refused by %s or %s naming the pool",
			safetyCluster, soylentPool, out.ExitCode, strings.TrimSpace(out.Stderr), clusterGuardPolicy, clusterPoolsGuardPolicy)
	}
	for _, r := range append([]composedRef{{GVK: ClusterKind, Name: safetyCluster}}, kept...) {
		if u, err := env.Cluster.Get(t.Context(), r.GVK, r.Namespace, r.Name); err != nil || u.GetDeletionTimestamp() != nil {
			t.Errorf("%s went while organization soylent's pool still drains (err %v)", r, err)
		}
	}
}

// TestGapsTouchNothing opens, one after the other, gaps kiso must ride out with pools existing: the reference
// NodePool deleted, the clusterRef broken, an invalid spec. Through each, every composed object keeps its
// resourceVersion and a condition says why; once the input is restored, the organization converges without a
// single further write. Its organization is bound to the shared local cluster, which none of these gaps touches;
// TestAClustersStatusGoneTouchesNothing opens the gap that does, on a cluster of its own.
func TestGapsTouchNothing(t *testing.T) {
	sharingPlacementClusterT(t)
	g := newGapOrganizationT(t, "gaps", "vehement", placementCluster)

	step(t, "TheReferenceNodePoolDeleted", func(t *testing.T) {
		if _, err := env.Kubectl.Run(t.Context(), nil, "delete", "nodepool", g.reference); err != nil {
			t.Fatalf("cannot delete the reference NodePool: %v", err)
		}
		c := waitClaimConditionT(t, g.ns, g.claim, "ReferencesResolved", "False", "ReferenceNotFound")
		if want := `spec.nodePoolRef: reference NodePool "` + g.reference + `" not found; keeping the pools already composed unchanged meanwhile`; c.Message != want {
			t.Errorf("reference deleted: ReferencesResolved message %q, want %q", c.Message, want)
		}
		g.assertUntouched(t, "reference NodePool deleted")
		env.ApplyT(t, g.references)
		g.converged(t, "reference NodePool deleted")
	})

	step(t, "TheClusterRefBroken", func(t *testing.T) {
		g.patchClaim(t, map[string]any{"clusterRef": map[string]any{"name": "e2e-no-such-cluster"}})
		c := waitClaimConditionT(t, g.ns, g.claim, "ReferencesResolved", "False", "ReferenceNotFound")
		if want := `spec.clusterRef: XKarpenterCluster "e2e-no-such-cluster" not found, or it has not composed its view for organizations (EnvironmentConfig "kiso-cluster.e2e-no-such-cluster") yet; keeping the pools already composed unchanged meanwhile`; c.Message != want {
			t.Errorf("clusterRef broken: ReferencesResolved message %q, want %q", c.Message, want)
		}
		g.assertUntouched(t, "clusterRef broken")
		g.patchClaim(t, map[string]any{"clusterRef": map[string]any{"name": placementCluster}})
		g.converged(t, "clusterRef broken")
	})

	// An invalid spec the API server accepts and the function refuses: a platform namespace of the cluster.
	step(t, "AnInvalidSpec", func(t *testing.T) {
		g.patchClaim(t, map[string]any{"stacks": []any{map[string]any{"name": "capital", "namespaces": []any{g.ns, "crossplane-system"}}}})
		c := waitClaimConditionT(t, g.ns, g.claim, "SpecValid", "False", "InvalidSpec")
		if !strings.Contains(c.Message, `spec.stacks[0].namespaces[1]`) {
			t.Errorf("invalid spec: SpecValid message %q does not name spec.stacks[0].namespaces[1]", c.Message)
		}
		g.assertUntouched(t, "invalid spec")
		g.patchClaim(t, map[string]any{"stacks": []any{map[string]any{"name": "capital", "namespaces": []any{g.ns}}}})
		g.converged(t, "invalid spec")
	})
}

// TestAClustersStatusGoneTouchesNothing opens the gap of a cluster's status gone from the view organizations read
// (as for a cluster XR being recreated), on a cluster of its own: every composed object of its organization keeps
// its resourceVersion and a condition says why; once the cluster composes its view again, the organization
// converges without a single further write.
func TestAClustersStatusGoneTouchesNothing(t *testing.T) {
	inLocalClusterLaneT(t)
	// Without interruption it composes fewer objects and Usages, so the usage controller's first marks do not
	// hold its reconciles back behind Crossplane's watch circuit breaker for long.
	cluster := []byte(strings.NewReplacer(safetyCluster, "e2e-gaps", "safety-eu", "gaps-eu").Replace(string(readTestdataT(t, "safety", "cluster.yaml"))) +
		"  interruption:\n    enabled: false\n")
	env.ApplyT(t, cluster)
	t.Cleanup(func() { deleteLocalClusterAtCleanup(t, cluster) })
	env.Cluster.WaitForConditionT(t, xrSettleTimeout, ClusterKind, "", "e2e-gaps", "Synced")
	g := newGapOrganizationT(t, "status-gone", "vigorous", "e2e-gaps")

	// Crossplane is paused on the cluster, so nothing composes the view again until the test resumes it.
	step(t, "TheClustersStatusGone", func(t *testing.T) {
		if _, err := env.Kubectl.Run(t.Context(), nil, "annotate", "xkarpentercluster", "e2e-gaps", "crossplane.io/paused=true"); err != nil {
			t.Fatal(err)
		}
		// Crossplane does not delete a paused XR: should the step fail before it resumes the cluster, the
		// cluster's cleanup would leave it and its fixed-name policies behind for every later local cluster.
		t.Cleanup(func() {
			if _, err := env.Kubectl.Run(context.Background(), nil, "annotate", "xkarpentercluster", "e2e-gaps", "crossplane.io/paused-"); err != nil {
				t.Errorf("cannot resume the cluster: %v", err)
			}
		})
		// A reconcile of the cluster already under way when the annotation lands still applies its view, status
		// and all, over the patch below: patch once Crossplane has said the cluster is paused (it sets that in a
		// reconcile of its own, and never runs two of one XR at once).
		env.Cluster.WaitForT(t, xrSettleTimeout, ClusterKind, "", "e2e-gaps", func(u *unstructured.Unstructured) (bool, string) {
			c, _ := Condition(u, "Synced")
			return c.Reason == "ReconcilePaused", "Synced " + c.Status + " " + c.Reason
		})
		clearStatus := `{"data":{"status":{"controllerRoleResource":null,"namePrefix":null,"nodeRolePath":null}}}`
		if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "environmentconfig", clusterViewName("e2e-gaps"), "--type=merge", "-p", clearStatus); err != nil {
			t.Fatalf("cannot clear the status of the cluster's view: %v", err)
		}
		c := waitClaimConditionT(t, g.ns, g.claim, "ReferencesResolved", "False", "ClusterNotReady")
		if want := `spec.clusterRef: XKarpenterCluster "e2e-gaps" has not been rendered yet (its status has no controllerRoleResource); keeping the pools already composed unchanged meanwhile`; c.Message != want {
			t.Errorf("cluster status gone: ReferencesResolved message %q, want %q", c.Message, want)
		}
		g.assertUntouched(t, "cluster status gone")
		if _, err := env.Kubectl.Run(t.Context(), nil, "annotate", "xkarpentercluster", "e2e-gaps", "crossplane.io/paused-"); err != nil {
			t.Fatal(err)
		}
		// A paused XR has no requeue pending, so the un-pause event is the one thing that wakes it; the ClusterUsages'
		// churn may have opened Crossplane's watch circuit breaker for it, which drops that event. Touch the cluster
		// until it has composed its view again, as a user re-applying it would.
		waitTouchingT(t, "xkarpentercluster", "e2e-gaps", "the cluster to compose its view again", func(ctx context.Context, _ int64) (bool, string, error) {
			u, err := env.Cluster.Get(ctx, ClusterViewKind, "", clusterViewName("e2e-gaps"))
			if err != nil {
				return false, "", err
			}
			role, _, _ := unstructured.NestedString(u.Object, "data", "status", "controllerRoleResource")
			return role != "", "data.status.controllerRoleResource is still empty", nil
		})
		g.converged(t, "cluster status gone")
	})
}

// gapOrganization is an organization of one pool, Ready and in use, whose composed objects a gap scenario watches
// for writes: its references (a pair of its own, since one gap deletes the reference NodePool), its claim, and
// every composed object's UID@resourceVersion once it settled.
type gapOrganization struct {
	ns, claim, xr, reference string
	references               []byte
	refs                     []composedRef
	baseline                 map[string]string
}

// newGapOrganizationT applies the references and the claim of organization, bound to cluster, in namespace
// e2e-<name>, and waits until its pool is Ready and in use.
func newGapOrganizationT(t *testing.T, name, organization, cluster string) *gapOrganization {
	t.Helper()
	g := &gapOrganization{ns: "e2e-" + name, claim: organization, reference: name + "-reference"}
	g.references = []byte(strings.ReplaceAll(string(readTestdataT(t, "isolation", "references.yaml")), "tenant-reference", g.reference))
	env.ApplyT(t, g.references)
	t.Cleanup(func() { deleteAtCleanup(t, g.references) })
	tn := tenant{Namespace: g.ns, Name: organization, Organization: organization, Isolation: "organization", Stacks: []string{"capital"},
		Namespaces: map[string][]string{"capital": {g.ns}}, ClusterRef: cluster, Reference: g.reference}
	claim := tn.claim()
	env.ApplyT(t, claim)
	t.Cleanup(func() { deleteAtCleanup(t, claim) })
	g.xr = tn.xrName(t)
	pool := "kiso-" + organization
	step(t, "TheOrganizationIsReady", func(t *testing.T) {
		markPoolReady(t, pool)
		env.Cluster.WaitForConditionT(t, 90*time.Second, IsolationClaimKind, g.ns, g.claim, "Ready")
		g.refs = composedRefsT(t, IsolationKind, g.xr)
		touchXR(t, g.xr)
		g.baseline = composedVersionsT(t, g.refs)
	})
	return g
}

// patchClaim merge-patches the claim's spec, as a user editing it would.
func (g *gapOrganization) patchClaim(t *testing.T, spec map[string]any) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "karpenterisolation", g.claim, "-n", g.ns, "--type=merge", "-p", string(patch)); err != nil {
		t.Fatalf("cannot patch claim %s/%s: %v", g.ns, g.claim, err)
	}
}

// assertUntouched makes Crossplane reconcile the organization and checks that nothing it composed was written.
func (g *gapOrganization) assertUntouched(t *testing.T, gap string) {
	t.Helper()
	touchXR(t, g.xr)
	if diff := cmp.Diff(g.baseline, composedVersionsT(t, g.refs)); diff != "" {
		t.Errorf("%s: composed objects were written: -before, +after:\n%s", gap, diff)
	}
}

// converged waits until the organization is Ready, valid and resolved again, and checks nothing was written.
func (g *gapOrganization) converged(t *testing.T, gap string) {
	t.Helper()
	env.Cluster.WaitForConditionT(t, 90*time.Second, IsolationClaimKind, g.ns, g.claim, "Ready")
	for _, ct := range []string{"SpecValid", "ReferencesResolved"} {
		waitClaimConditionT(t, g.ns, g.claim, ct, "True", map[string]string{"SpecValid": "Valid", "ReferencesResolved": "Resolved"}[ct])
	}
	g.assertUntouched(t, gap+", restored")
}

// TestMakeBeforeBreak switches an organization from one shared pool to a pool per stack, renames a stack and
// removes one: each time the pools the spec no longer asks for exist, untouched, until every new pool is
// Ready, and then go.
func TestMakeBeforeBreak(t *testing.T) {
	besideOthersT(t)
	useReferenceObjectsT(t)
	tn := tenant{Namespace: "e2e-bluth", Name: "bluth", Organization: "bluth", Isolation: "organization", Stacks: []string{"banana", "model"}}
	env.ApplyT(t, tn.claim())
	t.Cleanup(func() { deleteAtCleanup(t, tn.claim()) })
	xr := tn.xrName(t)
	markPoolReady(t, tn.pool(""))
	env.Cluster.WaitForConditionT(t, 90*time.Second, IsolationClaimKind, tn.Namespace, tn.Name, "Ready")

	// keptUntilReady checks the retired pools survive a reconcile unchanged while the new ones are not Ready,
	// then readies the new ones and waits for the retired ones to go.
	keptUntilReady := func(step string, retired, fresh []string) {
		t.Helper()
		for _, p := range fresh {
			env.Cluster.WaitForT(t, 90*time.Second, NodePoolKind, "", p, nil)
			env.Cluster.WaitForT(t, 90*time.Second, EC2NodeClassKind, "", p, nil)
		}
		c := waitClaimConditionT(t, tn.Namespace, tn.Name, "PoolsSettled", "False", "ReplacingPools")
		want := fmt.Sprintf("keeping retired pools %s until new pools %s report Ready", strings.Join(retired, ", "), strings.Join(fresh, ", "))
		if c.Message != want {
			t.Errorf("%s: PoolsSettled message %q, want %q", step, c.Message, want)
		}
		before := map[string]string{}
		for _, p := range retired {
			before[p] = versions(t, NodePoolKind, "")[p]
		}
		touchXR(t, xr)
		for _, p := range retired {
			np, err := env.Cluster.Get(t.Context(), NodePoolKind, "", p)
			switch {
			case err != nil:
				t.Errorf("%s: retired pool %s went before the new pools were Ready: %v", step, p, err)
			case np.GetDeletionTimestamp() != nil:
				t.Errorf("%s: retired pool %s is being deleted before the new pools are Ready", step, p)
			case string(np.GetUID())+"@"+np.GetResourceVersion() != before[p]:
				t.Errorf("%s: retired pool %s was rewritten while kept", step, p)
			}
		}
		for _, p := range fresh {
			markPoolReady(t, p)
		}
		for _, p := range retired {
			waitPoolGoneT(t, p)
		}
		waitClaimConditionT(t, tn.Namespace, tn.Name, "PoolsSettled", "True", "Settled")
	}

	// Organization isolation to stack isolation.
	tn.Isolation = "stack"
	env.ApplyT(t, tn.claimOnly())
	keptUntilReady("mode switch", []string{tn.pool("")}, []string{tn.pool("banana"), tn.pool("model")})

	// A stack renamed: model becomes bluth-model's successor, magic.
	tn.Stacks = []string{"banana", "magic"}
	tn.Namespaces = map[string][]string{"magic": {"bluth-model"}}
	env.ApplyT(t, tn.claimOnly())
	keptUntilReady("stack rename", []string{tn.pool("model")}, []string{tn.pool("magic")})

	// A stack removed: nothing new to wait for, so it goes at once, and only it.
	kept := versions(t, NodePoolKind, "kiso.dev/organization=bluth")[tn.pool("magic")]
	tn.Stacks = []string{"magic"}
	env.ApplyT(t, tn.claimOnly())
	waitPoolGoneT(t, tn.pool("banana"))
	if got := versions(t, NodePoolKind, "kiso.dev/organization=bluth")[tn.pool("magic")]; got != kept {
		t.Errorf("removing stack banana rewrote NodePool %s: %s -> %s", tn.pool("magic"), kept, got)
	}
	waitClaimConditionT(t, tn.Namespace, tn.Name, "PoolsSettled", "True", "Settled")
}

// waitPoolGoneT waits for a retired pool's NodePool and NodeClass to be deleted. The reconcile that drops them is
// woken by a composed object's event (a new pool Ready, a Usage released); after the burst of a pool switch
// Crossplane's watch circuit breaker may drop that event, and then kiso's own short TTL while the breaker is open
// (fncall.TTLDropping) is what brings it: nothing touches the XR.
func waitPoolGoneT(t *testing.T, pool string) {
	t.Helper()
	waitForT(t, xrSettleTimeout, "retired pool "+pool+" deleted", func(ctx context.Context) (bool, string, error) {
		for _, kind := range []schema.GroupVersionKind{NodePoolKind, EC2NodeClassKind} {
			_, err := env.Cluster.Get(ctx, kind, "", pool)
			switch {
			case kerrors.IsNotFound(err):
			case err != nil:
				return false, "", err
			default:
				return false, kind.Kind + " " + pool + " still exists", nil
			}
		}
		return true, "", nil
	})
}
