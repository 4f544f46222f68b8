package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kiso-dev/kiso/internal/process"
)

// readsEnv is set by make bench-reads.
const readsEnv = "KISO_BENCH_READS"

// The reads benchmark's size: the promise of "Reads that grow with the cluster" (docs/scale-history.md) is held to.
const (
	readsPods       = 5000
	readsNodeClaims = 2000
	// readsWriters is how many goroutines create the objects.
	readsWriters = 4
	// readsTimeout bounds each wait of the benchmark; it is a failure bound, not a measurement.
	readsTimeout = 15 * time.Minute
)

// PodKind is the core Pod.
var PodKind = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// TestReadsAtScaleBenchmark measures what the two reads that grow with the cluster cost on the real control plane:
// an organization in Warn mode whose namespace holds readsPods running pods, and a cluster whose open rollout
// wave is judged on readsNodeClaims NodeClaims, each object as the size tests build it (a Deployment's pod and an
// AWS NodeClaim, with their status). Karpenter, kube-scheduler and kwok are frozen meanwhile (SIGSTOP): they
// would act on the objects, and the benchmark measures Crossplane and the functions. It prints each server's
// memory before and after, how long each read took to reach the claim or the cluster, and what one pod created
// and deleted costs the Warn-mode organization. Its numbers are its result; it fails only if a read never arrives.
func TestReadsAtScaleBenchmark(t *testing.T) {
	if os.Getenv(readsEnv) != "1" {
		t.Skipf("set %s=1 (make bench-reads) to run the reads benchmark", readsEnv)
	}
	requireNodesT(t)
	env.ApplyT(t, readTestdataT(t, "karpenter", "references.yaml"))
	env.ApplyT(t, readTestdataT(t, "admission", "cluster.yaml"))
	patchClusterT(t, `{"spec":{"rollout":{"waves":[{"percent":100}],"soak":"1m"}}}`)
	waitForClusterComposedT(t, fleetCluster{name: rolloutCluster})
	env.ApplyT(t, fleetManifest(0, 1, false, rolloutCluster))
	waitForFleetReadyT(t, 1)
	org := fleetOrganization(0)
	namespace := org + "-web"
	xr := tenant{Namespace: namespace, Name: org}.xrName(t)
	pool := poolOfT(t, xr)
	env.Cluster.WaitForT(t, readsTimeout, ClusterKind, "", rolloutCluster, func(u *unstructured.Unstructured) (bool, string) {
		c, _ := Condition(u, "RolledOut")
		return c.Status == "True", "RolledOut " + c.Status + " " + c.Reason
	})

	for _, name := range []string{"karpenter", "kube-scheduler", "kwok"} {
		freezeT(t, name)
	}
	// Deleted before they are thawed: Karpenter would launch nodes for the pods and act on the NodeClaims.
	t.Cleanup(func() {
		_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "pods", "--all", "-n", namespace, "--wait=false")
		_, _ = env.Kubectl.Run(context.Background(), nil, "delete", "nodeclaims", "-l", "karpenter.sh/nodepool="+pool, "--wait=false")
	})
	before := usageByServer(env.servers.Usage())

	// The organization's pods, created in Enforce mode, so they select its pool; then Warn mode reads them all
	// once, and finding more than it recounts at each change, pauses its count for an hour. They run as the
	// fixture's ServiceAccount, which the ServiceAccount admission plugin wants to exist.
	env.ApplyT(t, []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: checkout-api, namespace: "+namespace+"}\n"))
	selector := map[string]string{"node-restriction.kubernetes.io/kiso.dev.organization": org}
	toleration := corev1.Toleration{Key: "kiso.dev/organization", Operator: corev1.TolerationOpEqual, Value: org, Effect: corev1.TaintEffectNoSchedule}
	waitUntilAdmittedT(t, newPod("probe", namespace, selector, toleration))
	start := time.Now()
	createScaleObjectsT(t, PodKind, namespace, "pod", readsPods, func(i int, u *unstructured.Unstructured) {
		u.SetName(fmt.Sprintf("app-%05d", i))
		unstructured.RemoveNestedField(u.Object, "spec", "nodeName")
		_ = unstructured.SetNestedStringMap(u.Object, selector, "spec", "nodeSelector")
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"key": toleration.Key, "operator": string(toleration.Operator), "value": org, "effect": string(toleration.Effect)}}, "spec", "tolerations")
	})
	created := time.Since(start)
	withPods := usageByServer(env.servers.Usage())
	warnFrom := time.Now()
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "karpenterisolation", org, "-n", namespace, "--type=merge", "-p", `{"spec":{"placement":{"mode":"Warn"}}}`); err != nil {
		t.Fatalf("cannot switch %s to Warn mode: %v", org, err)
	}
	env.Cluster.WaitForT(t, readsTimeout, IsolationClaimKind, namespace, org, func(u *unstructured.Unstructured) (bool, string) {
		n, _, _ := unstructured.NestedInt64(u.Object, "status", "podsCounted")
		return n == readsPods, fmt.Sprintf("status.podsCounted %d", n)
	})
	warnRead := time.Since(warnFrom)
	afterPods := usageByServer(env.servers.Usage())

	// One pod that selects no pool created and deleted while the count is paused: it should wake nothing. The
	// calls are counted until the reference edit below, which wakes the organization.
	waitQuietT(t, xr)
	calls := callsOfT(t, xr)
	fnCPU := usageByServer(env.servers.Usage())[isolationFunction].CPUSeconds
	pod := newPod("churn", namespace, nil)
	if out := submitPod(t, pod, false); out.ExitCode != 0 {
		t.Fatalf("cannot create pod %s: %s", pod.Name, out.Stderr)
	}
	if out := env.TryT(t, nil, "delete", "pod", pod.Name, "-n", namespace); out.ExitCode != 0 {
		t.Fatalf("cannot delete pod %s: %s", pod.Name, out.Stderr)
	}
	churn := time.Now()

	// A wave judged on the NodeClaims: every one launched from another template than the pool's, so all are drifted.
	createScaleObjectsT(t, NodeClaimKind, "", "nodeclaim", readsNodeClaims, func(i int, u *unstructured.Unstructured) {
		u.SetName(fmt.Sprintf("%s-%05d", pool, i))
		labels := u.GetLabels()
		labels["karpenter.sh/nodepool"] = pool
		u.SetLabels(labels)
		u.SetFinalizers(nil)
	})
	churnCalls := callsOfT(t, xr) - calls
	churnCPU := usageByServer(env.servers.Usage())[isolationFunction].CPUSeconds - fnCPU
	churnTook := time.Since(churn)
	waveFrom := time.Now()
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "nodepool", "kwok-reference", "--type=merge", "-p", `{"spec":{"template":{"metadata":{"labels":{"platform.example.com/edition":"2"}}}}}`); err != nil {
		t.Fatalf("cannot edit the reference NodePool: %v", err)
	}
	env.Cluster.WaitForT(t, readsTimeout, NodePoolKind, "", pool, func(u *unstructured.Unstructured) (bool, string) {
		labels, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels")
		return labels["platform.example.com/edition"] == "2", "not on the new revision yet"
	})
	markReady(t, NodePoolKind, pool) // as Karpenter would, were it not frozen
	wantHeld := fmt.Sprintf("%d of NodePool %s's nodes are drifted", readsNodeClaims, pool)
	env.Cluster.WaitForT(t, readsTimeout, ClusterKind, "", rolloutCluster, func(u *unstructured.Unstructured) (bool, string) {
		rollouts, _, _ := unstructured.NestedSlice(u.Object, "status", "rollouts")
		for _, r := range rollouts {
			if held, _ := r.(map[string]any)["heldBy"].(string); strings.Contains(held, wantHeld) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("status.rollouts %v", rollouts)
	})
	waveRead := time.Since(waveFrom)
	afterClaims := usageByServer(env.servers.Usage())

	fmt.Printf("\nReads at scale (%s): %d pods created in %s (Enforce mode, each selecting the organization's pool)\n", time.Now().UTC().Format("2006-01-02"), readsPods, created.Round(time.Second))
	fmt.Printf("Warn mode: %d pods counted on the claim %s after the switch; more than %d, so counted once an hour\n", readsPods, warnRead.Round(100*time.Millisecond), 1000)
	fmt.Printf("one pod created and deleted while the count is paused: %d calls of the isolation function, %.1f of its CPU-seconds, over %s\n", churnCalls, churnCPU, churnTook.Round(100*time.Millisecond))
	fmt.Printf("rollout: a wave held by %d drifted NodeClaims %s after the reference edit\n", readsNodeClaims, waveRead.Round(100*time.Millisecond))
	fmt.Printf("%-28s %14s %18s %22s %26s\n", "RSS MB now (peak)", "before", "with the pods", "Warn mode counted", "and the NodeClaims judged")
	for _, u := range env.servers.Usage() {
		fmt.Printf("%-28s %14s %18s %22s %26s\n", u.Name, rss(before[u.Name]), rss(withPods[u.Name]), rss(afterPods[u.Name]), rss(afterClaims[u.Name]))
	}
}

// waitQuietT waits until the isolation function's latest call for the XR asked for half an hour or more and
// Crossplane's watch circuit breaker for it is closed (its Responsive condition True, or False for longer than
// the breaker's window, when kiso no longer asks for 25 s): the organization is called again only by an event.
func waitQuietT(t *testing.T, xr string) {
	t.Helper()
	waitForT(t, settleTimeout, "XR "+xr+" quiet", func(ctx context.Context) (bool, string, error) {
		u, err := env.Cluster.Get(ctx, IsolationKind, "", xr)
		if err != nil {
			return false, "", err
		}
		if opened, open := breakerOpened(u); open && time.Since(opened) < breakerWindow {
			return false, "Crossplane's watch circuit breaker opened at " + opened.Format(time.RFC3339), nil
		}
		latest, err := env.latestTTLs(isolationFunction)
		if err != nil {
			return false, "", err
		}
		ttl, err := time.ParseDuration(latest[xr])
		return err == nil && ttl >= 30*time.Minute, "its latest call asked for " + latest[xr], nil
	})
}

// breakerOpened is when an XR's Responsive condition turned False, if it is False.
func breakerOpened(u *unstructured.Unstructured) (time.Time, bool) {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conditions {
		c, _ := raw.(map[string]any)
		if c["type"] != "Responsive" || c["status"] != "False" {
			continue
		}
		at, err := time.Parse(time.RFC3339, fmt.Sprint(c["lastTransitionTime"]))
		return at, err == nil
	}
	return time.Time{}, false
}

// breakerWindow is how long Crossplane's watch circuit breaker stays open after a burst (fncall.TTLDropping's
// window).
const breakerWindow = 5*time.Minute + 30*time.Second

// rss is a server's resident memory now and its peak so far.
func rss(u process.Usage) string { return fmt.Sprintf("%d (peak %d)", u.RSSMB, u.PeakRSSMB) }

// poolOfT is the name of the only pool an XR composes.
func poolOfT(t *testing.T, xr string) string {
	t.Helper()
	u := env.Cluster.WaitForT(t, readsTimeout, IsolationKind, "", xr, func(u *unstructured.Unstructured) (bool, string) {
		names, _, _ := unstructured.NestedString(u.Object, "status", "poolNames")
		return names != "" && !strings.Contains(names, ","), "status.poolNames " + names
	})
	names, _, _ := unstructured.NestedString(u.Object, "status", "poolNames")
	return names
}

// freezeT stops a server of the main control plane (SIGSTOP) until the test ends.
func freezeT(t *testing.T, name string) {
	t.Helper()
	if err := env.servers.Signal(name, syscall.SIGSTOP); err != nil {
		t.Fatalf("cannot freeze %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := env.servers.Signal(name, syscall.SIGCONT); err != nil {
			t.Errorf("cannot thaw %s: %v", name, err)
		}
	})
}

// createScaleObjectsT creates n copies of one of the size tests' objects (functions/internal/fntest/testdata/scale),
// each changed by edit, then writes the fixture's status on each as its controller would, with readsWriters
// writers. Their owners are dropped (the garbage collector would delete what they own) and what the apiserver sets
// on create is cleared.
func createScaleObjectsT(t *testing.T, gvk schema.GroupVersionKind, namespace, fixture string, n int, edit func(int, *unstructured.Unstructured)) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, "functions", "internal", "fntest", "testdata", "scale", fixture+".json"))
	if err != nil {
		t.Fatal(err)
	}
	proto := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &proto.Object); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "ownerReferences", "generateName", "generation"} {
		unstructured.RemoveNestedField(proto.Object, "metadata", f)
	}
	proto.SetNamespace(namespace)
	status := proto.Object["status"]
	r, err := env.Cluster.Resource(gvk, namespace)
	if err != nil {
		t.Fatal(err)
	}
	manager := map[string]string{"pod": "kubelet", "nodeclaim": "karpenter"}[fixture]
	var wg sync.WaitGroup
	errs := make(chan error, readsWriters)
	for w := range readsWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += readsWriters {
				u := proto.DeepCopy()
				edit(i, u)
				delete(u.Object, "status")
				created, err := r.Create(context.Background(), u, metav1.CreateOptions{FieldManager: "e2e"})
				if err != nil {
					errs <- fmt.Errorf("create %s %s: %w", gvk.Kind, u.GetName(), err)
					return
				}
				created.Object["status"] = status
				if _, err := r.UpdateStatus(context.Background(), created, metav1.UpdateOptions{FieldManager: manager}); err != nil {
					errs <- fmt.Errorf("status of %s %s: %w", gvk.Kind, u.GetName(), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
