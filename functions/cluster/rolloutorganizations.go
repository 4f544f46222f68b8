package main

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// The organizations of one reference pair's rollout: the wave each moves in, whether each is done on a
// revision, what holds the open wave back, and how many are on each revision.

// trackedOrganization is an organization's pools of one reference pair and
// the wave it moves in.
type trackedOrganization struct {
	Name  string
	Wave  int
	Pools []trackedPool
}

type trackedOrganizations []trackedOrganization

// organizations groups pools by organization, in name order.
func organizations(pools []trackedPool, waves []v1alpha1.Wave) trackedOrganizations {
	by := map[string]*trackedOrganization{}
	for _, p := range pools {
		o, ok := by[p.Organization]
		if !ok {
			o = &trackedOrganization{Name: p.Organization, Wave: rollout.WaveOf(p.Organization, waves)}
			by[p.Organization] = o
		}
		o.Pools = append(o.Pools, p)
	}
	out := make(trackedOrganizations, 0, len(by))
	for _, name := range slices.Sorted(maps.Keys(by)) {
		out = append(out, *by[name])
	}
	return out
}

// without leaves out the organizations spec.rollout.skip names that are not
// done on the current revision (a pool on another revision, or on this one
// with nodes Karpenter has not replaced): they hold no wave. It returns them
// too, by name; one named but done is neither left out nor listed.
func (orgs trackedOrganizations) without(skip []string, current string) (trackedOrganizations, []string) {
	if len(skip) == 0 {
		return orgs, nil
	}
	out := make(trackedOrganizations, 0, len(orgs))
	var skipped []string
	for _, o := range orgs {
		if slices.Contains(skip, o.Name) && !o.doneOn(current) {
			skipped = append(skipped, o.Name)
			continue
		}
		out = append(out, o)
	}
	return out, skipped
}

// doneOn reports whether every pool of an organization is on a revision and
// nothing holds it there.
func (o trackedOrganization) doneOn(revision string) bool {
	for _, p := range o.Pools {
		if p.Revision != revision || p.Holdup != "" {
			return false
		}
	}
	return true
}

// on reports whether every pool of an organization is on a revision.
func (o trackedOrganization) on(revision string) bool {
	for _, p := range o.Pools {
		if p.Revision != revision {
			return false
		}
	}
	return true
}

// holdup is why one pool of the open wave (or one before it) is not done
// on the current revision.
type holdup struct {
	Why string
	// NotReady is true when Karpenter says the pool's NodePool is not Ready.
	NotReady bool
}

// holdups says, for every pool of the open wave (or one before it) that is
// not done on the current revision, why, in organization order.
func holdups(orgs trackedOrganizations, current string, wave int) []holdup {
	var out []holdup
	for _, o := range orgs {
		if o.Wave > wave {
			continue
		}
		for _, p := range o.Pools {
			switch {
			case p.Revision != current:
				out = append(out, holdup{Why: fmt.Sprintf("organization %s: pool %s is still on revision %s", o.Name, p.Name, p.Revision)})
			case p.Holdup != "":
				out = append(out, holdup{Why: fmt.Sprintf("organization %s: %s", o.Name, p.Holdup), NotReady: p.NotReady})
			}
		}
	}
	return out
}

// whys is each holdup's reason.
func whys(hs []holdup) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Why
	}
	return out
}

// noDeadline is deadlineLeft's answer when spec.rollout sets none.
const noDeadline = time.Duration(-1 << 63)

// deadlineLeft is how long a wave that opened at openedAt has until
// spec.rollout.progressDeadline passes: 0 or less once it has, noDeadline
// without one.
func deadlineLeft(r *v1alpha1.Rollout, openedAt string, now time.Time) (time.Duration, error) {
	if r.ProgressDeadline == "" {
		return noDeadline, nil
	}
	deadline, err := time.ParseDuration(r.ProgressDeadline)
	if err != nil {
		return 0, errors.Wrap(err, "spec.rollout.progressDeadline")
	}
	opened, perr := time.Parse(time.RFC3339, openedAt)
	if perr != nil {
		// A time the function did not write (a status edited by hand) opens the wave now.
		opened = now
	}
	return opened.Add(deadline).Sub(now), nil
}

// heldBy says which organization of the open wave (or one before it) is not
// done on the current revision, and why; "" if the wave is done.
func heldBy(orgs trackedOrganizations, current string, wave int) (string, bool) {
	h := holdups(orgs, current, wave)
	if len(h) == 0 {
		return "", false
	}
	return h[0].Why, h[0].NotReady
}

func (orgs trackedOrganizations) allOn(revision string) bool {
	for _, o := range orgs {
		if !o.on(revision) {
			return false
		}
	}
	return true
}

func (orgs trackedOrganizations) hasMembersAfter(wave int) bool {
	for _, o := range orgs {
		if o.Wave > wave {
			return true
		}
	}
	return false
}

func (orgs trackedOrganizations) hasMembers(wave int) bool {
	for _, o := range orgs {
		if o.Wave == wave {
			return true
		}
	}
	return false
}

// count says how many organizations are on each revision (an organization
// with a pool still on an older one counts there), and how many wait for a
// wave that is not open.
func (orgs trackedOrganizations) count(current string, open int) ([]v1alpha1.RevisionCount, int32) {
	on := map[string]int32{}
	var waiting int32
	for _, o := range orgs {
		rev := current
		for _, p := range o.Pools {
			if p.Revision != current {
				rev = p.Revision
				break
			}
		}
		on[rev]++
		if rev != current && o.Wave > open {
			waiting++
		}
	}
	out := make([]v1alpha1.RevisionCount, 0, len(on))
	for _, r := range slices.Sorted(maps.Keys(on)) {
		out = append(out, v1alpha1.RevisionCount{Revision: r, Organizations: on[r]})
	}
	return out, waiting
}

// snapshots keeps the specs of the current revision, of every revision a
// pool is still on and of the released one (from the last reconcile's
// snapshots), so a waiting organization keeps being rendered from its own
// and a new pool from the released one.
func snapshots(prev *v1alpha1.ReferenceRollout, cur rollout.Revision, pools []trackedPool, released string) ([]v1alpha1.ReferenceSnapshot, error) {
	s, err := cur.Snapshot()
	if err != nil {
		return nil, err
	}
	out := []v1alpha1.ReferenceSnapshot{s}
	if prev == nil {
		return out, nil
	}
	inUse := map[string]bool{released: true}
	for _, p := range pools {
		inUse[p.Revision] = true
	}
	for _, old := range prev.Snapshots {
		if old.Revision != cur.ID && inUse[old.Revision] {
			out = append(out, old)
		}
	}
	return out, nil
}
