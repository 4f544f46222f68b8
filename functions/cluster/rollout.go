package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/readlimit"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// A staged rollout, seen from the cluster: which revision of each reference
// pair its organizations' pools are on (the annotations the isolation
// function writes on every NodePool), whether Karpenter has made them Ready
// and replaced their drifted nodes, and from that which wave is open. The
// state it keeps between reconciles is the cluster's status.rollouts; the
// isolation function reads the open wave and the snapshots from there.

// Required resources of a staged rollout.
const (
	requirePools      = "rollout-nodepools"
	requireNodeClaims = "rollout-nodeclaims"
	// requireReferencePrefix starts the required resources of each reference
	// pair's NodeClass and NodePool, named after a hash of the pair.
	requireReferencePrefix = "rollout-reference-"
)

// Karpenter's own names a rollout reads.
const (
	nodePoolLabel    = "karpenter.sh/nodepool"
	nodePoolHash     = "karpenter.sh/nodepool-hash"
	conditionDrifted = "Drifted"
	conditionReady   = "Ready"
	nodeClaimAPI     = "karpenter.sh/v1"
	nodeClaimKind    = "NodeClaim"
)

// requireRollout asks Crossplane for every pool kiso composes, which a staged rollout reads; resolveRollout
// asks for the reference pairs the pools name and, only while a wave is being judged (staged.JudgesNodes), every
// NodeClaim (Karpenter labels them with their pool, which one label selector cannot ask for). NodeClaims are
// the read that grows with the fleet and changes all day as Karpenter launches and consolidates nodes, and
// Crossplane calls the XR on every change of what it requires: a cluster whose rollouts are done reads none.
// Nothing is asked without spec.rollout: a cluster that does not stage rollouts costs nothing more.
// A NodePool list Crossplane could not return is reported by readRollout.
func requireRollout(rs map[string]*fnv1.ResourceSelector, spec v1alpha1.XKarpenterClusterSpec) {
	if spec.Rollout == nil {
		return
	}
	rs[requirePools] = &fnv1.ResourceSelector{ApiVersion: rollout.NodePoolGVK.GroupVersion().String(), Kind: rollout.NodePoolGVK.Kind, Match: &fnv1.ResourceSelector_MatchLabels{
		MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{placement.ManagedByLabel: placement.ManagedByValue}},
	}}
}

// requireJudgedNodeClaims asks for every NodeClaim while a wave is judged, unless they did not fit in the
// last request (rolloutView.Unread).
func requireJudgedNodeClaims(rs map[string]*fnv1.ResourceSelector, staged rolloutResult, v rolloutView) {
	if staged.JudgesNodes && v.Unread.IsZero() {
		rs[requireNodeClaims] = &fnv1.ResourceSelector{ApiVersion: nodeClaimAPI, Kind: nodeClaimKind, Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{}}}
	}
}

// requireReferences asks for the reference pair each pool Crossplane returned names.
func requireReferences(rs map[string]*fnv1.ResourceSelector, req *fnv1.RunFunctionRequest, keys placement.Keys, xrName string) {
	pools, _ := fnstate.Required(req, requirePools)
	a := placement.NewRolloutAnnotations(keys.Domain)
	for _, np := range pools {
		an := np.Resource.GetAnnotations()
		if an[a.Cluster] != xrName || an[a.Reference] == "" {
			continue
		}
		ref, err := rollout.ParseReference(an[a.Reference])
		if err != nil {
			continue
		}
		nc, npName := referenceRequirements(an[a.Reference])
		rs[nc] = ownership.ByName(ref.NodeClass, "", ref.NodeClassRef)
		rs[npName] = ownership.ByName(rollout.NodePoolGVK, "", ref.NodePool)
	}
}

// referenceRequirements names the required resources of a pair's NodeClass
// and NodePool.
func referenceRequirements(ref string) (nodeClass, nodePool string) {
	sum := sha256.Sum256([]byte(ref))
	id := requireReferencePrefix + hex.EncodeToString(sum[:])[:12]
	return id + "-nodeclass", id + "-nodepool"
}

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

// summary is the cluster's rollout at a glance, for kubectl get.
func summary(spec v1alpha1.XKarpenterClusterSpec, rollouts []v1alpha1.ReferenceRollout) string {
	if spec.Rollout == nil || len(rollouts) == 0 {
		return ""
	}
	waves := len(spec.Rollout.Waves) + 1
	parts := make([]string, 0, len(rollouts))
	for _, r := range rollouts {
		var on, all int32
		for _, c := range r.Organizations {
			all += c.Organizations
			if c.Revision == r.Revision {
				on = c.Organizations
			}
		}
		state := fmt.Sprintf("wave %d/%d", min(int(r.Wave)+1, waves), waves)
		if int(r.Wave) >= waves {
			state = "done"
		} else if spec.Rollout.Paused {
			state += " paused"
		}
		parts = append(parts, fmt.Sprintf("%s: %d/%d on %s", state, on, all, r.Revision))
	}
	return strings.Join(parts, "; ")
}

// validateRollout checks what the schema cannot: percentages that grow from
// wave to wave, an organization named in one wave only, soaks Go can read.
func validateRollout(path *field.Path, r *v1alpha1.Rollout) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateSoak(path.Child("soak"), r.Soak)...)
	if d, err := time.ParseDuration(r.ProgressDeadline); r.ProgressDeadline != "" && (err != nil || d <= 0) {
		errs = append(errs, field.Invalid(path.Child("progressDeadline"), r.ProgressDeadline, "must be a duration above 0, e.g. 2h"))
	}
	var lastPercent int32
	named := map[string]int{}
	for i, w := range r.Waves {
		wp := path.Child("waves").Index(i)
		switch {
		case len(w.Organizations) > 0 && w.Percent != nil:
			errs = append(errs, field.Invalid(wp, "", "a wave names organizations or sets percent, not both"))
		case len(w.Organizations) == 0 && w.Percent == nil:
			errs = append(errs, field.Required(wp, "a wave names organizations or sets percent"))
		}
		if p := w.Percent; p != nil {
			switch {
			case *p < v1alpha1.MinimumWavePercent || *p > v1alpha1.MaximumWavePercent:
				errs = append(errs, field.Invalid(wp.Child("percent"), *p, "must be between 1 and 100"))
			case *p <= lastPercent:
				errs = append(errs, field.Invalid(wp.Child("percent"), *p, fmt.Sprintf("must be above the %d of the wave before it: percentages are cumulative", lastPercent)))
			}
			lastPercent = *p
		}
		for j, o := range w.Organizations {
			if first, dup := named[o]; dup {
				errs = append(errs, field.Duplicate(wp.Child("organizations").Index(j), fmt.Sprintf("%s is already in wave %d", o, first)))
			}
			named[o] = i
		}
		if w.Soak != "" {
			errs = append(errs, validateSoak(wp.Child("soak"), w.Soak)...)
		}
	}
	return errs
}

// validateSoak checks a soak: a duration Go reads, not negative.
func validateSoak(path *field.Path, soak string) field.ErrorList {
	if d, err := time.ParseDuration(soak); err != nil || d < 0 {
		return field.ErrorList{field.Invalid(path, soak, "must be a duration of at least 0, e.g. 30m")}
	}
	return nil
}

// unboundWaveMembers lists the organizations a wave or spec.rollout.skip
// names that have no pool bound to this cluster: a warning, not an error, as
// a canary may be onboarded after the rollout is written.
func unboundWaveMembers(r *v1alpha1.Rollout, v rolloutView) []string {
	if r == nil || v.Waiting {
		return nil
	}
	bound := map[string]bool{}
	for _, pools := range v.Pools {
		for _, p := range pools {
			bound[p.Organization] = true
		}
	}
	var out []string
	for i, w := range r.Waves {
		for j, o := range w.Organizations {
			if !bound[o] {
				out = append(out, fmt.Sprintf("spec.rollout.waves[%d].organizations[%d]: organization %s has no pool bound to this cluster", i, j, o))
			}
		}
	}
	for i, o := range r.Skip {
		if !bound[o] {
			out = append(out, fmt.Sprintf("spec.rollout.skip[%d]: organization %s has no pool bound to this cluster", i, o))
		}
	}
	return out
}

// Condition of a staged rollout on the cluster XR.
const (
	TypeRolledOut     = "RolledOut"
	ReasonComplete    = "Complete"
	ReasonProgressing = "Progressing"
	ReasonPaused      = "Paused"
	ReasonBlocked     = "Blocked"
)

// resolveRollout reads a staged rollout, moves it as far as it can go now, and asks for what the answers name:
// the reference pairs of the pools, and the NodeClaims while a wave is judged.
func (r *call) resolveRollout() bool {
	if r.Spec.Rollout == nil {
		return true
	}
	v, err := readRollout(r.Req, r.keys, r.name(), r.Spec.Tags, r.nodeClaimsUnread())
	if err != nil {
		return r.Fatal(err)
	}
	r.rollout = &v
	if r.staged, err = stageRollout(r.Spec, r.previous.Rollouts, v, r.Now); err != nil {
		return r.Fatal(err)
	}
	if !v.Unread.IsZero() && r.staged.JudgesNodes {
		// The next read is due when the window ends, which nothing else would wake the cluster for.
		r.staged.requeueWithin(v.Unread.Add(readlimit.RetryAfter).Sub(r.Now))
	}
	requireReferences(r.required, r.Req, r.keys, r.name())
	requireJudgedNodeClaims(r.required, r.staged, v)
	return true
}

// nodeClaimsUnread is when the NodeClaims last did not fit in one request, if that was less than
// readlimit.RetryAfter ago: the last reconcile failed on a request too large (readlimit.Refused) while it asked
// for them (a wave was open), or an earlier one did and the cluster's status kept when. Zero otherwise.
func (r *call) nodeClaimsUnread() time.Time {
	refused := readlimit.Refused(r.Req.GetObserved().GetComposite().GetResource()) && anyWaveOpen(r.Spec.Rollout, r.previous.Rollouts)
	since, _ := readlimit.Skip(r.previous.NodeClaimsUnreadAt, refused, r.Now)
	return since
}

// anyWaveOpen reports whether the last reconcile left a wave open, so it asked for the NodeClaims.
func anyWaveOpen(spec *v1alpha1.Rollout, rollouts []v1alpha1.ReferenceRollout) bool {
	for _, ro := range rollouts {
		if int(ro.Wave) <= len(spec.Waves) {
			return true
		}
	}
	return false
}

// stageRollout moves a staged rollout as far as it can go now. While Crossplane has not answered every
// requirement it keeps the last reconcile's state, snapshots included.
func stageRollout(spec v1alpha1.XKarpenterClusterSpec, previous []v1alpha1.ReferenceRollout, v rolloutView, now time.Time) (rolloutResult, error) {
	if v.Waiting {
		return rolloutResult{Rollouts: previous, InProgress: true}, nil
	}
	return advance(spec, previous, v, now)
}

// reportRollout says where a staged rollout stands, once Crossplane has answered every requirement.
func reportRollout(rsp *fnv1.RunFunctionResponse, spec v1alpha1.XKarpenterClusterSpec, v rolloutView, res rolloutResult) {
	for _, w := range unboundWaveMembers(spec.Rollout, v) {
		response.Warning(rsp, errors.New(w))
	}
	var holdups []string
	for _, r := range res.Rollouts {
		if r.HeldBy != "" {
			holdups = append(holdups, r.Reference+": "+r.HeldBy)
		}
	}
	switch {
	case len(res.Overdue) > 0:
		for _, o := range res.Overdue {
			// A Warning result is also an event on the XR, for whoever alerts on events.
			response.Warning(rsp, errors.New("rollout blocked: "+o))
		}
		response.ConditionFalse(rsp, TypeRolledOut, ReasonBlocked).WithMessage(strings.Join(append(res.Overdue, res.Blocked...), "; ") +
			"; let the rollout go on without an organization by naming it in spec.rollout.skip")
	case len(res.Blocked) > 0:
		response.ConditionFalse(rsp, TypeRolledOut, ReasonBlocked).WithMessage(strings.Join(res.Blocked, "; "))
	case res.InProgress && spec.Rollout.Paused:
		response.ConditionFalse(rsp, TypeRolledOut, ReasonPaused).WithMessage("spec.rollout.paused: no further wave opens; " + summary(spec, res.Rollouts))
	case res.InProgress:
		msg := summary(spec, res.Rollouts)
		if len(holdups) > 0 {
			msg += "; waiting for " + strings.Join(holdups, "; ")
		}
		response.ConditionFalse(rsp, TypeRolledOut, ReasonProgressing).WithMessage(msg)
	default:
		response.ConditionTrue(rsp, TypeRolledOut, ReasonComplete).WithMessage("every bound organization is on its reference's current revision")
	}
}
