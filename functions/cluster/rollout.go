package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/readlimit"
	"github.com/kiso-dev/kiso/functions/internal/remote"
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

// stagedRollouts is the cluster's staged rollouts (spec.rollout), one concern through every phase it takes part
// in: it asks for the tenant pools (require), reads them, their reference pairs and, while a wave is judged, their
// NodeClaims, and moves each pair's rollout as far as it can go now (resolve); it says where the rollout stands
// (validateFound), writes it into the XR's status (render), keeps a workload cluster's reads of it current
// (settle) and asks to be called again when a wave's soak ends (report). Without spec.rollout it asks for and
// reads nothing.
type stagedRollouts struct {
	// view is what was read of the rollout, nil without spec.rollout.
	view *rolloutView
	// staged is where each reference pair's rollout stands now.
	staged rolloutResult
}

// require asks for every pool kiso composes (requireRollout).
func (s *stagedRollouts) require(r *state) { requireRollout(r.required, r.Spec) }

// resolve reads the rollout, moves it as far as it can go now, and asks for what the answers name: the reference
// pairs of the pools, and the NodeClaims while a wave is judged.
func (s *stagedRollouts) resolve(r *state) error {
	if r.Spec.Rollout == nil {
		return nil
	}
	v, err := readRollout(r.Req, r.keys, r.name(), r.Spec.Tags, nodeClaimsUnread(r))
	if err != nil {
		return err
	}
	s.view = &v
	if s.staged, err = stageRollout(r.Spec, r.previous.Rollouts, v, r.Now); err != nil {
		return err
	}
	if !v.Unread.IsZero() && s.staged.JudgesNodes {
		// The next read is due when the window ends, which nothing else would wake the cluster for.
		s.staged.requeueWithin(v.Unread.Add(readlimit.RetryAfter).Sub(r.Now))
	}
	requireReferences(r.required, r.Req, r.keys, r.name())
	requireJudgedNodeClaims(r.required, s.staged, v)
	return nil
}

// validateFound says where the rollout stands, and which organizations it names have no pool bound to the
// cluster; nothing while Crossplane has not answered every requirement of the rollout.
func (s *stagedRollouts) validateFound(r *state) {
	if s.view != nil && !s.view.Waiting {
		reportRollout(r.Rsp, r.Spec, *s.view, s.staged)
	}
}

// render writes each pair's rollout, the summary kubectl get prints, and when the NodeClaims last did not fit in
// one request into the XR's status.
func (s *stagedRollouts) render(r *state) {
	r.status.Rollouts, r.status.Rollout = s.staged.Rollouts, summary(r.Spec, s.staged.Rollouts)
	if s.view != nil {
		r.status.NodeClaimsUnreadAt = readlimit.Format(s.view.Unread)
	}
}

// settle has the workload cluster's tenant pools and NodeClaims read again every remote.RereadEvery while a
// rollout is in progress, so a wave there is judged as soon as it would be locally, and at the provider's poll
// otherwise: a cluster whose rollouts are done pays nothing for them.
func (s *stagedRollouts) settle(r *state) bool {
	if r.workload != nil && s.staged.InProgress {
		r.workload.Current = map[string]bool{requirePools: true, requireNodeClaims: true}
		r.workload.Now = r.Now
	}
	return true
}

// report asks Crossplane to call again when a soaking wave is done soaking, or at the next read of a workload
// cluster's collections if sooner.
func (s *stagedRollouts) report(r *state) {
	if r.workload.Rereading() {
		s.staged.requeueWithin(remote.RereadEvery)
	}
	s.staged.requeue(r.Rsp)
}

// inProgress reports whether a wave is still open or its answers are still awaited: the cluster is not settled.
func (s *stagedRollouts) inProgress() bool { return s.staged.InProgress }

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

// nodeClaimsUnread is when the NodeClaims last did not fit in one request, if that was less than
// readlimit.RetryAfter ago: the last reconcile failed on a request too large (readlimit.Refused) while it asked
// for them (a wave was open), or an earlier one did and the cluster's status kept when. Zero otherwise.
func nodeClaimsUnread(r *state) time.Time {
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
