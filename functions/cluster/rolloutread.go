package main

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// What a staged rollout reads (stagedRollouts.resolve): the tenant pools bound to the cluster, their NodeClaims
// while a wave is judged, and each reference pair's current revision. A pool is done on its revision once
// Karpenter has made it Ready for its spec and replaced every node launched from an older template.

// trackedPool is one organization's pool as a rollout sees it.
type trackedPool struct {
	Name, Organization, Revision string
	// Holdup says why the pool is not done on its revision, "" if it is.
	Holdup string
	// NotReady is true when the holdup is Karpenter saying NotReady.
	NotReady bool
}

// rolloutView is what a reconcile reads for a staged rollout.
type rolloutView struct {
	// Pools per reference pair, of organizations bound to this cluster.
	Pools map[string][]trackedPool
	// Current revision per reference pair; absent while Crossplane has not
	// returned the pair, or it does not exist.
	Current map[string]rollout.Revision
	// Waiting is true until Crossplane has answered for the pools and
	// every reference pair.
	Waiting bool
	// NodesRead is true once Crossplane has answered for the NodeClaims,
	// which are asked for only while a wave is judged.
	NodesRead bool
	// Unread is when the NodeClaims last did not fit in one request (readlimit): none is asked for until
	// readlimit.RetryAfter from then, and every pool's nodes are unknown. Zero while they fit.
	Unread time.Time
}

// nodesUnknown is why a pool is not done while the NodeClaims are unread.
const nodesUnknown = "its nodes are not known: the cluster's NodeClaims did not fit in one request to the function (status.nodeClaimsUnreadAt)"

// readRollout reads the pools, their NodeClaims and the reference pairs; each pair's current revision covers
// what the cluster's pools inherit from its spec.tags. unread is when the NodeClaims last did not fit in a
// request (zero if they did): a pool Karpenter says is Ready is then held by its unknown nodes.
func readRollout(req *fnv1.RunFunctionRequest, keys placement.Keys, xrName string, tags map[string]string, unread time.Time) (rolloutView, error) {
	inherited := rollout.InheritedFrom(tags)
	v := rolloutView{Pools: map[string][]trackedPool{}, Current: map[string]rollout.Revision{}, Unread: unread}
	pools, resolved := fnstate.Required(req, requirePools)
	claims, claimsResolved := fnstate.Required(req, requireNodeClaims)
	v.Waiting, v.NodesRead = !resolved, claimsResolved || !unread.IsZero()
	claimsOf := map[string][]*unstructured.Unstructured{}
	for _, c := range claims {
		if pool := c.Resource.GetLabels()[nodePoolLabel]; pool != "" {
			claimsOf[pool] = append(claimsOf[pool], c.Resource)
		}
	}
	a := placement.NewRolloutAnnotations(keys.Domain)
	for _, np := range pools {
		u := np.Resource
		an := u.GetAnnotations()
		if an[a.Cluster] != xrName || an[a.Reference] == "" || u.GetDeletionTimestamp() != nil {
			// A pool being retired is replaced by another, which the
			// rollout tracks instead.
			continue
		}
		ref := an[a.Reference]
		tp := trackedPool{Name: u.GetName(), Organization: u.GetLabels()[keys.Organization], Revision: an[a.Revision]}
		tp.Holdup, tp.NotReady = poolHoldup(u, claimsOf[u.GetName()], a.NodeClass)
		if tp.Holdup == "" && !unread.IsZero() {
			tp.Holdup = fmt.Sprintf("NodePool %s: %s", u.GetName(), nodesUnknown)
		}
		v.Pools[ref] = append(v.Pools[ref], tp)
		if _, seen := v.Current[ref]; seen {
			continue
		}
		rev, resolved, err := currentRevision(req, ref, inherited)
		if err != nil {
			return v, err
		}
		v.Waiting = v.Waiting || !resolved
		if rev != nil {
			v.Current[ref] = *rev
		}
	}
	return v, nil
}

// currentRevision reads a reference pair from the required resources.
func currentRevision(req *fnv1.RunFunctionRequest, ref string, inherited rollout.Inherited) (*rollout.Revision, bool, error) {
	ncName, npName := referenceRequirements(ref)
	nc, ncResolved := fnstate.Required(req, ncName)
	np, npResolved := fnstate.Required(req, npName)
	if len(nc) == 0 || len(np) == 0 {
		return nil, ncResolved && npResolved, nil
	}
	rev, err := rollout.Current(nc[0].Resource, np[0].Resource, inherited)
	if err != nil {
		return nil, true, err
	}
	return &rev, true, nil
}

// poolHoldup says why a pool is not done on the revision it is rendered
// from: Karpenter has not made its NodePool Ready for its current spec, or
// one of its nodes is drifted (Karpenter's Drifted condition, or a node
// launched from an older template than the NodePool's hash, or from another
// NodeClass than the one the template marks under nodeClassMark: Karpenter
// copies the template's annotations onto each NodeClaim it launches, and its
// hash annotation may lag the template it hashes, which the mark never does).
func poolHoldup(np *unstructured.Unstructured, claims []*unstructured.Unstructured, nodeClassMark string) (string, bool) {
	ready, readyGen := condition(np, conditionReady)
	switch {
	case ready == nil || ready["status"] != string(corev1.ConditionTrue):
		return fmt.Sprintf("NodePool %s is not Ready", np.GetName()), true
	case readyGen != 0 && readyGen < generationOf(np):
		return fmt.Sprintf("Karpenter has not yet seen NodePool %s's new spec", np.GetName()), false
	}
	hash := np.GetAnnotations()[nodePoolHash]
	mark, _, _ := unstructured.NestedString(np.Object, "spec", "template", "metadata", "annotations", nodeClassMark)
	drifted := 0
	for _, c := range claims {
		d, _ := condition(c, conditionDrifted)
		stale := hash != "" && c.GetAnnotations()[nodePoolHash] != "" && c.GetAnnotations()[nodePoolHash] != hash
		stale = stale || (mark != "" && c.GetAnnotations()[nodeClassMark] != mark)
		if (d != nil && d["status"] == string(corev1.ConditionTrue)) || stale {
			drifted++
		}
	}
	if drifted > 0 {
		return fmt.Sprintf("%d of NodePool %s's nodes are drifted and not yet replaced", drifted, np.GetName()), false
	}
	return "", false
}

// condition returns a status condition of an object and its observed
// generation (0 if it has none).
func condition(u *unstructured.Unstructured, typ string) (map[string]any, int64) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		return m, wholeNumber(m["observedGeneration"])
	}
	return nil, 0
}
