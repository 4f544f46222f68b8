package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// How each reference pair's rollout moves, from the state the last reconcile left in the cluster's status: the
// wave it judges, a done wave's soak, a pause, the progress deadline, and the snapshots an organization not yet
// moved keeps rendering from.

// rolloutResult is what a reconcile decides for every reference pair.
type rolloutResult struct {
	Rollouts []v1alpha1.ReferenceRollout
	// RequeueAfter is how soon a soaking wave is done soaking, 0 if none is.
	RequeueAfter time.Duration
	Blocked      []string
	// Overdue says, per reference pair whose open wave is past
	// spec.rollout.progressDeadline, every organization that holds it.
	Overdue    []string
	InProgress bool
	// JudgesNodes is true while a wave is open: whether it is done depends
	// on its pools' NodeClaims.
	JudgesNodes bool
}

// advance moves every reference pair's rollout as far as it can go now, from
// the state the last reconcile left. It never moves an organization back:
// the open wave only grows while a revision rolls out. A pair no bound pool
// clones any more is done with.
func advance(spec v1alpha1.XKarpenterClusterSpec, previous []v1alpha1.ReferenceRollout, v rolloutView, now time.Time) (rolloutResult, error) {
	var res rolloutResult
	for _, ref := range slices.Sorted(maps.Keys(v.Pools)) {
		prev := rollout.Find(previous, ref)
		cur, known := v.Current[ref]
		if !known {
			// The reference is not there (or not fetched yet): keep what the
			// last reconcile said, so no organization loses its snapshot.
			if prev != nil {
				res.Rollouts = append(res.Rollouts, *prev)
			}
			continue
		}
		if !v.NodesRead && judgesNodes(spec.Rollout, prev, cur, v.Pools[ref]) {
			// The open wave is judged on its pools' NodeClaims, not asked
			// for while every rollout was done: keep what the last
			// reconcile said until Crossplane returns them (the next call).
			res.JudgesNodes, res.InProgress = true, true
			if prev != nil {
				res.Rollouts = append(res.Rollouts, *prev)
			}
			continue
		}
		st, err := pairRollout{r: spec.Rollout, ref: ref, prev: prev, cur: cur, pools: v.Pools[ref], now: now}.advance(&res)
		if err != nil {
			return res, err
		}
		res.Rollouts = append(res.Rollouts, st)
	}
	return res, nil
}

// firstWave is the wave a reconcile starts judging from: the one the last
// reconcile left open for the same revision, else the first; past the last
// wave when the rollout is done.
func firstWave(r *v1alpha1.Rollout, prev *v1alpha1.ReferenceRollout, cur rollout.Revision, orgs trackedOrganizations) int {
	switch {
	case prev != nil && prev.Revision == cur.ID:
		return int(prev.Wave)
	case orgs.allOn(cur.ID):
		// A rollout that starts with every organization on its revision
		// (spec.rollout just written) moves nobody: it is done.
		return len(r.Waves) + 1
	}
	return 0
}

// judgesNodes reports whether a reference pair's rollout has a wave open,
// which is judged on its pools' NodeClaims.
func judgesNodes(r *v1alpha1.Rollout, prev *v1alpha1.ReferenceRollout, cur rollout.Revision, pools []trackedPool) bool {
	return firstWave(r, prev, cur, organizations(pools, r.Waves)) <= len(r.Waves)
}

// released is the last revision a pair's rollout finished, as the last
// reconcile left it: its own revision if that rollout was done.
func released(prev *v1alpha1.ReferenceRollout, last int) string {
	if int(prev.Wave) > last {
		return prev.Revision
	}
	return prev.Released
}

// carryOver starts a reconcile's state of a pair from the last one's: what
// it released, and for the same revision when its open wave was done and
// (the same wave still open) when it opened.
func (p pairRollout) carryOver(st *v1alpha1.ReferenceRollout, wave int) {
	prev, last, now := p.prev, len(p.r.Waves), p.now
	if prev != nil {
		st.Released = released(prev, last)
		if prev.Revision == st.Revision {
			st.WaveDoneAt = prev.WaveDoneAt
			if int(prev.Wave) == wave {
				st.WaveOpenedAt = prev.WaveOpenedAt
			}
		}
	}
	if st.WaveOpenedAt == "" {
		st.WaveOpenedAt = now.UTC().Format(time.RFC3339)
	}
}

// checkDeadline records a held wave that opened longer than
// spec.rollout.progressDeadline ago, with every organization that holds it,
// and otherwise asks to be called again when its deadline passes: a wave held
// by nodes Karpenter does not replace changes nothing that would wake the
// cluster then.
func (res *rolloutResult) checkDeadline(p pairRollout, st v1alpha1.ReferenceRollout, orgs trackedOrganizations, wave int) error {
	r, now := p.r, p.now
	if wave > len(r.Waves) || st.HeldBy == "" || st.HeldBy == heldByPause {
		return nil
	}
	left, err := deadlineLeft(r, st.WaveOpenedAt, now)
	switch {
	case err != nil:
		return err
	case left == noDeadline:
		return nil
	case left > 0:
		res.requeueWithin(left)
		return nil
	}
	res.Overdue = append(res.Overdue, fmt.Sprintf("%s: wave %d opened at %s and is not done within spec.rollout.progressDeadline (%s): %s",
		st.Reference, wave+1, st.WaveOpenedAt, r.ProgressDeadline, strings.Join(whys(holdups(orgs, st.Revision, wave)), "; ")))
	return nil
}

// requeueWithin asks for the next reconcile no later than after d.
func (res *rolloutResult) requeueWithin(d time.Duration) {
	if res.RequeueAfter == 0 || d < res.RequeueAfter {
		res.RequeueAfter = d
	}
}

// heldByPause is what holds a done wave's successor back while paused.
const heldByPause = "spec.rollout.paused: the next wave opens once the rollout is resumed"

// pairRollout is one reference pair's rollout as a reconcile moves it: spec.rollout, the pair, the state the
// last reconcile left (nil if none), the pair's current revision, and the pools that clone it.
type pairRollout struct {
	r     *v1alpha1.Rollout
	ref   string
	prev  *v1alpha1.ReferenceRollout
	cur   rollout.Revision
	pools []trackedPool
	now   time.Time
}

// advance moves one reference pair's rollout.
func (p pairRollout) advance(res *rolloutResult) (v1alpha1.ReferenceRollout, error) {
	r, ref, prev, cur, pools, now := p.r, p.ref, p.prev, p.cur, p.pools, p.now
	st := v1alpha1.ReferenceRollout{Reference: ref, Revision: cur.ID}
	all := organizations(pools, r.Waves)
	orgs, skipped := all.without(r.Skip, cur.ID)
	st.Skipped = skipped
	last := len(r.Waves)
	wave := firstWave(r, prev, cur, orgs)
	p.carryOver(&st, wave)
	res.JudgesNodes = res.JudgesNodes || wave <= last
	for wave <= last {
		holdup, notReady := heldBy(orgs, cur.ID, wave)
		st.HeldBy = holdup
		if holdup != "" {
			st.WaveDoneAt = ""
			if notReady {
				res.Blocked = append(res.Blocked, ref+": "+holdup)
			}
			break
		}
		if !orgs.hasMembers(wave) || !orgs.hasMembersAfter(wave) {
			// A wave without members moved nobody, and a wave after which
			// nobody is left to move protects nobody: neither soaks.
			if r.Paused && wave < last {
				st.HeldBy = heldByPause
				break
			}
			wave, st.WaveDoneAt, st.WaveOpenedAt = wave+1, "", now.UTC().Format(time.RFC3339)
			continue
		}
		left, err := soakLeft(&st, r, wave, now)
		if err != nil {
			return st, err
		}
		if left > 0 {
			res.requeueWithin(left)
			break
		}
		if r.Paused {
			st.HeldBy = heldByPause
			break
		}
		wave, st.WaveDoneAt, st.WaveOpenedAt = wave+1, "", now.UTC().Format(time.RFC3339)
	}
	if err := res.checkDeadline(p, st, orgs, wave); err != nil {
		return st, err
	}
	res.InProgress = res.InProgress || wave <= last
	if wave > last {
		st.Released = cur.ID
	}
	// At most MaxItemsRolloutWaves + 2.
	st.Wave = int32(max(0, min(wave, v1alpha1.MaxItemsRolloutWaves+2)))
	st.Organizations, st.Waiting = all.count(cur.ID, wave)
	snaps, err := snapshots(prev, cur, pools, st.Released)
	st.Snapshots = snaps
	return st, err
}

// requeue shortens the response's TTL to a soaking wave's end: the next wave
// opens then, an event nothing else would deliver.
func (res rolloutResult) requeue(rsp *fnv1.RunFunctionResponse) {
	if res.RequeueAfter > 0 && res.RequeueAfter < rsp.GetMeta().GetTtl().AsDuration() {
		rsp.GetMeta().Ttl = durationpb.New(res.RequeueAfter + time.Second)
	}
}

// soakLeft is how long a done wave still soaks, from when it was first seen
// done (now, if this is the first time).
func soakLeft(st *v1alpha1.ReferenceRollout, r *v1alpha1.Rollout, wave int, now time.Time) (time.Duration, error) {
	doneAt, err := time.Parse(time.RFC3339, st.WaveDoneAt)
	if err != nil {
		doneAt = now
		st.WaveDoneAt = now.UTC().Format(time.RFC3339)
	}
	soak, err := time.ParseDuration(soakOf(r, wave))
	if err != nil {
		return 0, errors.Wrapf(err, "spec.rollout: cannot read the soak of wave %d", wave)
	}
	return doneAt.Add(soak).Sub(now), nil
}

// soakOf is how long a wave soaks: its own soak, else the rollout's.
func soakOf(r *v1alpha1.Rollout, wave int) string {
	if wave < len(r.Waves) && r.Waves[wave].Soak != "" {
		return r.Waves[wave].Soak
	}
	return r.Soak
}
