package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// A poolSource is what one pool is rendered from: a revision of the reference
// pair, or nothing new (Keep) when the pool waits for its wave and the
// cluster keeps no snapshot of the revision it is on.
type poolSource struct {
	// Reference is the reference pair of the pool's class, as rollout.Reference writes it.
	Reference           string
	Revision            string
	NodeClass, NodePool *unstructured.Unstructured
	// Inherited are the cluster's tags the pool's NodeClass carries at that revision.
	Inherited map[string]string

	// Waiting is true while the pool stays on an older revision than the
	// reference's current one, until its organization's wave opens.
	Waiting bool
	// Keep is true when the pool waits and its revision's specs are known to
	// nobody: its NodeClass and NodePool are kept as they are.
	Keep bool
	// New is true for a pool composed for the first time while it waits:
	// kept, it is not composed until its wave opens.
	New bool
}

// referenceRollouts are where an organization stands in its cluster's rollout of each class's reference
// pair, and what each pool is rendered from.
type referenceRollouts struct {
	// Classes are the rollouts of the classes that have pools, in spec order.
	Classes []referenceRollout
	// Sources are every pool's, by pool name.
	Sources map[string]poolSource
}

// poolSources decides, per class, which revision of the class's reference pair each of its pools is rendered
// from (classSources).
func (r *call) poolSources() (referenceRollouts, error) {
	out := referenceRollouts{Sources: make(map[string]poolSource, len(r.pools))}
	for _, c := range classesOf(r.Spec) {
		var of []pool
		for _, p := range r.pools {
			if p.Class.Name == c.Name {
				of = append(of, p)
			}
		}
		if len(of) == 0 {
			continue
		}
		rr, err := r.classSources(c, of)
		if err != nil {
			return out, err
		}
		out.Classes = append(out.Classes, rr)
		maps.Copy(out.Sources, rr.Sources)
	}
	return out, nil
}

// referenceRollout is where an organization stands in its cluster's rollout
// of one class's reference pair.
type referenceRollout struct {
	Reference string
	Current   string
	// Staged is true when the cluster stages the reference's revisions in
	// waves (spec.rollout).
	Staged bool
	// Wave is the organization's wave; Open the cluster's open wave; Waves
	// how many there are, the implicit last one included.
	Wave, Open, Waves int
	// Skipped is true while the cluster's spec.rollout.skip names the
	// organization: it stays where it is whatever wave is open.
	Skipped bool
	Sources map[string]poolSource
}

// classSources decides, per pool of a class, which revision of the class's reference pair it is
// rendered from. A pool moves to the current revision at once unless the
// organization's cluster stages rollouts and the organization's wave is not
// open yet for it: then the pool stays on the revision it was rendered from,
// from the cluster's snapshot of it. A pool composed for the first time
// meanwhile (a new stack or organization, a pool rendered before kiso kept
// revisions or whose organization switched to another reference) starts on
// the revision the organization's other pools are on, else on the last one
// the cluster released (newPoolSource).
func (r *call) classSources(class capacityClass, pools []pool) (referenceRollout, error) {
	spec, found, observed, keys := r.Spec, r.found, r.view, r.keys
	pair := found.pair(class)
	reference := rollout.ReferenceOf(class.NodeClassRef, class.NodePoolRef)
	ref := reference.String()
	inherited := found.Cluster.inherited()
	current, err := rollout.Current(pair.NodeClass, pair.NodePool, inherited)
	if err != nil {
		return referenceRollout{}, err
	}
	rr := referenceRollout{Reference: ref, Current: current.ID, Sources: make(map[string]poolSource, len(pools))}
	moved := poolSource{Reference: ref, Revision: current.ID, NodeClass: pair.NodeClass, NodePool: pair.NodePool, Inherited: inherited.Tags}

	var state *v1alpha1.ReferenceRollout
	if c := found.Cluster; c != nil && c.Spec.Rollout != nil {
		rr.Staged = true
		rr.Wave = rollout.WaveOf(spec.Organization, c.Spec.Rollout.Waves)
		rr.Skipped = slices.Contains(c.Spec.Rollout.Skip, spec.Organization)
		rr.Waves = len(c.Spec.Rollout.Waves) + 1
		rr.Open = -1
		if state = rollout.Find(c.Status.Rollouts, ref); state != nil && state.Revision == current.ID {
			rr.Open = int(state.Wave)
		}
	}
	annotations := placement.NewRolloutAnnotations(keys.Domain)
	on := make(map[string]string, len(pools))
	own := ""
	for _, p := range pools {
		np, _ := observed.Get(nodePoolResourceName(p))
		on[p.Name] = onRevision(np, annotations, ref)
		if on[p.Name] != "" && on[p.Name] != current.ID {
			own = on[p.Name]
		}
	}
	for _, p := range pools {
		switch {
		case !rr.Staged || on[p.Name] == current.ID || (rr.Wave <= rr.Open && !rr.Skipped):
			rr.Sources[p.Name] = moved
		case on[p.Name] != "":
			rr.Sources[p.Name] = waitingSource(state, on[p.Name], reference, inherited)
		default:
			rr.Sources[p.Name] = rr.newPoolSource(state, own, moved, reference, inherited)
		}
	}
	return rr, nil
}

// newPoolSource is where a pool starts that its organization composes while it waits for its wave (a new stack,
// a new organization, a pool renamed or re-created by a mode switch): on the revision the organization's other
// pools are on, else on the last one the cluster released, never on one still held back. Without either (the
// cluster has released no revision of this pair since it stages rollouts), it is composed once the wave opens;
// a cluster that has not rolled this pair out yet holds nothing back.
func (rr referenceRollout) newPoolSource(state *v1alpha1.ReferenceRollout, own string, moved poolSource, ref rollout.Reference, inherited rollout.Inherited) poolSource {
	if state == nil {
		return moved
	}
	start := own
	if start == "" {
		start = state.Released
		if int(state.Wave) >= rr.Waves {
			start = state.Revision
		}
	}
	if start == rr.Current {
		return moved
	}
	src := waitingSource(state, start, ref, inherited)
	src.New = true
	return src
}

// onRevision is the revision an observed NodePool was rendered from, or ""
// if it is not observed, predates revisions or clones another reference.
func onRevision(oc resource.ObservedComposed, annotations placement.RolloutAnnotations, ref string) string {
	if oc.Resource == nil {
		return ""
	}
	a := oc.Resource.GetAnnotations()
	if a[annotations.Reference] != ref {
		return ""
	}
	return a[annotations.Revision]
}

// waitingSource renders a waiting pool from the cluster's snapshot of its
// revision, with the tags its pools inherited then (a snapshot kept before
// revisions covered them: with the cluster's tags now, as it was rendered);
// without a snapshot (the cluster never saw that revision, or its status was
// lost), the pool is kept exactly as it is.
func waitingSource(state *v1alpha1.ReferenceRollout, on string, ref rollout.Reference, now rollout.Inherited) poolSource {
	if state != nil {
		for _, s := range state.Snapshots {
			if s.Revision != on {
				continue
			}
			r, err := rollout.FromSnapshot(s)
			if err != nil {
				break
			}
			nc, np := r.Objects(ref)
			inherited := now
			if r.Inherited != nil {
				inherited = *r.Inherited
			}
			return poolSource{Reference: ref.String(), Revision: on, NodeClass: nc, NodePool: np, Inherited: inherited.Tags, Waiting: true}
		}
	}
	return poolSource{Reference: ref.String(), Revision: on, Waiting: true, Keep: true}
}

// annotate marks a pool's rendered NodeClass or NodePool with the revision it
// is rendered from, and the cluster whose rollout it follows.
func annotate(u *unstructured.Unstructured, spec v1alpha1.XKarpenterIsolationSpec, src poolSource, keys placement.Keys) {
	a := placement.NewRolloutAnnotations(keys.Domain)
	annotations := map[string]string{a.Reference: src.Reference, a.Revision: src.Revision}
	if spec.ClusterRef != nil {
		annotations[a.Cluster] = spec.ClusterRef.Name
	}
	u.SetAnnotations(annotations)
}

// waiting lists the pools that wait for their wave, in order.
func (rr referenceRollout) waiting() []string {
	var out []string
	for name, s := range rr.Sources {
		if s.Waiting {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// message says where the organization stands in its cluster's rollout.
func (rr referenceRollout) message() string {
	waiting := rr.waiting()
	if len(waiting) == 0 {
		return fmt.Sprintf("every pool is on revision %s of %s", rr.Current, rr.Reference)
	}
	var staying, kept, held []string
	on := map[string]bool{}
	for _, name := range waiting {
		s := rr.Sources[name]
		switch {
		case s.New && s.Keep:
			held = append(held, name)
			continue
		case s.Keep:
			kept = append(kept, name)
		}
		staying = append(staying, name)
		on[s.Revision] = true
	}
	until := fmt.Sprintf("wave %d of %d opens for revision %s", rr.Wave+1, rr.Waves, rr.Current)
	if rr.Skipped {
		until = "the cluster's spec.rollout.skip no longer names the organization (the rollout of revision " + rr.Current + " goes on without it)"
	}
	var parts []string
	if len(staying) > 0 {
		parts = append(parts, fmt.Sprintf("pools %s stay on revision %s of %s until %s",
			strings.Join(staying, ", "), strings.Join(slices.Sorted(maps.Keys(on)), ", "), rr.Reference, until))
	}
	if len(kept) > 0 {
		parts = append(parts, fmt.Sprintf("the cluster keeps no snapshot of their revision, so pools %s are kept exactly as they are", strings.Join(kept, ", ")))
	}
	if len(held) > 0 {
		parts = append(parts, fmt.Sprintf("pools %s are new and are composed once %s: the cluster keeps no released revision of %s to start them on",
			strings.Join(held, ", "), until, rr.Reference))
	}
	return strings.Join(parts, "; ")
}
