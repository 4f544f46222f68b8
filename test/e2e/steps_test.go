package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// Steps every scenario shares: waiting on a condition, reading a scenario's manifests, cleaning up, the
// platform's references and cluster, and marking what Karpenter would.

// waitForT polls check until it reports done, failing the test on timeout with the last "not yet" reason.
func waitForT(t *testing.T, timeout time.Duration, what string, check func(context.Context) (bool, string, error)) {
	t.Helper()
	if err := waitFor(t.Context(), timeout, what, check); err != nil {
		t.Fatal(err)
	}
}

// useReferenceObjectsT applies the platform's reference NodeClass and NodePool that pools are cloned from. They
// stay for the rest of the run, as a platform's do: scenarios side by side clone them, and no scenario's end may
// take them from another. A scenario that changes its references has its own (TestGapsTouchNothing).
func useReferenceObjectsT(t *testing.T) {
	t.Helper()
	// One at a time: kubectl apply creates what it does not find, and two scenarios starting together would both
	// try to create them.
	referencesApply.Lock()
	defer referencesApply.Unlock()
	env.ApplyT(t, readTestdataT(t, "isolation", "references.yaml"))
}

// referencesApply serializes applying the shared reference objects.
var referencesApply sync.Mutex

func readTestdataT(t *testing.T, scenario, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + scenario + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// deleteAtCleanup deletes what a manifest names, waiting until it is gone; the test's context is done by
// then, so it has its own.
func deleteAtCleanup(t *testing.T, manifest []byte) {
	t.Helper()
	if err := deleteOnceNotInUse(context.Background(), manifest); err != nil {
		t.Errorf("cannot clean up: %v", err)
	}
}

// deleteOnceNotInUse deletes what a manifest holds and waits until it is gone. An XKarpenterCluster is refused
// while a tenant pool is still bound to it (the claims deleted before it are still being garbage collected): it is
// deleted again once they are gone, as an operator would.
func deleteOnceNotInUse(ctx context.Context, manifest []byte) error {
	err := env.Kubectl.Delete(ctx, manifest, true)
	if err != nil && strings.Contains(err.Error(), " is in use: ") {
		err = waitFor(ctx, 180*time.Second, "the cluster's tenant pools to go", func(ctx context.Context) (bool, string, error) {
			if err := env.Kubectl.Delete(ctx, manifest, true); err != nil {
				return false, err.Error(), nil
			}
			return true, "", nil
		})
	}
	return err
}

// requireNodesT skips a scenario that needs Karpenter, kube-scheduler and kwok where they do not run; under
// CI (the environment variable CI set, as every CI service sets it) it fails instead: the outcome scenarios
// are what kiso is for, and a green run without them proves nothing.
func requireNodesT(t *testing.T) {
	t.Helper()
	if env.Nodes {
		return
	}
	const why = "Karpenter, kube-scheduler and kwok run only in a network namespace, which this run could not create (neither as root nor in a user namespace)"
	if os.Getenv("CI") != "" {
		t.Fatal(why + "; CI is set, so this outcome scenario may not be skipped")
	}
	t.Skip(why)
}

// placementClusterUsers counts the tests using the shared local cluster e2e-placement, which the first of them
// applies and the last deletes.
var placementClusterUsers struct {
	sync.Mutex
	n int
}

// usePlacementClusterT applies the XKarpenterCluster whose composition renders the cluster's placement
// policies, unless another test using it has, and deletes it once the last test using it has ended.
func usePlacementClusterT(t *testing.T) {
	t.Helper()
	cluster := readTestdataT(t, "admission", "cluster.yaml")
	placementClusterUsers.Lock()
	defer placementClusterUsers.Unlock()
	if placementClusterUsers.n == 0 {
		env.ApplyT(t, cluster)
	}
	placementClusterUsers.n++
	t.Cleanup(func() {
		placementClusterUsers.Lock()
		defer placementClusterUsers.Unlock()
		if placementClusterUsers.n--; placementClusterUsers.n == 0 {
			deleteLocalClusterAtCleanup(t, cluster)
		}
	})
}

// deleteLocalClusterAtCleanup deletes a local XKarpenterCluster and waits until the admission policies it composed
// under fixed names are gone too: Crossplane deletes what an XR composed after the XR, and the next scenario to
// compose a local cluster must not find them still there, being deleted.
func deleteLocalClusterAtCleanup(t *testing.T, cluster []byte) {
	t.Helper()
	deleteAtCleanup(t, cluster)
	if err := waitForLocalClusterGone(context.Background(), cluster); err != nil {
		t.Error(err)
	}
}

// waitForLocalClusterGone waits until what a deleted local XKarpenterCluster composed under fixed names is gone:
// the admission policies, then the view it composed for its organizations. The garbage collector deletes them
// after the XR; the next scenario to compose a local cluster must not find them still there, being deleted, and a
// cluster applied again under the same name meanwhile would find the old view, which then goes, and its
// organizations would read no view until the new cluster composed its own again.
func waitForLocalClusterGone(ctx context.Context, cluster []byte) error {
	var errs []error
	for _, name := range []string{placementPolicy, poolsPolicy, warnPolicy, nodeClassGuardPolicy} {
		if err := env.Cluster.WaitForDeletion(ctx, 90*time.Second, admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy"), "", name); err != nil {
			errs = append(errs, fmt.Errorf("the placement policy %s outlived its cluster: %w", name, err))
		}
	}
	var xr struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(cluster, &xr); err != nil || xr.Metadata.Name == "" {
		return errors.Join(append(errs, fmt.Errorf("cannot read the cluster's name from its manifest: %w", err))...)
	}
	if err := env.Cluster.WaitForDeletion(ctx, 90*time.Second, ClusterViewKind, "", clusterViewName(xr.Metadata.Name)); err != nil {
		errs = append(errs, fmt.Errorf("the view of cluster %s outlived it: %w", xr.Metadata.Name, err))
	}
	return errors.Join(errs...)
}

// markReady sets a Karpenter object's Ready condition as Karpenter would once
// it has validated the object (no Karpenter runs here). A merge patch of the
// status subresource, not an update: Crossplane's usage controller labels the
// same objects meanwhile, and an update would conflict with it. It waits for the
// object first: Crossplane applies a pool's NodeClass and NodePool in one
// reconcile but not atomically, so seeing one does not mean the other exists.
func markReady(t *testing.T, gvk schema.GroupVersionKind, name string) {
	t.Helper()
	// An object of that name still being deleted (a pool retired a moment ago, its deletion held by a Usage or
	// by Karpenter) is not the one Crossplane composes next: mark the live one, once Crossplane has composed it.
	u := env.Cluster.WaitForT(t, xrSettleTimeout, gvk, "", name, func(u *unstructured.Unstructured) (bool, string) {
		return u.GetDeletionTimestamp() == nil, "still being deleted"
	})
	reportReady(t, u)
}

// reportReady sets an object's Ready condition for its current generation, as Karpenter does for any object it
// still reconciles, one being deleted included.
func reportReady(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "True", "reason": "Ready", "message": "",
		"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339), "observedGeneration": u.GetGeneration(),
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := env.Cluster.Resource(u.GroupVersionKind(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Patch(context.Background(), u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("cannot mark %s %s Ready: %v", u.GetKind(), u.GetName(), err)
	}
}

// markPoolReady marks a pool's NodeClass and NodePool Ready.
func markPoolReady(t *testing.T, pool string) {
	t.Helper()
	markReady(t, EC2NodeClassKind, pool)
	markReady(t, NodePoolKind, pool)
}

// versions maps each object's name to its UID and resourceVersion.
func versions(t *testing.T, gvk schema.GroupVersionKind, labelSelector string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, u := range env.Cluster.ListT(t, gvk, "", labelSelector) {
		out[u.GetName()] = string(u.GetUID()) + "@" + u.GetResourceVersion()
	}
	return out
}

// touchXR makes Crossplane reconcile the XR (an annotation change is an update its controller watches) and
// returns once a reconcile that started after the call has run to its end, told by a condition rather than
// by a guessed time: the XR is touched, then touched again once a reconcile that read the touched XR has
// called the function; when a reconcile that read the second touch calls it, the first is over, applies and
// status included, since Crossplane never reconciles one XR twice at once.
func touchXR(t *testing.T, xr string) {
	t.Helper()
	for round := 1; round <= 2; round++ {
		var touchedAt int64
		waitTouchingXRT(t, xr, fmt.Sprintf("a reconcile of XR %s that read touch %d", xr, round), func(_ context.Context, version int64) (bool, string, error) {
			if touchedAt == 0 {
				touchedAt = version
			}
			n, err := env.CallsAfter(isolationFunction, xr, touchedAt)
			if err != nil {
				return false, "", err
			}
			return n > 0, fmt.Sprintf("no function call has read the XR at resourceVersion %d or later", touchedAt), nil
		})
	}
}

// waitTouchingXRT annotates the isolation XR, then waits for check, annotating it again every 10 s meanwhile:
// after a burst of events (a mode switch), Crossplane's watch circuit breaker drops an XR's events and lets one
// through every 30 s. check is handed the XR's resourceVersion after the last annotation.
func waitTouchingXRT(t *testing.T, xr, what string, check func(ctx context.Context, version int64) (bool, string, error)) {
	t.Helper()
	waitTouchingT(t, "xkarpenterisolation", xr, what, check)
}

// waitTouchingT is waitTouchingXRT for an XR of any resource (e.g. xkarpentercluster).
func waitTouchingT(t *testing.T, resource, xr, what string, check func(ctx context.Context, version int64) (bool, string, error)) {
	t.Helper()
	var (
		touched time.Time
		version int64
	)
	waitForT(t, xrSettleTimeout, what, func(ctx context.Context) (bool, string, error) {
		if time.Since(touched) >= 10*time.Second {
			touch := fmt.Sprintf("e2e.kiso.dev/touch=wait.%d", touches.Add(1))
			out, err := env.Kubectl.Run(ctx, nil, "annotate", "--overwrite", resource, xr, touch, "-o", "jsonpath={.metadata.resourceVersion}")
			if err != nil {
				return false, "", err
			}
			if version, err = strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err != nil {
				return false, "", fmt.Errorf("XR %s: resourceVersion %q after the touch: %w", xr, out, err)
			}
			touched = time.Now()
		}
		return check(ctx, version)
	})
}

func withoutCrossplaneLabels(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if !strings.HasPrefix(k, "crossplane.io/") {
			out[k] = v
		}
	}
	return out
}

// nested reads a field by path; a numeric element indexes a list.
func nested(u *unstructured.Unstructured, path ...string) any {
	var v any = u.Object
	for _, p := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// step runs one named step of a scenario and stops the scenario if it fails: each step builds on what the
// ones before it proved.
func step(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, f) {
		t.FailNow()
	}
}

// stepBeside runs a named step beside the scenario's other stepBeside steps, each on objects of its own: the
// scenario's own cleanups run once every one has ended.
func stepBeside(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		f(t)
	})
}

// assertStillThereT checks that each object versions listed (name to UID@resourceVersion) is still there, not
// being deleted, and not composed anew (same UID; its resourceVersion may move); when says at which point.
func assertStillThereT(t *testing.T, gvk schema.GroupVersionKind, before map[string]string, when string) {
	t.Helper()
	for name, version := range before {
		u, err := env.Cluster.Get(t.Context(), gvk, "", name)
		switch {
		case err != nil:
			t.Errorf("%s: %s %s is gone: %v", when, gvk.Kind, name, err)
		case u.GetDeletionTimestamp() != nil:
			t.Errorf("%s: %s %s is being deleted", when, gvk.Kind, name)
		case string(u.GetUID()) != strings.SplitN(version, "@", 2)[0]:
			t.Errorf("%s: %s %s was composed anew", when, gvk.Kind, name)
		}
	}
}
