package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What testdata/usage/claim.yaml composes.
const (
	vandelayNamespace = "e2e-vandelay"
	vandelayClaim     = "vandelay"
	vandelayPool      = "kiso-vandelay"
)

// TestANodeClassInUseIsNotDeleted is scenario 7b: a NodePool's EC2NodeClass cannot be deleted while the NodePool
// exists, so Karpenter never loses the NodeClass of a pool that still launches nodes. The admission policy the
// cluster composes (evaluated on DELETE only, so it costs nothing while nothing is deleted) refuses a user's
// kubectl delete of the EC2NodeClass with kiso's message and changes nothing; deleting the claim deletes the
// NodePool and, only after it, the EC2NodeClass. The organization is not bound to the cluster: the policy keeps
// every tenant NodeClass of the cluster it runs in.
func TestANodeClassInUseIsNotDeleted(t *testing.T) {
	sharingPlacementClusterT(t)
	useReferenceObjectsT(t)
	namespace := readTestdataT(t, "usage", "namespace.yaml")
	claim := readTestdataT(t, "usage", "claim.yaml")
	env.ApplyT(t, namespace)
	t.Cleanup(func() { deleteAtCleanup(t, namespace) })
	env.ApplyT(t, claim)
	t.Cleanup(func() { deleteAtCleanup(t, claim) })

	bound := env.Cluster.WaitForT(t, 60*time.Second, IsolationClaimKind, vandelayNamespace, vandelayClaim, func(u *unstructured.Unstructured) (bool, string) {
		if name, _, _ := unstructured.NestedString(u.Object, "spec", "resourceRef", "name"); name == "" {
			return false, "claim not yet bound to an XR"
		}
		return true, ""
	})
	xr, _, _ := unstructured.NestedString(bound.Object, "spec", "resourceRef", "name")
	env.Cluster.WaitForT(t, 60*time.Second, NodePoolKind, "", vandelayPool, nil)
	env.Cluster.WaitForT(t, 60*time.Second, EC2NodeClassKind, "", vandelayPool, nil)
	// Karpenter would say the pool is Ready: the organization settles, and Crossplane stops writing its XR.
	markPoolReady(t, vandelayPool)
	env.Cluster.WaitForConditionT(t, xrSettleTimeout, IsolationClaimKind, vandelayNamespace, vandelayClaim, "Ready")

	step(t, "TheUsagesOfAnEarlierReleaseGoAndNothingElseMoves", func(t *testing.T) {
		assertUpgradeReleasesUsagesT(t, xr)
	})
	nodeClass := env.Cluster.GetT(t, EC2NodeClassKind, "", vandelayPool)

	inUse := "EC2NodeClass " + vandelayPool + " is in use: NodePool " + vandelayPool + " launches its nodes from it. " +
		"Delete the NodePool first; deleting the organization's claim deletes both, in this order"
	waitUntilDeletionRefusedT(t, []string{"ec2nodeclass", vandelayPool}, nodeClassGuardPolicy)
	assertDeletionRefusedT(t, []string{"ec2nodeclass", vandelayPool}, nodeClassGuardPolicy, inUse)
	// Refused means untouched: not even marked for deletion.
	after := env.Cluster.GetT(t, EC2NodeClassKind, "", vandelayPool)
	if after.GetDeletionTimestamp() != nil {
		t.Errorf("EC2NodeClass %s is being deleted after the refusal (deletionTimestamp %v)", vandelayPool, after.GetDeletionTimestamp())
	}
	if after.GetUID() != nodeClass.GetUID() || !cmp.Equal(nodeClass.Object["spec"], after.Object["spec"]) {
		t.Errorf("EC2NodeClass %s changed after the refused deletion", vandelayPool)
	}

	// Deleting the claim deletes everything it composed. A finalizer holds the NodePool meanwhile (as foreground
	// deletion would while its NodeClaims go; Karpenter itself keeps none on a NodePool): the EC2NodeClass must
	// outlive it.
	holdObject(t, NodePoolKind, "nodepool", vandelayPool)
	t.Cleanup(func() { releaseObject(t, NodePoolKind, "nodepool", vandelayPool) })
	refused := deletionsRefusedT(t, nodeClassGuardPolicy)
	if _, err := env.Kubectl.Run(t.Context(), nil, "delete", "karpenterisolation", vandelayClaim, "-n", vandelayNamespace, "--wait=false"); err != nil {
		t.Fatalf("cannot delete claim %s/%s: %v", vandelayNamespace, vandelayClaim, err)
	}
	env.Cluster.WaitForDeletionT(t, 60*time.Second, IsolationKind, "", xr)
	// The garbage collector deletes the XR's objects: the NodePool is terminating, and the collector's
	// deletion of the EC2NodeClass is refused (the apiserver counts each refusal).
	env.Cluster.WaitForT(t, 90*time.Second, NodePoolKind, "", vandelayPool, func(u *unstructured.Unstructured) (bool, string) {
		return u.GetDeletionTimestamp() != nil, "not being deleted yet"
	})
	waitForDeletionRefusedT(t, nodeClassGuardPolicy, refused)
	nc, err := env.Cluster.Get(t.Context(), EC2NodeClassKind, "", vandelayPool)
	if err != nil {
		t.Fatalf("EC2NodeClass %s is gone while NodePool %s still exists: %v", vandelayPool, vandelayPool, err)
	}
	if nc.GetDeletionTimestamp() != nil {
		t.Fatalf("EC2NodeClass %s is being deleted while NodePool %s still exists", vandelayPool, vandelayPool)
	}

	// The NodePool's nodes are gone: it goes, then the EC2NodeClass, at the garbage collector's next attempt.
	releaseObject(t, NodePoolKind, "nodepool", vandelayPool)
	env.Cluster.WaitForDeletionT(t, 30*time.Second, NodePoolKind, "", vandelayPool)
	env.Cluster.WaitForDeletionT(t, 120*time.Second, EC2NodeClassKind, "", vandelayPool)
}

// The ClusterUsage a release before this one composed for vandelay's pool: its NodePool uses its EC2NodeClass.
const earlierReleaseUsage = "usage-" + vandelayPool

// assertUpgradeReleasesUsagesT puts vandelay in the state a release before this one left it in, with the
// ClusterUsage it composed for the pool (composed by the XR, named in its resource references, readied by
// Crossplane, the NodeClass labelled in use, and a deletion of the NodeClass once refused and recorded for
// replay), and checks that this release lets the Usage go without deleting or changing anything else: not
// replaying the deletion, not waiting for the NodePool to go, nothing of the pool rewritten.
func assertUpgradeReleasesUsagesT(t *testing.T, xr string) {
	t.Helper()
	composite := env.Cluster.GetT(t, IsolationKind, "", xr)
	pool := composedVersionsT(t, []composedRef{{GVK: NodePoolKind, Name: vandelayPool}, {GVK: EC2NodeClassKind, Name: vandelayPool}})
	usage := fmt.Sprintf(`apiVersion: protection.crossplane.io/v1beta1
kind: ClusterUsage
metadata:
  name: %[1]s-nodepool-uses-nodeclass
  labels: {app.kubernetes.io/managed-by: kiso, crossplane.io/composite: %[2]s, kiso.dev/organization: vandelay}
  annotations: {crossplane.io/composition-resource-name: %[3]s}
  ownerReferences:
  - {apiVersion: kiso.dev/v1alpha1, kind: XKarpenterIsolation, name: %[2]s, uid: %[4]s, controller: true, blockOwnerDeletion: true}
spec:
  of: {apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, resourceRef: {name: %[1]s}}
  by: {apiVersion: karpenter.sh/v1, kind: NodePool, resourceRef: {name: %[1]s}}
  replayDeletion: true
`, vandelayPool, xr, earlierReleaseUsage, composite.GetUID())
	// Applied as Crossplane applied it, with the field owner Crossplane gives what the XR composes: the fields
	// this release stops rendering go only so.
	owner := sha256.Sum256([]byte(xr + IsolationKind.GroupKind().String()))
	if _, err := env.Kubectl.Run(t.Context(), []byte(usage), "apply", "--server-side", "--field-manager=apiextensions.crossplane.io/composed/"+hex.EncodeToString(owner[:]), "-f", "-"); err != nil {
		t.Fatalf("cannot compose the earlier release's Usage: %v", err)
	}
	name := vandelayPool + "-nodepool-uses-nodeclass"
	env.Cluster.WaitForConditionT(t, 60*time.Second, ClusterUsageKind, "", name, "Ready")
	env.Cluster.WaitForT(t, 60*time.Second, EC2NodeClassKind, "", vandelayPool, func(u *unstructured.Unstructured) (bool, string) {
		return u.GetLabels()["crossplane.io/in-use"] == "true", "not yet labelled in use"
	})
	// An operator once tried to delete the NodeClass under the earlier release, whose Usage refused it: Crossplane's
	// webhook recorded the attempt on it, to replay it when the Usage goes. (Tried now, this release's policy
	// refuses it first, and the webhook records nothing: the record is written as the webhook writes it.)
	if _, err := env.Kubectl.Run(t.Context(), nil, "annotate", "ec2nodeclass", vandelayPool, deletionAttemptAnnotation+"=Background"); err != nil {
		t.Fatalf("cannot record a refused deletion on EC2NodeClass %s: %v", vandelayPool, err)
	}
	// The XR names it among what it composed, as Crossplane wrote it for the earlier release. (A reconcile
	// already under way may write the references back without it: it is named again until it is gone.)
	// This release releases it, then lets it go; the NodePool and the NodeClass stay as they were.
	waitForT(t, xrSettleTimeout, "the earlier release's Usage "+name+" to go", func(ctx context.Context) (bool, string, error) {
		usage, err := env.Cluster.Get(ctx, ClusterUsageKind, "", name)
		if kerrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		if _, by, _ := unstructured.NestedMap(usage.Object, "spec", "by"); !by || usage.GetDeletionTimestamp() != nil {
			return false, "released, being deleted", nil
		}
		u, err := env.Cluster.Get(ctx, IsolationKind, "", xr)
		if err != nil {
			return false, "", err
		}
		// XKarpenterIsolation is a legacy XR (it offers a claim): Crossplane keeps its references in spec.resourceRefs.
		refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "resourceRefs")
		if slices.ContainsFunc(refs, func(r any) bool { m, _ := r.(map[string]any); return m["name"] == name }) {
			return false, "still there, named among the XR's resources", nil
		}
		// Appended where the list is when the apiserver applies the patch, so that no reference Crossplane wrote
		// meanwhile is lost.
		patch, err := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/resourceRefs/-",
			"value": map[string]any{"apiVersion": "protection.crossplane.io/v1beta1", "kind": "ClusterUsage", "name": name}}})
		if err != nil {
			return false, "", err
		}
		if _, err := env.Kubectl.Run(ctx, nil, "patch", "xkarpenterisolation", xr, "--type=json", "-p", string(patch)); err != nil {
			return false, "", err
		}
		return false, "named among the XR's resources", nil
	})
	after := composedVersionsT(t, []composedRef{{GVK: NodePoolKind, Name: vandelayPool}, {GVK: EC2NodeClassKind, Name: vandelayPool}})
	for ref, was := range pool {
		wasUID, _, _ := strings.Cut(was, "@")
		if nowUID, _, _ := strings.Cut(after[ref], "@"); nowUID != wasUID {
			t.Errorf("%s was replaced as the earlier release's Usage went (uid %s, now %s)", ref, wasUID, nowUID)
		}
	}
	for _, kind := range []schema.GroupVersionKind{NodePoolKind, EC2NodeClassKind} {
		u := env.Cluster.GetT(t, kind, "", vandelayPool)
		if u.GetDeletionTimestamp() != nil {
			t.Errorf("%s %s is being deleted: the Usage replayed the deletion it once refused", kind.Kind, vandelayPool)
		}
		if kind == NodePoolKind {
			if diff := cmp.Diff(pool[kind.Kind+"/"+vandelayPool], after[kind.Kind+"/"+vandelayPool]); diff != "" {
				t.Errorf("NodePool %s was rewritten as the earlier release's Usage went (uid@resourceVersion): -before, +after:\n%s", vandelayPool, diff)
			}
		}
	}
	// The recorded attempt is an operator's old intent, not this release's: take it off, as the test found it.
	if _, err := env.Kubectl.Run(t.Context(), nil, "annotate", "ec2nodeclass", vandelayPool, deletionAttemptAnnotation+"-"); err != nil {
		t.Fatalf("cannot remove annotation %s from EC2NodeClass %s: %v", deletionAttemptAnnotation, vandelayPool, err)
	}
}

// deletionAttemptAnnotation is where Crossplane's Usage webhook records a refused deletion's propagation
// policy, to replay it once the Usage is gone.
const deletionAttemptAnnotation = "usage.crossplane.io/deletion-attempt-with-policy"
