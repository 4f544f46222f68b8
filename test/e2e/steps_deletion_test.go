package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Steps of deletions the platform refuses or holds: the admission policies' refusals, finalizers that hold
// an object, and what an XR composed.

// composedRef is one object an XR composed, as its resourceRefs name it.
type composedRef struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

func (r composedRef) String() string { return r.GVK.Kind + "/" + objectName(r.Namespace, r.Name) }

// deletionsRefusedT is how many deletions the admission policy has refused so far (the apiserver counts them).
func deletionsRefusedT(t *testing.T, policy string) float64 {
	t.Helper()
	families, err := env.scrapeMetrics(t.Context(), "kube-apiserver")
	if err != nil {
		t.Fatalf("cannot read the apiserver's metrics: %v", err)
	}
	return counters(families, "apiserver_validating_admission_policy_check_total", "policy", "enforcement_action")[policy+" deny"]
}

// waitForDeletionRefusedT waits until the admission policy has refused at least n deletions more than before: a
// garbage collector's attempt, which leaves no other trace.
func waitForDeletionRefusedT(t *testing.T, policy string, before float64, n ...int) {
	t.Helper()
	want := 1.0
	if len(n) > 0 {
		want = float64(n[0])
	}
	waitForT(t, 120*time.Second, fmt.Sprintf("%v deletions refused by %s", want, policy), func(context.Context) (bool, string, error) {
		refused := deletionsRefusedT(t, policy) - before
		return refused >= want, fmt.Sprintf("%v refused so far", refused), nil
	})
}

// drainingFinalizer holds an object after its deletion, standing in for whatever keeps it while nodes drain.
const drainingFinalizer = "e2e.kiso.dev/draining-nodes"

// holdObject adds a finalizer to a cluster-scoped object, standing in for what would hold it after its deletion:
// Karpenter's termination finalizer on an EC2NodeClass while NodeClaims still refer to it, or foreground
// deletion on a NodePool while its NodeClaims go.
func holdObject(t *testing.T, gvk schema.GroupVersionKind, resource, name string) {
	t.Helper()
	u := env.Cluster.GetT(t, gvk, "", name)
	patch, err := json.Marshal([]map[string]any{{"op": "add", "path": "/metadata/finalizers", "value": append(u.GetFinalizers(), drainingFinalizer)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", resource, name, "--type=json", "-p", string(patch)); err != nil {
		t.Fatalf("cannot add finalizer %s to %s %s: %v", drainingFinalizer, resource, name, err)
	}
}

// releaseObject removes the finalizer holdObject added, if it is still there.
func releaseObject(t *testing.T, gvk schema.GroupVersionKind, resource, name string) {
	t.Helper()
	u, err := env.Cluster.Get(context.Background(), gvk, "", name)
	if err != nil || !slices.Contains(u.GetFinalizers(), drainingFinalizer) {
		return
	}
	remaining := slices.DeleteFunc(u.GetFinalizers(), func(f string) bool { return f == drainingFinalizer })
	patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": "/metadata/finalizers", "value": remaining}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Kubectl.Run(context.Background(), nil, "patch", resource, name, "--type=json", "-p", string(patch)); err != nil {
		t.Errorf("cannot remove finalizer %s from %s %s: %v", drainingFinalizer, resource, name, err)
	}
}

// composedVersionsT maps each object an XR composed to its UID and resourceVersion.
func composedVersionsT(t *testing.T, refs []composedRef) map[string]string {
	t.Helper()
	out := make(map[string]string, len(refs))
	for _, r := range refs {
		u := env.Cluster.GetT(t, r.GVK, r.Namespace, r.Name)
		out[r.String()] = string(u.GetUID()) + "@" + u.GetResourceVersion()
	}
	return out
}

// nodeClassGuardPolicy is the cluster's admission policy that keeps a tenant NodeClass while a NodePool
// launches from it.
const nodeClassGuardPolicy = "kiso-nodeclass-in-use"

// waitUntilDeletionRefusedT waits until the admission policy refuses deleting the object (args: resource and
// name), tried as a server-side dry run: the apiserver loads a policy a moment after it is written, and a deletion
// tried before would go through.
func waitUntilDeletionRefusedT(t *testing.T, args []string, policies ...string) {
	t.Helper()
	waitForT(t, xrSettleTimeout, "ValidatingAdmissionPolicy "+strings.Join(policies, " or ")+" to refuse deleting "+strings.Join(args, " "), func(context.Context) (bool, string, error) {
		out := env.TryT(t, nil, append([]string{"delete", "--dry-run=server"}, args...)...)
		if out.ExitCode == 0 {
			return false, "a dry run of the deletion goes through", nil
		}
		return slices.ContainsFunc(policies, func(p string) bool { return strings.Contains(out.Stderr, "ValidatingAdmissionPolicy '"+p+"'") }), strings.TrimSpace(out.Stderr), nil
	})
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
