package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What testdata/usage/claim.yaml composes.
const (
	vandelayNamespace = "e2e-vandelay"
	vandelayClaim     = "vandelay"
	vandelayPool      = "kiso-vandelay"
)

// nodeClassGuardPolicy is the cluster's admission policy that keeps a tenant NodeClass while a NodePool
// launches from it.
const nodeClassGuardPolicy = "kiso-nodeclass-in-use"

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
	nodeClass := env.Cluster.WaitForT(t, 60*time.Second, EC2NodeClassKind, "", vandelayPool, nil)

	inUse := "EC2NodeClass " + vandelayPool + " is in use: NodePool " + vandelayPool + " launches its nodes from it. " +
		"Delete the NodePool first; deleting the organization's claim deletes both, in this order"
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

// assertDeletionRefusedT deletes an object with kubectl (args: resource and name), as an operator would, and
// checks the admission policy refused it with the message.
func assertDeletionRefusedT(t *testing.T, args []string, policy, message string) {
	t.Helper()
	out := env.TryT(t, nil, append([]string{"delete", "--wait=false"}, args...)...)
	want := "ValidatingAdmissionPolicy '" + policy + "' with binding '" + policy + "' denied request: " + message
	if out.ExitCode == 0 || !strings.Contains(out.Stderr, want) {
		t.Errorf("kubectl delete %s: exit %d %s; want it refused: %s", strings.Join(args, " "), out.ExitCode, strings.TrimSpace(out.Stderr), want)
	}
}
