package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What testdata/usage/claim.yaml composes.
const (
	vandelayNamespace = "e2e-vandelay"
	vandelayClaim     = "vandelay"
	vandelayPool      = "kiso-vandelay"
	vandelayUsage     = "kiso-vandelay-nodepool-uses-nodeclass"
)

// TestUsageBlocksDeletingANodeClassInUse is scenario 7b: a NodePool's EC2NodeClass cannot be deleted while
// the NodePool exists, so Karpenter never loses the NodeClass of nodes it still has to drain. Crossplane's
// Usage webhook enforces the ClusterUsage the claim composes: a user's kubectl delete of the EC2NodeClass is
// refused with Crossplane's in-use message and changes nothing; deleting the claim deletes the NodePool and,
// only after it, the EC2NodeClass.
func TestUsageBlocksDeletingANodeClassInUse(t *testing.T) {
	besideOthersT(t)
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
	usage := env.Cluster.WaitForConditionT(t, 60*time.Second, ClusterUsageKind, "", vandelayUsage, "Ready")
	wantUsage := map[string]any{
		"of":             map[string]any{"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "resourceRef": map[string]any{"name": vandelayPool}},
		"by":             map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "resourceRef": map[string]any{"name": vandelayPool}},
		"replayDeletion": true,
	}
	gotUsage, _, _ := unstructured.NestedMap(usage.Object, "spec")
	if diff := cmp.Diff(wantUsage, gotUsage); diff != "" {
		t.Errorf("ClusterUsage %s spec: -want, +got:\n%s", vandelayUsage, diff)
	}
	// Crossplane marks the used object; its webhook is called only for deletions of marked objects.
	nodeClass := env.Cluster.WaitForT(t, 30*time.Second, EC2NodeClassKind, "", vandelayPool, func(u *unstructured.Unstructured) (bool, string) {
		return u.GetLabels()["crossplane.io/in-use"] == "true", fmt.Sprintf("labels %v", u.GetLabels())
	})

	out := env.TryT(t, nil, "delete", "ec2nodeclass", vandelayPool)
	inUse := fmt.Sprintf("This resource is in-use by 1 usage(s), including the *v1beta1.ClusterUsage %q by resource NodePool/%s.", vandelayUsage, vandelayPool)
	wantRefusal := fmt.Sprintf("Error from server (%s): admission webhook \"nousages.protection.crossplane.io\" denied the request: %s", inUse, inUse)
	if out.ExitCode == 0 {
		t.Fatalf("kubectl delete ec2nodeclass %s succeeded while NodePool %s uses it; want it refused: %s", vandelayPool, vandelayPool, out.Stdout)
	}
	if got := strings.TrimSpace(out.Stderr); got != wantRefusal {
		t.Errorf("kubectl delete ec2nodeclass %s: exit %d,\n got %s\nwant %s", vandelayPool, out.ExitCode, got, wantRefusal)
	}
	// Refused means untouched: not even marked for deletion.
	after := env.Cluster.GetT(t, EC2NodeClassKind, "", vandelayPool)
	if after.GetDeletionTimestamp() != nil {
		t.Errorf("EC2NodeClass %s is being deleted after the refusal (deletionTimestamp %v)", vandelayPool, after.GetDeletionTimestamp())
	}
	if after.GetUID() != nodeClass.GetUID() || !cmp.Equal(nodeClass.Object["spec"], after.Object["spec"]) {
		t.Errorf("EC2NodeClass %s changed after the refused deletion", vandelayPool)
	}
	// Crossplane records the refused attempt, to replay it once the Usage is gone. The test forgets it, so
	// that the next attempt it sees is the garbage collector's.
	if got := after.GetAnnotations()[deletionAttemptAnnotation]; got != "Background" {
		t.Errorf("EC2NodeClass %s annotation %s = %q after the refused deletion, want Background", vandelayPool, deletionAttemptAnnotation, got)
	}
	if _, err := env.Kubectl.Run(t.Context(), nil, "annotate", "ec2nodeclass", vandelayPool, deletionAttemptAnnotation+"-"); err != nil {
		t.Fatalf("cannot remove annotation %s from EC2NodeClass %s: %v", deletionAttemptAnnotation, vandelayPool, err)
	}

	// Deleting the claim deletes everything it composed. A finalizer holds the NodePool meanwhile (as foreground
	// deletion would while its NodeClaims go; Karpenter itself keeps none on a NodePool): the EC2NodeClass must
	// outlive it.
	holdObject(t, NodePoolKind, "nodepool", vandelayPool)
	t.Cleanup(func() { releaseObject(t, NodePoolKind, "nodepool", vandelayPool) })
	if _, err := env.Kubectl.Run(t.Context(), nil, "delete", "karpenterisolation", vandelayClaim, "-n", vandelayNamespace, "--wait=false"); err != nil {
		t.Fatalf("cannot delete claim %s/%s: %v", vandelayNamespace, vandelayClaim, err)
	}
	env.Cluster.WaitForDeletionT(t, 60*time.Second, IsolationKind, "", xr)
	terminating := func(u *unstructured.Unstructured) (bool, string) {
		return u.GetDeletionTimestamp() != nil, "not being deleted yet"
	}
	// The garbage collector deletes the XR's objects: the NodePool is terminating. The Usage stays: Crossplane
	// made the NodePool its owner too, and it goes only with its last owner.
	env.Cluster.WaitForT(t, 90*time.Second, NodePoolKind, "", vandelayPool, terminating)
	// The garbage collector tried to delete the EC2NodeClass too, and was refused.
	env.Cluster.WaitForT(t, 60*time.Second, EC2NodeClassKind, "", vandelayPool, func(u *unstructured.Unstructured) (bool, string) {
		return u.GetAnnotations()[deletionAttemptAnnotation] == "Background", "no deletion attempt recorded yet"
	})
	// The refusal is recorded: the deletion it refused left no mark. (No time window to watch: the recorded
	// attempt is the event that would have deleted it.)
	nc, err := env.Cluster.Get(t.Context(), EC2NodeClassKind, "", vandelayPool)
	if err != nil {
		t.Fatalf("EC2NodeClass %s is gone while NodePool %s still exists: %v", vandelayPool, vandelayPool, err)
	}
	if nc.GetDeletionTimestamp() != nil {
		t.Fatalf("EC2NodeClass %s is being deleted while NodePool %s still exists", vandelayPool, vandelayPool)
	}
	if u := env.Cluster.GetT(t, ClusterUsageKind, "", vandelayUsage); !slices.ContainsFunc(u.GetOwnerReferences(), func(o metav1.OwnerReference) bool {
		return o.Kind == "NodePool" && o.Name == vandelayPool
	}) {
		t.Errorf("ClusterUsage %s owners %v; want NodePool %s among them, so it lives as long as its user", vandelayUsage, u.GetOwnerReferences(), vandelayPool)
	}

	// The NodePool's nodes are gone: it goes, then the Usage, then the EC2NodeClass.
	releaseObject(t, NodePoolKind, "nodepool", vandelayPool)
	env.Cluster.WaitForDeletionT(t, 30*time.Second, NodePoolKind, "", vandelayPool)
	env.Cluster.WaitForDeletionT(t, 30*time.Second, ClusterUsageKind, "", vandelayUsage)
	env.Cluster.WaitForDeletionT(t, 60*time.Second, EC2NodeClassKind, "", vandelayPool)
}

// deletionAttemptAnnotation is where Crossplane's Usage webhook records a refused deletion's propagation
// policy.
const deletionAttemptAnnotation = "usage.crossplane.io/deletion-attempt-with-policy"

// drainingFinalizer holds an object after its deletion, standing in for whatever keeps it while nodes drain.
const drainingFinalizer = "e2e.kiso.dev/draining-nodes"
