package main

import (
	"fmt"

	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
)

// Karpenter replaces a node (drift: a NodeClass change, a rollout wave; or a static pool's lost replica) only
// after launching its replacement within the pool's limits: a pool whose limits.nodes its nodes already reach
// keeps the nodes it has. kiso sets a pool's limits.nodes to what the organization has left beside its other
// pools, so an organization at its spec.limits.nodes leaves no pool room for a replacement. The claim says which
// pools are so, and why, so that a platform raises the limit (one node a pool) before a change it wants to reach
// their nodes, and a rollout wave held by them is explained.

// Condition type and reasons of the room the pools have for a replacement node.
const (
	// TypeReplacementHeadroom is False while a pool's nodes reach its limits.nodes: Karpenter cannot launch
	// the replacement a drift needs.
	TypeReplacementHeadroom = "ReplacementHeadroom"

	ReasonRoom        = "Room"
	ReasonAtNodeLimit = "AtNodeLimit"
)

// poolHeadroom is one pool's room for a replacement node.
type poolHeadroom struct {
	Pool string
	// Nodes is what the pool runs: its nodes as Karpenter counts them, or a static pool's replicas if more.
	Nodes int64
	// Limit is its limits.nodes as rendered.
	Limit  int64
	Static bool
}

// full reports whether a replacement node would go past the pool's limit.
func (h poolHeadroom) full() bool { return h.Nodes+1 > h.Limit }

func (h poolHeadroom) String() string {
	if h.Static {
		return fmt.Sprintf("%s (static, %d replicas, limits.nodes %d)", h.Pool, h.Nodes, h.Limit)
	}
	return fmt.Sprintf("%s (%d nodes, limits.nodes %d)", h.Pool, h.Nodes, h.Limit)
}

// headroomOf is a pool's room given its rendered and observed NodePool; false when its nodes are not limited.
func headroomOf(pool string, rendered, observed *unstructured.Unstructured) (poolHeadroom, bool) {
	h := poolHeadroom{Pool: pool}
	limit, ok := nodeQuantity(rendered, "spec", "limits", nodesResource)
	if !ok {
		return h, false
	}
	h.Limit = limit
	if replicas, static := nodeQuantity(rendered, "spec", "replicas"); static {
		h.Nodes, h.Static = replicas, true
	}
	if observed != nil {
		if held, ok := holds(observed, []string{nodesResource})[nodesResource]; ok && held.Value() > h.Nodes {
			h.Nodes = held.Value()
		}
	}
	return h, true
}

// nodeQuantity reads a whole number of nodes at a path of a NodePool.
func nodeQuantity(np *unstructured.Unstructured, path ...string) (int64, bool) {
	if np == nil {
		return 0, false
	}
	v, found, _ := unstructured.NestedFieldNoCopy(np.Object, path...)
	if !found {
		return 0, false
	}
	q, err := k8sresource.ParseQuantity(quantityText(v))
	if err != nil {
		return 0, false
	}
	return q.Value(), true
}

// reportHeadroom says whether every pool the organization renders can launch a replacement node.
func (r *call) reportHeadroom() {
	var full []string
	for _, p := range r.pools {
		dc, ok := r.rendered[nodePoolResourceName(p)]
		if !ok {
			continue
		}
		h, limited := headroomOf(p.Name, &dc.Resource.Unstructured, observedNodePool(r.view.Get(nodePoolResourceName(p))))
		if limited && h.full() {
			full = append(full, h.String())
		}
	}
	if len(full) == 0 {
		response.ConditionTrue(r.Rsp, TypeReplacementHeadroom, ReasonRoom).
			WithMessage("every pool can launch a replacement node within its limits.nodes").TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(r.Rsp, TypeReplacementHeadroom, ReasonAtNodeLimit).
		WithMessage(fmt.Sprintf("pools %s cannot launch a replacement node: Karpenter replaces a drifted or lost node only after launching its "+
			"replacement within the pool's limits, so a NodeClass change or a rollout wave leaves their nodes as they are until one goes; "+
			"give spec.limits.nodes (and a pool's own limits.nodes) one node more per pool", fncall.Listed(full))).
		TargetCompositeAndClaim()
}
