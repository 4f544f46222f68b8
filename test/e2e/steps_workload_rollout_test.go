package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The workload cluster's reference pair and the delays that tell its releases apart.
const (
	workloadReference = "kwok-reference"
	workloadRelease1  = "0s"
	workloadRelease2  = "1s"
)

// assertRemoteRolloutT is the platform changing the workload cluster's reference NodeClass under a rollout in two
// waves, [canary] then everyone: the canary's NodeClass moves there, the workload cluster's Karpenter replaces its
// nodes, and only then is its wave done, as the NodeClaims kiso reads from the workload cluster (through
// provider-kubernetes collections, listed at its 10-minute poll as installed, and again every 30 s while kiso
// stamps them during a rollout) say; the other organization moves only after the soak. Nothing here
// touches an XR or speeds a poll.
func assertRemoteRolloutT(t *testing.T, wl *WorkloadCluster, canary, other organization) {
	t.Helper()
	patchRemote := func(t *testing.T, patch string) {
		t.Helper()
		if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "xkarpentercluster", remoteClusterXR, "--type=merge", "-p", patch); err != nil {
			t.Fatalf("cannot patch XKarpenterCluster %s: %v", remoteClusterXR, err)
		}
	}
	// The steps after this one change the reference and expect it at once: no rollout once this one is done.
	defer patchRemote(t, `{"spec":{"rollout":null}}`)
	patchRemote(t, fmt.Sprintf(`{"spec":{"rollout":{"waves":[{"organizations":[%q]},{"percent":100}],"soak":"%s"}}}`, canary.Name, rolloutSoak))
	waitRemote := func(what string, want func(rolloutState) bool) rolloutState {
		t.Helper()
		return waitForClusterRolloutT(t, remoteClusterXR, workloadReference, what, want)
	}
	first := waitRemote("the rollout of the first release to be done", func(r rolloutState) bool { return r.Reason == "Complete" && r.On[r.Revision] == 2 })

	canaryNS, canaryPool := canary.Stacks["web"].Namespaces[0], canary.Stacks["web"].Pool
	otherNS, otherPool := other.Stacks["web"].Namespaces[0], other.Stacks["web"].Pool
	canaryNodes, otherNodes := nodesOfPodsT(t, wl.Cluster, canaryNS), nodesOfPodsT(t, wl.Cluster, otherNS)
	// The canary's wave passes through states the steps below look for while they wait on the workload cluster.
	rec := recordRolloutT(t, remoteClusterXR, workloadReference)
	changed := time.Now()
	if _, err := wl.Kubectl.Run(t.Context(), nil, "patch", "kwoknodeclass", workloadReference, "--type=merge",
		"-p", fmt.Sprintf(`{"spec":{"nodeRegistrationDelay":%q}}`, workloadRelease2)); err != nil {
		t.Fatalf("cannot change the workload cluster's reference NodeClass: %v", err)
	}
	second := rec.waitForT(t, "the canary's wave to open on the new release", func(r rolloutState) bool { return r.Revision != first.Revision && r.Wave == 0 }).Revision
	waitForNodeClassDelayT(t, wl.Cluster, canaryPool, workloadRelease2)
	replaced := waitForPoolNodesReplacedT(t, wl.Cluster, canaryNS, canaryPool, canaryNodes)
	r := rec.lastBeforeT(t, "the canary's wave to be done and soak",
		func(r rolloutState) bool { return r.Revision == second && r.Wave == 0 && r.WaveDoneAt != "" },
		func(r rolloutState) bool { return r.Revision == second && r.Wave > 0 })
	env.Timings.Record("workload: NodeClass changed -> canary's nodes replaced there, wave done", time.Since(changed))
	doneAt, err := time.Parse(time.RFC3339, r.WaveDoneAt)
	if err != nil {
		t.Fatalf("status.rollouts[].waveDoneAt %q: %v", r.WaveDoneAt, err)
	}
	for _, name := range replaced {
		n, err := wl.Cluster.Typed.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if launched := n.CreationTimestamp.Truncate(time.Second); doneAt.Before(launched) {
			t.Errorf("the canary's wave was done at %s, before its replacement node %s was launched in the workload cluster at %s", r.WaveDoneAt, name, launched.Format(time.RFC3339))
		}
	}
	// The collection kiso reads the NodeClaims through is composed while a wave is open; the member for the
	// canary's replaced NodeClaim goes while it is.
	waitForNoStaleNodeClaimMemberT(t, wl)
	if got := nodesOfPodsT(t, wl.Cluster, otherNS); !slices.Equal(got, otherNodes) {
		t.Errorf("organization %s's pods moved from nodes %v to %v while only the canary's wave was open", other.Name, otherNodes, got)
	}

	waitForNodeClassDelayT(t, wl.Cluster, otherPool, workloadRelease2)
	if moved, earliest := lastMainWriteT(t, wl.Cluster, KWOKNodeClassKind, otherPool), doneAt.Add(rolloutSoak); moved.Before(earliest.Add(-time.Second)) {
		t.Errorf("organization %s's NodeClass moved at %s, before the canary's wave (done at %s) had soaked %s", other.Name, moved.Format(time.RFC3339), r.WaveDoneAt, rolloutSoak)
	}
	waitForPoolNodesReplacedT(t, wl.Cluster, otherNS, otherPool, otherNodes)
	waitRemote("the rollout to be done", func(r rolloutState) bool { return r.Reason == "Complete" && r.On[second] == 2 })
	env.Timings.Record("workload: NodeClass changed -> 2 waves done, nodes replaced there", time.Since(changed))
}

// waitForNoStaleNodeClaimMemberT waits until every member provider-kubernetes keeps of kiso's NodeClaim collection
// names a NodeClaim in the workload cluster: the install grants the provider the delete Crossplane's RBAC manager
// does not, so the member of a NodeClaim Karpenter replaced goes, and none is left for ever.
func waitForNoStaleNodeClaimMemberT(t *testing.T, wl *WorkloadCluster) {
	t.Helper()
	waitForT(t, rolloutTimeout, "the NodeClaim members of kiso's collection to name only NodeClaims in the workload cluster", func(ctx context.Context) (bool, string, error) {
		claims, err := wl.Cluster.List(ctx, NodeClaimKind, "", "")
		if err != nil {
			return false, "", err
		}
		there := map[string]bool{}
		for _, c := range claims {
			there[c.GetName()] = true
		}
		members, err := env.Cluster.List(ctx, ObjectKind, "", "kubernetes.crossplane.io/owned-by-collection")
		if err != nil {
			return false, "", err
		}
		var kept, stale []string
		for _, m := range members {
			if kind, _, _ := unstructured.NestedString(m.Object, "spec", "forProvider", "manifest", "kind"); kind != "NodeClaim" {
				continue
			}
			name, _, _ := unstructured.NestedString(m.Object, "spec", "forProvider", "manifest", "metadata", "name")
			kept = append(kept, name)
			if !there[name] {
				stale = append(stale, name)
			}
		}
		return len(kept) > 0 && len(stale) == 0, fmt.Sprintf("members name NodeClaims %v, of which %v are gone", kept, stale), nil
	})
}

// nodesOfPodsT is the sorted nodes the pods of a namespace run on, in cluster c.
func nodesOfPodsT(t *testing.T, c *Cluster, namespace string) []string {
	t.Helper()
	pods, err := c.Typed.CoreV1().Pods(namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, p := range pods.Items {
		if !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	slices.Sort(nodes)
	return nodes
}

// waitForNodeClassDelayT waits until a pool's KWOKNodeClass in cluster c has the node registration delay that
// tells a release.
func waitForNodeClassDelayT(t *testing.T, c *Cluster, pool, delay string) {
	t.Helper()
	c.WaitForT(t, rolloutTimeout, KWOKNodeClassKind, "", pool, func(u *unstructured.Unstructured) (bool, string) {
		got, _, _ := unstructured.NestedString(u.Object, "spec", "nodeRegistrationDelay")
		return got == delay, "nodeRegistrationDelay " + got
	})
}

// waitForPoolNodesReplacedT waits until Karpenter has replaced the nodes a namespace's pods ran on: every pod
// runs on a node launched from its pool's current template and none of the old nodes is left. It returns the
// new nodes.
func waitForPoolNodesReplacedT(t *testing.T, c *Cluster, namespace, pool string, old []string) []string {
	t.Helper()
	var nodes []string
	waitForT(t, rolloutTimeout, fmt.Sprintf("the nodes %v of pool %s to be replaced", old, pool), func(ctx context.Context) (bool, string, error) {
		pods, err := c.Typed.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) == 0 {
			return false, fmt.Sprintf("%d pods (%v)", len(pods.Items), err), nil
		}
		nodes = nodes[:0]
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || slices.Contains(old, p.Spec.NodeName) {
				return false, "pod " + p.Name + " is on node " + p.Spec.NodeName, nil
			}
			if current, why, err := launchedFromCurrentTemplate(ctx, c, pool, p.Spec.NodeName); err != nil || !current {
				return false, why, err
			}
			nodes = append(nodes, p.Spec.NodeName)
		}
		for _, n := range old {
			if _, err := c.Typed.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); err == nil {
				return false, "the old node " + n + " is still there", nil
			}
		}
		return true, "", nil
	})
	return nodes
}

// lastMainWriteT is when an object in cluster c was last written other than through a subresource (its managed
// fields' time, to the second): in the workload cluster only provider-kubernetes writes a pool's NodeClass so.
func lastMainWriteT(t *testing.T, c *Cluster, gvk schema.GroupVersionKind, name string) time.Time {
	t.Helper()
	u := c.GetT(t, gvk, "", name)
	var last time.Time
	for _, mf := range u.GetManagedFields() {
		if mf.Subresource == "" && mf.Time != nil && mf.Time.After(last) {
			last = mf.Time.Time
		}
	}
	if last.IsZero() {
		t.Fatalf("%s %s has no managed fields", gvk.Kind, name)
	}
	return last
}
