package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// A transition is what happens to objects the spec no longer asks for: after
// a switch between organization and stack isolation, a renamed stack or a
// removed one. Make before break: they stay composed, unchanged, until every
// pool of the new spec reports Ready, so no stack is ever left without a
// Ready pool. Then what goes is capacity, not objects: deleting a NodePool
// makes Karpenter delete all its nodes at once, whatever its disruption
// budget, evicting every pod on them together. So a retired NodePool that
// still holds nodes stays, launching nothing more (limits.nodes 0) and
// shuffling no pod between its own nodes (see retire), its pods' old placement still
// admitted: its pods move to the new pools as their owners roll them (a new
// pod gets the new placement), and Karpenter's consolidation removes each
// node once empty, within the pool's disruption budget. The NodePool goes
// once Karpenter counts no node in it.
type transition struct {
	// Retired are observed composed resources the spec no longer renders.
	Retired map[resource.Name]resource.ObservedComposed
	// RetiredPools are the names of retired NodePools, for the condition.
	RetiredPools []string
	// Waiting are the new pools that are not Ready yet.
	Waiting []string
	// Draining are the pools the spec asks for again while the pool of the same name, retired before, is
	// still being deleted (see drainingPools).
	Draining []string
	// Guarded are retired objects kept until the cluster's deletion policy would let them go (keepGuarded).
	Guarded []guard
	// Retiring are the retired NodePools that still hold nodes, in name order.
	Retiring []retiringPool
}

// A retiringPool is a retired NodePool that still holds nodes.
type retiringPool struct {
	Name  string
	Nodes int64
}

// planTransition compares what is composed with what the spec renders. The objects of a draining pool are
// not retired (kept) but left to their deletion: the pool is rendered anew once they are gone.
func (r *call) planTransition() transition {
	observed, rendered, pools, draining, ready := r.view, r.rendered, r.pools, r.draining, r.ready
	t := transition{Retired: map[resource.Name]resource.ObservedComposed{}}
	drainingObjects := map[resource.Name]bool{}
	for _, p := range pools {
		if draining[p.Name] {
			t.Draining = append(t.Draining, p.Name)
			for _, name := range poolObjectNames(p) {
				drainingObjects[name] = true
			}
		}
	}
	for _, name := range observed.Names() {
		if _, still := rendered[name]; still || drainingObjects[name] {
			continue
		}
		oc, _ := observed.Get(name)
		t.Retired[name] = oc
		if oc.Resource.GetKind() == nodePoolKind {
			t.RetiredPools = append(t.RetiredPools, oc.Resource.GetName())
			if n := nodesHeld(&oc.Resource.Unstructured); n > 0 && oc.Resource.GetDeletionTimestamp() == nil {
				t.Retiring = append(t.Retiring, retiringPool{Name: oc.Resource.GetName(), Nodes: n})
			}
		}
	}
	slices.Sort(t.RetiredPools)
	slices.SortFunc(t.Retiring, func(a, b retiringPool) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range pools {
		if !ready[p.Name] {
			t.Waiting = append(t.Waiting, p.Name)
		}
	}
	return t
}

// readyPools says which pools are Ready: their NodeClass and NodePool both say so, neither is being deleted,
// and the pool is not draining.
func readyPools(pools []pool, observed fnstate.Observed, draining map[string]bool) map[string]bool {
	ready := make(map[string]bool, len(pools))
	for _, p := range pools {
		np, npOK := observed.Get(nodePoolResourceName(p))
		nc, ncOK := observed.Get(nodeClassResourceName(p))
		ready[p.Name] = !draining[p.Name] && isReady(np, npOK) && isReady(nc, ncOK)
	}
	return ready
}

// Settled reports whether the organization's pools are all Ready and nothing
// is being replaced or retired.
func (t transition) Settled() bool {
	return len(t.Retired) == 0 && len(t.Waiting) == 0 && len(t.Draining) == 0
}

// Holding reports whether retired objects must stay for now.
func (t transition) Holding() bool {
	return len(t.Retired) > 0 && len(t.Waiting) > 0
}

// retiring reports whether the new pools are Ready and retired pools still hold nodes.
func (t transition) retiring() bool {
	return !t.Holding() && len(t.Retiring) > 0
}

// retiringObjects are the observed objects of the retiring pools: their NodeClasses (Karpenter needs one until
// its nodes are gone), NodePools and Usages.
func (t transition) retiringObjects() map[resource.Name]resource.ObservedComposed {
	out := map[resource.Name]resource.ObservedComposed{}
	for _, rp := range t.Retiring {
		for _, name := range poolObjectNames(pool{Name: rp.Name}) {
			if oc, ok := t.Retired[name]; ok {
				out[name] = oc
			}
		}
	}
	return out
}

// nodesHeld is how many nodes Karpenter counts in a NodePool (status.nodes, else status.resources.nodes); none
// while it has counted nothing.
func nodesHeld(np *unstructured.Unstructured) int64 {
	q, ok := holds(np, []string{nodesResource})[nodesResource]
	if !ok {
		return 0
	}
	return q.Value()
}

// retire makes a kept retiring NodePool launch no node (its limits are a node count of zero) and consolidate no
// underutilized node (a budget of zero for that reason): moving pods between its own nodes would evict them all at
// once for nothing, as they cannot go anywhere else with their old placement. Its empty nodes still go, within its
// other budgets. Karpenter hashes neither limits nor budgets into a node's identity: no node drifts.
func retire(np *unstructured.Unstructured) {
	_ = unstructured.SetNestedMap(np.Object, map[string]any{nodesResource: "0"}, "spec", "limits")
	budgets, _, _ := unstructured.NestedSlice(np.Object, "spec", "disruption", "budgets")
	noShuffle := map[string]any{"nodes": "0", "reasons": []any{disruptionUnderutilized}}
	for _, b := range budgets {
		if reflect.DeepEqual(b, noShuffle) {
			return
		}
	}
	_ = unstructured.SetNestedSlice(np.Object, append(budgets, noShuffle), "spec", "disruption", "budgets")
}

// disruptionUnderutilized is Karpenter's disruption reason for consolidating a node that is not empty.
const disruptionUnderutilized = "Underutilized"

// drainingPools returns the pools the spec renders whose objects of the same names are still being retired
// after an earlier spec dropped them under a release that composed Usages: their NodePool-uses-NodeClass Usage
// is terminating with its user still named, which only
// Crossplane's garbage collection of a retired pool does. Rendering such a pool at once would not save it: the
// Usage replays the deletion of the NodeClass it refused once the old NodePool is gone, whatever the spec asks
// for by then, and nodes the new NodePool started meanwhile would hold that NodeClass in deletion for good.
// A NodeClass being deleted with no Usage left (Karpenter keeps it until its old nodes are gone) does not make
// its pool draining: no node starts on it, the pool is not Ready until Crossplane composes it anew, and
// judging by what Crossplane observes would drop a NodePool it has just composed and not yet seen.
func drainingPools(pools []pool, observed fnstate.Observed) map[string]bool {
	draining := map[string]bool{}
	for _, p := range pools {
		if h, ok := observed.Head(nodeClassUsageResourceName(p)); ok && h.Deleting && replays(observed, nodeClassUsageResourceName(p)) {
			draining[p.Name] = true
		}
	}
	return draining
}

// replays reports whether the observed Usage, being deleted, may still replay a deletion it refused: it has a
// user, so Crossplane waits for the user to go before it lets the Usage go. A Usage this release released (no
// user, no replay) goes at once and replays nothing: its pool is not draining.
func replays(observed fnstate.Observed, name resource.Name) bool {
	oc, ok := observed.Get(name)
	if !ok {
		return false
	}
	_, by, _ := unstructured.NestedMap(oc.Resource.Object, "spec", "by")
	return by
}

// withoutPools removes the objects of the named pools from what is rendered.
func withoutPools(rendered map[resource.Name]*resource.DesiredComposed, pools []pool, drop map[string]bool) {
	for _, p := range pools {
		if !drop[p.Name] {
			continue
		}
		for _, name := range poolObjectNames(p) {
			delete(rendered, name)
		}
	}
}

// keepRetiredGrants is make-before-break for workloads: while retired pools
// are kept, each namespace's Role still grants what it granted before, so
// pods carrying the old placement are admitted until the old pool goes.
func keepRetiredGrants(rendered map[resource.Name]*resource.DesiredComposed, observed fnstate.Observed) {
	for name, dc := range rendered {
		if dc.Resource.GetKind() != roleKind {
			continue
		}
		oc, ok := observed.Get(name)
		if !ok {
			continue
		}
		old, _, _ := unstructured.NestedSlice(oc.Resource.Object, "rules")
		rules, _, _ := unstructured.NestedSlice(dc.Resource.Object, "rules")
		for _, o := range old {
			or, ok := o.(map[string]any)
			if !ok {
				continue
			}
			merged := false
			for i, r := range rules {
				rr, ok := r.(map[string]any)
				if !ok || fmt.Sprint(rr["resources"], rr["verbs"]) != fmt.Sprint(or["resources"], or["verbs"]) {
					continue
				}
				names, _ := rr["resourceNames"].([]any)
				oldNames, _ := or["resourceNames"].([]any)
				for _, n := range oldNames {
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
				rr["resourceNames"] = names
				rules[i] = rr
				merged = true
			}
			// Injection is never kept: it follows the spec at once.
			if !merged && fmt.Sprint(or["verbs"]) != fmt.Sprint([]any{placement.VerbInject}) {
				rules = append(rules, or)
			}
		}
		_ = unstructured.SetNestedSlice(dc.Resource.Object, rules, "rules")
	}
}

// settle is make-before-break, the whole of it: a pool still being deleted
// is rendered anew once it is gone, and while new pools are not Ready the
// retired ones are kept exactly as observed, and each namespace's Role still
// grants what it granted before, so pods of the old placement are admitted
// until the old pool goes; once they are Ready, the retired NodePools that
// still hold nodes are kept launching nothing, with the grants, until empty. A namespace the platform no longer gives the
// organization is not the organization's to keep: its Role and ConfigMap go
// at once, whatever the pools wait for. It changes rendered in place and
// says what it holds on to.
// Which pools are draining and which Ready is known on every call, for the status; nothing settles while
// nothing new was rendered.
func (r *call) settle() {
	r.draining = drainingPools(r.pools, r.view)
	r.ready = readyPools(r.pools, r.view, r.draining)
	if r.found.Unresolved() || r.taking {
		return
	}
	withoutPools(r.rendered, r.pools, r.draining)
	r.tr = r.planTransition()
	switch {
	case r.tr.Holding():
		keepRetiredGrants(r.rendered, r.view)
		for name, dc := range keepObserved(r.tr.Retired, r.keys) {
			if ns := dc.Resource.GetNamespace(); ns != "" && !r.found.Namespaces[ns] {
				continue
			}
			r.rendered[name] = dc
		}
	case r.tr.retiring():
		keepRetiredGrants(r.rendered, r.view)
		for name, dc := range keepObserved(r.tr.retiringObjects(), r.keys) {
			if dc.Resource.GetKind() == nodePoolKind {
				retire(&dc.Resource.Unstructured)
			}
			r.rendered[name] = dc
		}
	}
	r.tr.Guarded = keepGuarded(r.rendered, r.view, r.found.NodeClassUsers, r.keys)
}

// Idle reports whether nothing is left for the organization to wait on: its pools settled, and no retired
// object kept until its deletion is allowed.
func (t transition) Idle() bool {
	return t.Settled() && len(t.Guarded) == 0
}
