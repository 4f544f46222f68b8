package main

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/readlimit"
	"github.com/kiso-dev/kiso/functions/internal/server"
	"github.com/kiso-dev/kiso/monitoring"
)

// metrics are the series the function exports about each cluster: whether it is Ready, its conditions, and
// where each organization stands in its staged rollout.
var metrics = server.Metrics{Families: monitoring.ClusterFamilies, Report: newClusterReporter().report}

// rolloutReadEvery bounds what the rollout's series cost a cluster judging a wave. Reading its pools and
// NodeClaims again costs most of what the call did (2,000 NodeClaims: about 110 ms against 150), and Crossplane
// calls the cluster at each change of one; so a call within rolloutReadEvery of the last one that read them,
// and that asks to be called again within fncall.TTLSettling, leaves the states as that one said. The call before
// a longer wait (a rollout done asks for the hour) always reads them.
const rolloutReadEvery = 30 * time.Second

// clusterReporter derives each cluster's series, remembering when it last read each one's rollout.
type clusterReporter struct {
	mu          sync.Mutex
	rolloutRead map[string]time.Time
}

func newClusterReporter() *clusterReporter {
	return &clusterReporter{rolloutRead: map[string]time.Time{}}
}

func (r *clusterReporter) report(c server.Call) server.Samples {
	cluster := c.XRName()
	s := server.Samples{}
	s.Add(monitoring.ClusterReady, server.Bool(c.Ready()), cluster)
	for _, cond := range c.Conditions() {
		s.Add(monitoring.ClusterCondition, 1, cluster, cond.Type, cond.Status, cond.Reason)
	}
	auditRefusals(s, cluster, c)
	if !r.readsRollout(cluster, c) {
		return s
	}
	states, known := rolloutStates(c)
	if known {
		s.Known(monitoring.RolloutOrganizationState)
		for _, org := range slices.Sorted(maps.Keys(states)) {
			s.Add(monitoring.RolloutOrganizationState, 1, cluster, org, states[org])
		}
	}
	return s
}

// auditRefusals adds a series for each workload the status says the placement policy would refuse; it reads
// that field alone, not the whole status (a staged rollout's is large).
func auditRefusals(s server.Samples, cluster string, c server.Call) {
	audit := c.Status().GetFields()["placementAudit"].GetStructValue()
	for _, w := range audit.GetFields()["wouldRefuse"].GetListValue().GetValues() {
		f := w.GetStructValue().GetFields()
		s.Add(monitoring.PlacementAuditRefusal, 1, cluster, f["namespace"].GetStringValue(), f["kind"].GetStringValue(), f["name"].GetStringValue())
	}
}

// readsRollout reports whether a call reads the cluster's rollout (see rolloutReadEvery).
func (r *clusterReporter) readsRollout(cluster string, c server.Call) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	maps.DeleteFunc(r.rolloutRead, func(_ string, at time.Time) bool { return c.Now.Sub(at) >= rolloutReadEvery })
	if _, recent := r.rolloutRead[cluster]; recent && c.Rsp.GetMeta().GetTtl().AsDuration() <= fncall.TTLSettling {
		return false
	}
	r.rolloutRead[cluster] = c.Now
	return true
}

// rolloutStates says, per organization bound to the cluster, where it stands in the rollout of its reference
// pair, from the status the call wrote and the pools Crossplane sent it; known is false when the call cannot
// tell (Crossplane has not returned the pools yet, or the XR cannot be read).
func rolloutStates(c server.Call) (map[string]string, bool) {
	var spec v1alpha1.XKarpenterClusterSpec
	var status v1alpha1.XKarpenterClusterStatus
	if err := fnstate.Decode(map[string]any{"spec": c.Spec().AsMap()}, "spec", &spec); err != nil {
		return nil, false
	}
	if spec.Rollout == nil {
		return nil, true
	}
	if err := fnstate.Decode(map[string]any{"status": c.Status().AsMap()}, "status", &status); err != nil {
		return nil, false
	}
	in, err := getInput(c.Req)
	if err != nil {
		return nil, false
	}
	unread, _ := readlimit.Skip(status.NodeClaimsUnreadAt, false, c.Now)
	// The keys are in the domain the policies were composed with, which the cluster publishes (chooseKeyDomain).
	domain := in.KeyDomain
	if status.Placement != nil && status.Placement.KeyDomain != "" {
		domain = status.Placement.KeyDomain
	}
	v, err := readRollout(c.Req, placement.NewKeys(domain), c.XRName(), spec.Tags, unread)
	if err != nil || v.Waiting {
		return nil, false
	}
	out := map[string]string{}
	for _, r := range status.Rollouts {
		overdue := int(r.Wave) <= len(spec.Rollout.Waves) && pastDeadline(spec.Rollout, r.WaveOpenedAt, c.Now)
		for _, o := range organizations(v.Pools[r.Reference], spec.Rollout.Waves) {
			switch {
			case slices.Contains(r.Skipped, o.Name):
				out[o.Name] = monitoring.RolloutSkipped
			case o.doneOn(r.Revision):
				out[o.Name] = monitoring.RolloutDone
			case o.Wave > int(r.Wave):
				out[o.Name] = monitoring.RolloutWaiting
			case overdue:
				out[o.Name] = monitoring.RolloutBlocked
			default:
				out[o.Name] = monitoring.RolloutProgressing
			}
		}
	}
	return out, true
}

// pastDeadline reports whether a wave that opened at openedAt is past spec.rollout.progressDeadline.
func pastDeadline(r *v1alpha1.Rollout, openedAt string, now time.Time) bool {
	left, err := deadlineLeft(r, openedAt, now)
	return err == nil && left != noDeadline && left <= 0
}
