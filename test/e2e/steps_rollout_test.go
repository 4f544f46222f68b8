package e2e

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Steps of an XKarpenterCluster's rollout of a reference pair: its status, patching the cluster, and nodes
// launched from the current template.

const (
	rolloutCluster = "e2e-placement"
	// rolloutSoak is short so the scenario is quick; each wave still soaks before the next opens.
	rolloutSoak = 20 * time.Second
	// rolloutTimeout bounds a wave's pools changing and Karpenter replacing their drifted nodes.
	rolloutTimeout = 4 * time.Minute
	// driftedNodeAlert is the alert a node Karpenter does not replace raises, and driftedNodeClaimsSeries the
	// series its expression reads: Karpenter's count of each NodeClaim's Drifted=True condition.
	driftedNodeAlert        = "KarpenterDriftedNodeNotReplaced"
	driftedNodeClaimsSeries = `operator_nodeclaim_status_condition_count{type="Drifted",status="True"}`
)

// rolloutState is the cluster's status for the scenario's reference pair.
type rolloutState struct {
	Revision, HeldBy, Reason, Message, WaveDoneAt string
	Wave                                          int32
	On                                            map[string]int32
	Skipped                                       []string
}

// rolloutOfReference is a cluster's status for the reference pair whose NodePool and NodeClass are both named
// reference.
func rolloutOfReference(u *unstructured.Unstructured, reference string) rolloutState {
	st := rolloutState{On: map[string]int32{}}
	rollouts, _, _ := unstructured.NestedSlice(u.Object, "status", "rollouts")
	for _, raw := range rollouts {
		r, _ := raw.(map[string]any)
		if !strings.HasSuffix(fmt.Sprint(r["reference"]), "/"+reference+",NodePool/"+reference) {
			continue
		}
		st.Revision, _ = r["revision"].(string)
		st.HeldBy, _ = r["heldBy"].(string)
		st.WaveDoneAt, _ = r["waveDoneAt"].(string)
		st.Skipped, _, _ = unstructured.NestedStringSlice(r, "skipped")
		w, _, _ := unstructured.NestedInt64(r, "wave")
		st.Wave = int32(w)
		counts, _, _ := unstructured.NestedSlice(r, "organizations")
		for _, c := range counts {
			cm, _ := c.(map[string]any)
			n, _, _ := unstructured.NestedInt64(cm, "organizations")
			st.On[fmt.Sprint(cm["revision"])] = int32(n)
		}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		c, _ := raw.(map[string]any)
		if c["type"] == "RolledOut" {
			st.Reason, _ = c["reason"].(string)
			st.Message, _ = c["message"].(string)
		}
	}
	return st
}

// waitForClusterRolloutT waits until an XKarpenterCluster's rollout of a reference pair is as wanted.
func waitForClusterRolloutT(t *testing.T, cluster, reference, what string, want func(rolloutState) bool) rolloutState {
	t.Helper()
	var out rolloutState
	env.Cluster.WaitForT(t, rolloutTimeout, ClusterKind, "", cluster, func(u *unstructured.Unstructured) (bool, string) {
		out = rolloutOfReference(u, reference)
		return want(out), fmt.Sprintf("%s: wave %d, revision %s, on %v, RolledOut %s, %s", what, out.Wave, out.Revision, out.On, out.Reason, conditionSummary(u))
	})
	return out
}

// A rolloutRecorder keeps every distinct state a cluster's rollout of one reference pair goes through, read as
// often as waitFor reads, from when it starts until the test ends. A step that looks for a state a wave passes
// through (done and soaking) while the test waits on something else (its nodes replaced) finds it in the record:
// on a busy machine the soak can end, and the rollout move on, before a wait started afterwards reads the cluster.
type rolloutRecorder struct {
	mu     sync.Mutex
	states []rolloutState
}

// recordRolloutT starts recording the rollout of reference on cluster.
func recordRolloutT(t *testing.T, cluster, reference string) *rolloutRecorder {
	t.Helper()
	rec := &rolloutRecorder{}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if u, err := env.Cluster.Get(ctx, ClusterKind, "", cluster); err == nil {
				rec.add(rolloutOfReference(u, reference))
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(pollInterval):
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	return rec
}

func (rec *rolloutRecorder) add(s rolloutState) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if n := len(rec.states); n == 0 || !reflect.DeepEqual(rec.states[n-1], s) {
		rec.states = append(rec.states, s)
	}
}

// waitForT waits until the rollout has been, since the record started, in a state want accepts, and returns the
// first such state.
func (rec *rolloutRecorder) waitForT(t *testing.T, what string, want func(rolloutState) bool) rolloutState {
	t.Helper()
	var found rolloutState
	waitForT(t, rolloutTimeout, what, func(context.Context) (bool, string, error) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, s := range rec.states {
			if want(s) {
				found = s
				return true, "", nil
			}
		}
		if n := len(rec.states); n > 0 {
			last := rec.states[n-1]
			return false, fmt.Sprintf("%d states recorded, the last wave %d, revision %s, on %v, RolledOut %s", n, last.Wave, last.Revision, last.On, last.Reason), nil
		}
		return false, "nothing recorded yet", nil
	})
	return found
}

// lastBeforeT waits until the rollout's latest recorded state is one want accepts, or one past it (past accepts
// it), and returns the last state want accepted: what a wait that read the cluster once it got there would have
// read, had the rollout not moved past it meanwhile. A wave seen done and then held again (Karpenter had not yet
// marked its nodes drifted) is done only when last seen so.
func (rec *rolloutRecorder) lastBeforeT(t *testing.T, what string, want, past func(rolloutState) bool) rolloutState {
	t.Helper()
	var found rolloutState
	waitForT(t, rolloutTimeout, what, func(context.Context) (bool, string, error) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		n := len(rec.states)
		if n == 0 {
			return false, "nothing recorded yet", nil
		}
		last := rec.states[n-1]
		if !want(last) && !past(last) {
			return false, fmt.Sprintf("%d states recorded, the last wave %d, revision %s, on %v, RolledOut %s", n, last.Wave, last.Revision, last.On, last.Reason), nil
		}
		for i := n - 1; i >= 0; i-- {
			if want(rec.states[i]) {
				found = rec.states[i]
				return true, "", nil
			}
		}
		return false, "", fmt.Errorf("the rollout went past %s without being recorded there", what)
	})
	return found
}

func patchClusterT(t *testing.T, patch string) {
	t.Helper()
	if _, err := env.Kubectl.Run(t.Context(), nil, "patch", "xkarpentercluster", rolloutCluster, "--type=merge", "-p", patch); err != nil {
		t.Fatalf("cannot patch XKarpenterCluster %s: %v", rolloutCluster, err)
	}
}

// launchedFromCurrentTemplate reports whether a node's NodeClaim was launched from its NodePool's current template:
// its karpenter.sh/nodepool-hash is the NodePool's, in the cluster c.
func launchedFromCurrentTemplate(ctx context.Context, c *Cluster, pool, node string) (bool, string, error) {
	np, err := c.Get(ctx, NodePoolKind, "", pool)
	if err != nil {
		return false, "", err
	}
	claims, err := c.List(ctx, NodeClaimKind, "", nodePoolLabel+"="+pool)
	if err != nil {
		return false, "", err
	}
	for _, c := range claims {
		if name, _, _ := unstructured.NestedString(c.Object, "status", "nodeName"); name != node {
			continue
		}
		want, got := np.GetAnnotations()[karpenterPoolHash], c.GetAnnotations()[karpenterPoolHash]
		return want != "" && got == want, fmt.Sprintf("node %s was launched from template %s of NodePool %s, which is at %s", node, got, pool, want), nil
	}
	return false, "no NodeClaim of " + pool + " names node " + node, nil
}

// karpenterPoolHash is the hash of a NodePool's template Karpenter keeps on it and on each NodeClaim it launches.
const karpenterPoolHash = "karpenter.sh/nodepool-hash"
