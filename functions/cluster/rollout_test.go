package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/clusterview"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

const testRef = "EC2NodeClass.v1.karpenter.k8s.aws/default,NodePool/default"

// twoRevisions are two revisions of the reference pair: the platform changed
// a node label of the reference NodePool.
func twoRevisions(t *testing.T) (v1, v2 rollout.Revision) {
	t.Helper()
	nc := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"role": "r"}}}
	rev := func(tier string) rollout.Revision {
		np := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"tier": tier}}}}}}
		r, err := rollout.Current(nc, np, rollout.Inherited{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	return rev("general"), rev("general-v2")
}

// canaryThenHalfThenAll is the rollout: a canary, half of the rest,
// then everyone.
func canaryThenHalfThenAll() v1alpha1.XKarpenterClusterSpec {
	spec := validSpec()
	spec.Rollout = &v1alpha1.Rollout{Waves: []v1alpha1.Wave{{Organizations: []string{"canary"}}, {Percent: ptr.To[int32](50)}, {Percent: ptr.To[int32](100)}}}
	spec.Default()
	return spec
}

// fleet is ten organizations, canary among them, each with one pool on a
// revision; holdup says why a pool is not done on it. Their NodeClaims are
// read.
func fleet(on map[string]string, holdup map[string]string) rolloutView {
	v := rolloutView{Pools: map[string][]trackedPool{}, Current: map[string]rollout.Revision{}, NodesRead: true}
	for org, rev := range on {
		v.Pools[testRef] = append(v.Pools[testRef], trackedPool{Name: "kiso-" + org, Organization: org, Revision: rev, Holdup: holdup[org]})
	}
	return v
}

var tenOrganizations = []string{"canary", "o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9"}

func allOn(rev string) map[string]string {
	out := map[string]string{}
	for _, o := range tenOrganizations {
		out[o] = rev
	}
	return out
}

func TestARolloutMovesWaveByWave(t *testing.T) {
	v1, v2 := twoRevisions(t)
	spec := canaryThenHalfThenAll()
	paused := canaryThenHalfThenAll()
	paused.Rollout.Paused = true
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

	// The organizations of the 50% wave, picked by their names' hash.
	canaryMoved, halfMoved := allOn(v1.ID), allOn(v1.ID)
	canaryMoved["canary"], halfMoved["canary"] = v2.ID, v2.ID
	half := 0
	for _, o := range tenOrganizations[1:] {
		if rollout.WaveOf(o, spec.Rollout.Waves) == 1 {
			halfMoved[o] = v2.ID
			half++
		}
	}
	if half == 0 || half == 9 {
		t.Fatalf("the 50%% wave holds %d of 9 organizations; the test needs a wave between", half)
	}
	drifting := map[string]string{"canary": "1 of NodePool kiso-canary's nodes are drifted and not yet replaced"}

	// The platform changed the reference; each step is one reconcile, from
	// the state the step before left.
	steps := []struct {
		what     string
		spec     v1alpha1.XKarpenterClusterSpec
		on       map[string]string
		holdup   map[string]string
		after    time.Duration
		wantWave int32
		wantHeld string
		// wantCalledAgain: when the reconcile asks to be called again, a soaking wave's end or a held wave's
		// progressDeadline (the default 2h from when it opened), which nothing else would wake the cluster for.
		wantCalledAgain time.Duration
		wantOnNew       int32
		wantWait        int32
		// wantSeen: the organizations' view of the cluster (clusterview) changes, which wakes every one of
		// them; only a new revision, an opened wave or a snapshot dropped may.
		wantSeen bool
	}{
		{what: "a new revision opens the canary's wave", spec: spec, on: allOn(v1.ID), wantWave: 0, wantCalledAgain: 2 * time.Hour, wantHeld: "organization canary: pool kiso-canary is still on revision " + v1.ID, wantWait: 9, wantSeen: true},
		{what: "the canary moved; Karpenter still replaces its drifted node", spec: spec, on: canaryMoved, holdup: drifting, wantWave: 0, wantCalledAgain: 2 * time.Hour, wantHeld: "drifted", wantOnNew: 1, wantWait: 9},
		{what: "replaced: the canary's wave is done and soaks", spec: spec, on: canaryMoved, wantWave: 0, wantCalledAgain: 10 * time.Minute, wantOnNew: 1, wantWait: 9},
		{what: "paused: the soak is over but no further wave opens", spec: paused, on: canaryMoved, after: 11 * time.Minute, wantWave: 0, wantHeld: "spec.rollout.paused", wantOnNew: 1, wantWait: 9},
		{what: "resumed: the 50% wave opens", spec: spec, on: canaryMoved, after: 11 * time.Minute, wantWave: 1, wantCalledAgain: 2 * time.Hour, wantHeld: "is still on revision", wantOnNew: 1, wantWait: int32(9 - half), wantSeen: true},
		{what: "the 50% wave moved and soaks", spec: spec, on: halfMoved, after: 12 * time.Minute, wantWave: 1, wantCalledAgain: 10 * time.Minute, wantOnNew: int32(1 + half), wantWait: int32(9 - half)},
		{what: "the last wave opens", spec: spec, on: halfMoved, after: 23 * time.Minute, wantWave: 2, wantCalledAgain: 2 * time.Hour, wantHeld: "is still on revision", wantOnNew: int32(1 + half), wantSeen: true},
		{what: "everyone moved: the rollout is done", spec: spec, on: allOn(v2.ID), after: 24 * time.Minute, wantWave: 4, wantOnNew: 10, wantSeen: true},
	}
	state := []v1alpha1.ReferenceRollout{{Reference: testRef, Revision: v1.ID, Wave: 4, Snapshots: []v1alpha1.ReferenceSnapshot{mustSnapshot(t, v1)}}}
	seen := clusterview.ForOrganizations(v1alpha1.XKarpenterClusterStatus{Rollouts: state})
	for _, s := range steps {
		v := fleet(s.on, s.holdup)
		v.Current[testRef] = v2
		res, err := advance(s.spec, state, v, now.Add(s.after))
		if err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		r := res.Rollouts[0]
		var onNew int32
		for _, c := range r.Organizations {
			if c.Revision == v2.ID {
				onNew = c.Organizations
			}
		}
		got := fmt.Sprintf("wave %d, held by %q, called again after %s, %d on the new revision, %d waiting", r.Wave, r.HeldBy, res.RequeueAfter, onNew, r.Waiting)
		if r.Wave != s.wantWave || !strings.Contains(r.HeldBy, s.wantHeld) || (s.wantHeld == "") != (r.HeldBy == "") ||
			res.RequeueAfter != s.wantCalledAgain || onNew != s.wantOnNew || r.Waiting != s.wantWait {
			t.Errorf("%s: %s; want wave %d, held by %q, called again after %s, %d on the new revision, %d waiting", s.what, got, s.wantWave, s.wantHeld, s.wantCalledAgain, s.wantOnNew, s.wantWait)
		}
		now := clusterview.ForOrganizations(v1alpha1.XKarpenterClusterStatus{Rollouts: res.Rollouts, Rollout: summary(s.spec, res.Rollouts)})
		if diff := cmp.Diff(seen, now); (diff != "") != s.wantSeen {
			t.Errorf("%s: the organizations' view changed %t, want %t: -before, +after:\n%s", s.what, diff != "", s.wantSeen, diff)
		}
		state, seen = res.Rollouts, now
	}
	if got := snapshotRevisions(state[0]); !cmp.Equal(got, []string{v2.ID}) {
		t.Errorf("snapshots %v: no organization is on the first revision any more, only the current one is kept", got)
	}
}

func TestAWaitingRevisionKeepsItsSnapshot(t *testing.T) {
	v1, v2 := twoRevisions(t)
	v := fleet(allOn(v1.ID), nil)
	v.Current[testRef] = v2
	prev := []v1alpha1.ReferenceRollout{{Reference: testRef, Revision: v1.ID, Wave: 4, Snapshots: []v1alpha1.ReferenceSnapshot{mustSnapshot(t, v1)}}}
	res, err := advance(canaryThenHalfThenAll(), prev, v, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshotRevisions(res.Rollouts[0]); !cmp.Equal(got, []string{v2.ID, v1.ID}) {
		t.Errorf("snapshots %v, want the current revision and the one every organization is on", got)
	}
	// The reference is gone meanwhile: the state stays as it was.
	delete(v.Current, testRef)
	res, err = advance(canaryThenHalfThenAll(), prev, v, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(prev, res.Rollouts); diff != "" {
		t.Errorf("a reference not found changed the rollout: -before, +after:\n%s", diff)
	}
}

func TestARolloutWrittenOnASettledFleetIsDone(t *testing.T) {
	_, v2 := twoRevisions(t)
	v := fleet(allOn(v2.ID), nil)
	v.Current[testRef] = v2
	res, err := advance(canaryThenHalfThenAll(), nil, v, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.InProgress || res.Rollouts[0].Wave != 4 {
		t.Errorf("nobody has anything to move: in progress %v, wave %d", res.InProgress, res.Rollouts[0].Wave)
	}
}

func TestAPoolKarpenterSaysNotReadyBlocksTheRollout(t *testing.T) {
	v1, v2 := twoRevisions(t)
	on := allOn(v1.ID)
	on["canary"] = v2.ID
	np := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "kiso-canary"},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False"}}}}}
	holdup, notReady := poolHoldup(np, nil, nodeClassMarkKey)
	v := fleet(on, map[string]string{"canary": holdup})
	v.Pools[testRef][0].NotReady = notReady
	for i, p := range v.Pools[testRef] {
		if p.Organization == "canary" {
			v.Pools[testRef][i].NotReady = notReady
		}
	}
	v.Current[testRef] = v2
	res, err := advance(canaryThenHalfThenAll(), []v1alpha1.ReferenceRollout{{Reference: testRef, Revision: v2.ID}}, v, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Blocked) != 1 || !strings.Contains(res.Blocked[0], "NodePool kiso-canary is not Ready") {
		t.Errorf("blocked: %q, want the canary's NodePool not Ready", res.Blocked)
	}
}

// nodeClassMarkKey is the NodeClass mark under kiso.dev.
var nodeClassMarkKey = placement.NewRolloutAnnotations(placement.DefaultKeyDomain).NodeClass

func TestPoolHoldup(t *testing.T) {
	pool := func(gen, readyGen int64, hash string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "p", "generation": gen, "annotations": map[string]any{nodePoolHash: hash}},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "observedGeneration": readyGen}}}}}
	}
	claim := func(hash, drifted string) *unstructured.Unstructured {
		c := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "c", "annotations": map[string]any{nodePoolHash: hash}}}}
		if drifted != "" {
			c.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Drifted", "status": drifted}}}
		}
		return c
	}
	// markedPool puts a NodeClass mark on a NodePool's template; markedClaim on a NodeClaim, as Karpenter copies
	// it from the template it launches the NodeClaim from.
	markedPool := func(u *unstructured.Unstructured, mark string) *unstructured.Unstructured {
		_ = unstructured.SetNestedField(u.Object, mark, "spec", "template", "metadata", "annotations", nodeClassMarkKey)
		return u
	}
	markedClaim := func(u *unstructured.Unstructured, mark string) *unstructured.Unstructured {
		an := u.GetAnnotations()
		an[nodeClassMarkKey] = mark
		u.SetAnnotations(an)
		return u
	}
	cases := map[string]struct {
		pool   *unstructured.Unstructured
		claims []*unstructured.Unstructured
		want   string
	}{
		"DoneWithNodesOfItsTemplate":       {pool: pool(2, 2, "h2"), claims: []*unstructured.Unstructured{claim("h2", "False")}},
		"HeldByANodeKarpenterSaysDrifted":  {pool: pool(2, 2, "h2"), claims: []*unstructured.Unstructured{claim("h2", "True")}, want: "1 of NodePool p's nodes are drifted"},
		"HeldByANodeOfAnOlderTemplate":     {pool: pool(2, 2, "h2"), claims: []*unstructured.Unstructured{claim("h1", "")}, want: "1 of NodePool p's nodes are drifted"},
		"HeldUntilKarpenterSeesTheNewSpec": {pool: pool(3, 2, "h2"), want: "has not yet seen NodePool p's new spec"},
		// Karpenter has not hashed the template with the new NodeClass mark yet: the node's mark says it is
		// the old NodeClass's.
		"HeldByANodeOfAnOlderNodeClassBeforeKarpenterHashes": {pool: markedPool(pool(3, 3, "h2"), "n2"), claims: []*unstructured.Unstructured{markedClaim(claim("h2", ""), "n1")}, want: "1 of NodePool p's nodes are drifted"},
		"DoneWithNodesOfItsNodeClass":                        {pool: markedPool(pool(3, 3, "h3"), "n2"), claims: []*unstructured.Unstructured{markedClaim(claim("h3", ""), "n2")}},
		"HeldByANodeLaunchedBeforeMarks":                     {pool: markedPool(pool(3, 3, "h2"), "n2"), claims: []*unstructured.Unstructured{claim("h2", "")}, want: "1 of NodePool p's nodes are drifted"},
		"DoneUnmarkedWithUnmarkedNodes":                      {pool: pool(3, 3, "h2"), claims: []*unstructured.Unstructured{claim("h2", "")}},
		"HeldUntilKarpenterSeesTheNewSpecAsCrossplaneSendsIt": {pool: func() *unstructured.Unstructured {
			// A required resource arrives as JSON numbers: float64, which GetGeneration does not read.
			p := pool(3, 2, "h2")
			p.Object["metadata"].(map[string]any)["generation"] = float64(3)
			return p
		}(), want: "has not yet seen NodePool p's new spec"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _ := poolHoldup(tc.pool, tc.claims, nodeClassMarkKey)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("holdup %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateRollout(t *testing.T) {
	p := field.NewPath("spec", "rollout")
	cases := map[string]struct {
		rollout v1alpha1.Rollout
		want    []string
	}{
		"CanaryThenPercentages":    {rollout: *canaryThenHalfThenAll().Rollout},
		"PercentagesNotIncreasing": {rollout: v1alpha1.Rollout{Soak: "1m", Waves: []v1alpha1.Wave{{Percent: ptr.To[int32](50)}, {Percent: ptr.To[int32](50)}}}, want: []string{"spec.rollout.waves[1].percent"}},
		"PercentAbove100":          {rollout: v1alpha1.Rollout{Soak: "1m", Waves: []v1alpha1.Wave{{Percent: ptr.To[int32](150)}}}, want: []string{"spec.rollout.waves[0].percent"}},
		"AnOrganizationTwice":      {rollout: v1alpha1.Rollout{Soak: "1m", Waves: []v1alpha1.Wave{{Organizations: []string{"a"}}, {Organizations: []string{"a"}}}}, want: []string{"spec.rollout.waves[1].organizations[0]"}},
		"BothKinds":                {rollout: v1alpha1.Rollout{Soak: "1m", Waves: []v1alpha1.Wave{{Organizations: []string{"a"}, Percent: ptr.To[int32](10)}}}, want: []string{"spec.rollout.waves[0]"}},
		"ASoakGoCannotRead":        {rollout: v1alpha1.Rollout{Soak: "-1m", Waves: []v1alpha1.Wave{{Percent: ptr.To[int32](10), Soak: "soon"}}}, want: []string{"spec.rollout.soak", "spec.rollout.waves[0].soak"}},
		"NoTimeToProgress":         {rollout: v1alpha1.Rollout{Soak: "1m", ProgressDeadline: "0s", Waves: []v1alpha1.Wave{{Percent: ptr.To[int32](10)}}}, want: []string{"spec.rollout.progressDeadline"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range validateRollout(p, &tc.rollout) {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fields: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestTheClusterStagesWhatItsPoolsSay runs the function as Crossplane does:
// it asks for kiso's NodePools, the NodeClaims and the reference pair its
// pools clone, and writes the rollout into its status.
func TestTheClusterStagesWhatItsPoolsSay(t *testing.T) {
	cur := currentOfReferenceT(t)
	pool := boundPool
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","rollout":{"waves":[{"organizations":["canary","ghost"]},{"percent":100}],"soak":"5m","skip":["phantom"]}}`
	objects := fntest.Cluster{refNodeClass, refNodePool, pool("canary", "old"), pool("acme", "old"),
		`{"apiVersion":"karpenter.sh/v1","kind":"NodeClaim","metadata":{"name":"c1","labels":{"karpenter.sh/nodepool":"kiso-canary"},"annotations":{"karpenter.sh/nodepool-hash":"h"}}}`}
	rsp := fntest.Run(t, &Function{log: logging.NewNopLogger()}, newRequest(t, xr(spec), nil), withPrometheusOperator(objects))
	fntest.AssertNoFatal(t, rsp)
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	rollouts, _ := st["rollouts"].([]any)
	if len(rollouts) != 1 {
		t.Fatalf("status.rollouts: %v, want one for the reference pair", st["rollouts"])
	}
	r := rollouts[0].(map[string]any)
	if r["revision"] != cur.ID || r["wave"] != float64(0) || !strings.Contains(fmt.Sprint(r["heldBy"]), "organization canary") {
		t.Errorf("rollout %v: want revision %s, wave 0, held by the canary", r, cur.ID)
	}
	if st["rollout"] != "wave 1/3: 0/2 on "+cur.ID {
		t.Errorf("status.rollout %q", st["rollout"])
	}
	var rolled *fnv1.Condition
	for _, c := range rsp.GetConditions() {
		if c.GetType() == TypeRolledOut {
			rolled = c
		}
	}
	if rolled == nil || rolled.GetReason() != ReasonProgressing {
		t.Errorf("RolledOut condition %v, want Progressing", rolled)
	}
	// A wave naming an organization with no pool here is a warning, not an error: it may be onboarded later.
	var warned bool
	for _, r := range rsp.GetResults() {
		warned = warned || (r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && r.GetMessage() == "spec.rollout.waves[0].organizations[1]: organization ghost has no pool bound to this cluster")
	}
	if !warned {
		t.Errorf("no warning about organization ghost; results: %v", rsp.GetResults())
	}
	warned = false
	for _, r := range rsp.GetResults() {
		warned = warned || (r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && r.GetMessage() == "spec.rollout.skip[0]: organization phantom has no pool bound to this cluster")
	}
	if !warned {
		t.Errorf("no warning about skipped organization phantom; results: %v", rsp.GetResults())
	}
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl > time.Minute {
		t.Errorf("TTL %s while a rollout is in progress, want at most a minute", ttl)
	}
}

// TestAWavePastItsDeadlineIsBlocked: a wave still held once spec.rollout.progressDeadline has passed since it
// opened makes the cluster say Blocked, naming every organization that holds it and why; before that it only
// progresses.
func TestAWavePastItsDeadlineIsBlocked(t *testing.T) {
	v1, v2 := twoRevisions(t)
	spec := canaryThenHalfThenAll()
	on, holdup := allOn(v1.ID), map[string]string{}
	var waveOne []string
	for _, o := range tenOrganizations[1:] {
		if rollout.WaveOf(o, spec.Rollout.Waves) == 1 {
			on[o], holdup[o] = v2.ID, "1 of NodePool kiso-"+o+"'s nodes are drifted and not yet replaced"
			waveOne = append(waveOne, o)
		}
	}
	on["canary"] = v2.ID
	if len(waveOne) < 2 {
		t.Fatalf("the 50%% wave holds %v: the test wants two organizations holding it", waveOne)
	}
	v := fleet(on, holdup)
	v.Current[testRef] = v2
	// Whole seconds, as the status records times.
	now := time.Now().Truncate(time.Second)
	opened := func(ago time.Duration) []v1alpha1.ReferenceRollout {
		return []v1alpha1.ReferenceRollout{{Reference: testRef, Revision: v2.ID, Wave: 1, WaveOpenedAt: now.Add(-ago).UTC().Format(time.RFC3339), Snapshots: []v1alpha1.ReferenceSnapshot{mustSnapshot(t, v2), mustSnapshot(t, v1)}}}
	}
	res, err := advance(spec, opened(time.Hour), v, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Overdue) != 0 || !res.InProgress {
		t.Errorf("an hour into a 2h deadline: overdue %q, in progress %t; want it only progressing", res.Overdue, res.InProgress)
	}
	// Nothing else need wake the cluster when the deadline passes: Karpenter not replacing a node changes nothing.
	if want := time.Hour; res.RequeueAfter != want {
		t.Errorf("an hour into a 2h deadline: called again after %s, want %s, when it passes", res.RequeueAfter, want)
	}
	if res, err = advance(spec, opened(3*time.Hour), v, now); err != nil {
		t.Fatal(err)
	}
	if len(res.Overdue) != 1 {
		t.Fatalf("three hours into a 2h deadline: overdue %q, want the pair", res.Overdue)
	}
	for _, o := range waveOne {
		if !strings.Contains(res.Overdue[0], "organization "+o+": 1 of NodePool kiso-"+o+"'s nodes are drifted") {
			t.Errorf("overdue %q does not name organization %s and why", res.Overdue[0], o)
		}
	}
	if got := res.Rollouts[0].WaveOpenedAt; got != opened(3 * time.Hour)[0].WaveOpenedAt {
		t.Errorf("waveOpenedAt %q moved while the wave stayed open", got)
	}

	// The platform skips them: the wave is done without them, and they stay where they are, whether their pools
	// moved and Karpenter keeps their drifted nodes (what held the wave), or they had not moved yet.
	spec.Rollout.Skip = waveOne
	for what, view := range map[string]rolloutView{"moved, nodes not replaced": v, "not moved": fleetWithout(v, waveOne, v1.ID)} {
		if res, err = advance(spec, opened(3*time.Hour), view, now); err != nil {
			t.Fatal(err)
		}
		r := res.Rollouts[0]
		if len(res.Overdue) != 0 || r.Wave < 2 || !cmp.Equal(r.Skipped, waveOne) {
			t.Errorf("%s, with %v skipped: overdue %q, wave %d, skipped %v; want the wave done without them and them listed", what, waveOne, res.Overdue, r.Wave, r.Skipped)
		}
	}
	// Named but done, an organization is not listed as skipped.
	spec.Rollout.Skip = []string{"canary"}
	if res, err = advance(spec, opened(3*time.Hour), v, now); err != nil {
		t.Fatal(err)
	}
	if r := res.Rollouts[0]; len(r.Skipped) != 0 {
		t.Errorf("the canary, done on the new revision and named in skip, is listed as skipped: %v", r.Skipped)
	}
}

// fleetWithout puts organizations back on a revision, with no holdup: skipped, they stay there.
func fleetWithout(v rolloutView, organizations []string, revision string) rolloutView {
	out := rolloutView{Pools: map[string][]trackedPool{}, Current: v.Current, NodesRead: v.NodesRead}
	for ref, pools := range v.Pools {
		for _, p := range pools {
			if slices.Contains(organizations, p.Organization) {
				p.Revision, p.Holdup = revision, ""
			}
			out.Pools[ref] = append(out.Pools[ref], p)
		}
	}
	return out
}

// TestAChangeMidRolloutStartsOverFromTheCanary: the reference changes again (or is reverted) while a revision
// rolls out: the new revision starts from the first wave, every organization keeps the revision it is on (one
// released to its wave: moved ones their new one, the others the released one) until its wave opens for the
// newest, and the released revision stays the one last finished, never the interrupted one.
func TestAChangeMidRolloutStartsOverFromTheCanary(t *testing.T) {
	v1, v2 := twoRevisions(t)
	nc := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"role": "r"}}}
	np := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"tier": "general-v3"}}}}}}
	v3, err := rollout.Current(nc, np, rollout.Inherited{})
	if err != nil {
		t.Fatal(err)
	}
	spec := canaryThenHalfThenAll()
	// v2 rolled out to the canary and the 50% wave, v1 released.
	on := allOn(v1.ID)
	on["canary"] = v2.ID
	for _, o := range tenOrganizations[1:] {
		if rollout.WaveOf(o, spec.Rollout.Waves) == 1 {
			on[o] = v2.ID
		}
	}
	rolling := []v1alpha1.ReferenceRollout{{Reference: testRef, Revision: v2.ID, Wave: 2, Released: v1.ID, Snapshots: []v1alpha1.ReferenceSnapshot{mustSnapshot(t, v2), mustSnapshot(t, v1)}}}
	for name, next := range map[string]rollout.Revision{"ASecondChange": v3, "ARevert": v1} {
		t.Run(name, func(t *testing.T) {
			v := fleet(on, nil)
			v.Current[testRef] = next
			res, err := advance(spec, rolling, v, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			r := res.Rollouts[0]
			if r.Revision != next.ID || r.Wave != 0 || !strings.Contains(r.HeldBy, "organization canary: pool kiso-canary is still on revision "+v2.ID) {
				t.Errorf("rollout of %s: revision %s, wave %d, held by %q; want wave 0 held by the canary", next.ID, r.Revision, r.Wave, r.HeldBy)
			}
			if r.Released != v1.ID {
				t.Errorf("released %q, want %s: the interrupted %s was never released", r.Released, v1.ID, v2.ID)
			}
			want := []string{next.ID, v1.ID, v2.ID}
			if next.ID == v1.ID {
				want = []string{v1.ID, v2.ID}
			}
			if got := snapshotRevisions(r); !cmp.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
				t.Errorf("snapshots %v, want %v: every revision an organization is on, and the released one", got, want)
			}
		})
	}
}

// TestTheReleasedRevisionIsKept: while a revision rolls out, the cluster says which one was last released (every
// wave moved and soaked) and keeps its specs, so a pool composed meanwhile starts there; once the rollout is done,
// the new revision is the released one.
func TestTheReleasedRevisionIsKept(t *testing.T) {
	v1, v2 := twoRevisions(t)
	spec := canaryThenHalfThenAll()
	done := []v1alpha1.ReferenceRollout{{Reference: testRef, Revision: v1.ID, Wave: 4, Released: v1.ID, Snapshots: []v1alpha1.ReferenceSnapshot{mustSnapshot(t, v1)}}}
	v := fleet(allOn(v1.ID), nil)
	v.Current[testRef] = v2
	res, err := advance(spec, done, v, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rollouts[0]; r.Released != v1.ID || r.Wave != 0 || !cmp.Equal(snapshotRevisions(r), []string{v2.ID, v1.ID}) {
		t.Errorf("a new revision rolling: released %q, wave %d, snapshots %v; want %s released, wave 0, both kept", r.Released, r.Wave, snapshotRevisions(r), v1.ID)
	}
	// Every organization is on the new revision and every wave done: it is released, and the old one's specs go.
	v = fleet(allOn(v2.ID), nil)
	v.Current[testRef] = v2
	rolling := []v1alpha1.ReferenceRollout{{Reference: testRef, Revision: v2.ID, Wave: 3, Released: v1.ID, Snapshots: []v1alpha1.ReferenceSnapshot{mustSnapshot(t, v2), mustSnapshot(t, v1)}}}
	if res, err = advance(spec, rolling, v, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := res.Rollouts[0]; r.Released != v2.ID || r.Wave != 4 || !cmp.Equal(snapshotRevisions(r), []string{v2.ID}) {
		t.Errorf("the last wave done: released %q, wave %d, snapshots %v; want %s released, wave 4, only its snapshot", r.Released, r.Wave, snapshotRevisions(r), v2.ID)
	}
}

// TestNodeClaimsAreReadOnlyWhileAWaveIsOpen: NodeClaims grow with the fleet
// and change all day, and Crossplane calls the cluster on each change of what
// it requires: a cluster whose rollouts are done does not ask for them, one
// with a wave open does, and a wave is never judged without them.
func TestNodeClaimsAreReadOnlyWhileAWaveIsOpen(t *testing.T) {
	cur := currentOfReferenceT(t)
	pool := boundPool
	// The canary's node is drifted: judged with its NodeClaims, the canary's wave is not done.
	drifted := `{"apiVersion":"karpenter.sh/v1","kind":"NodeClaim","metadata":{"name":"c1","labels":{"karpenter.sh/nodepool":"kiso-canary"},"annotations":{"karpenter.sh/nodepool-hash":"h"}},
		"status":{"conditions":[{"type":"Drifted","status":"True"}]}}`
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","rollout":{"waves":[{"organizations":["canary"]},{"percent":100}],"soak":"0s"}}`
	rolloutOf := func(rsp *fnv1.RunFunctionResponse) map[string]any {
		st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
		rollouts, _ := st["rollouts"].([]any)
		if len(rollouts) != 1 {
			t.Fatalf("status.rollouts: %v, want one for the reference pair", st["rollouts"])
		}
		return rollouts[0].(map[string]any)
	}

	settled := fntest.Cluster{refNodeClass, refNodePool, pool("canary", cur.ID), pool("acme", cur.ID), drifted}
	req, rsp := fntest.Settle(t, &Function{log: logging.NewNopLogger()}, newRequest(t, xr(spec), nil), withPrometheusOperator(settled))
	fntest.AssertNoFatal(t, rsp)
	if _, asked := rsp.GetRequirements().GetResources()[requireNodeClaims]; asked {
		t.Error("a cluster whose every organization is on the current revision asks for every NodeClaim")
	}
	if r := rolloutOf(rsp); r["wave"] != float64(3) {
		t.Errorf("rollout %v: want it done (wave 3)", r)
	}
	done := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"]

	// The reference changes: the canary's wave opens, judged on its NodeClaims.
	moving := fntest.Cluster{refNodeClass, strings.Replace(refNodePool, "general-v2", "general-v3", 1), pool("canary", cur.ID), pool("acme", cur.ID), drifted}
	observedXR := fntest.JSONMap(t, xr(spec))
	observedXR["status"] = done
	next := newRequest(t, fntest.ToJSON(t, observedXR), nil)
	next.RequiredResources = req.GetRequiredResources() // as Crossplane seeds a reconcile with the last one's reads
	rsp = fntest.Run(t, &Function{log: logging.NewNopLogger()}, next, withPrometheusOperator(moving))
	fntest.AssertNoFatal(t, rsp)
	if _, asked := rsp.GetRequirements().GetResources()[requireNodeClaims]; !asked {
		t.Fatal("a wave is open and the cluster does not ask for the NodeClaims it is judged on")
	}
	if r := rolloutOf(rsp); r["wave"] != float64(0) || !strings.Contains(fmt.Sprint(r["heldBy"]), "organization canary") {
		t.Errorf("rollout %v: want wave 0 held by the canary (its pool is on the old revision)", r)
	}
}

// TestAWaveIsNotJudgedWithoutItsNodeClaims: the reconcile that first finds a
// wave open has not read the NodeClaims yet; it keeps the last state rather
// than judge the wave on none (which would find no drifted node).
func TestAWaveIsNotJudgedWithoutItsNodeClaims(t *testing.T) {
	v1, v2 := twoRevisions(t)
	on := allOn(v1.ID)
	on["canary"] = v2.ID
	v := fleet(on, nil) // no holdup: judged on no NodeClaims, the canary's wave would be done
	v.NodesRead = false
	v.Current[testRef] = v2
	prev := []v1alpha1.ReferenceRollout{{Reference: testRef, Revision: v2.ID, Wave: 0, Snapshots: []v1alpha1.ReferenceSnapshot{mustSnapshot(t, v2), mustSnapshot(t, v1)}}}
	res, err := advance(canaryThenHalfThenAll(), prev, v, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(prev, res.Rollouts); diff != "" {
		t.Errorf("a wave judged before its NodeClaims were read: -before, +after:\n%s", diff)
	}
	if !res.JudgesNodes || !res.InProgress {
		t.Errorf("judges nodes %t, in progress %t: want both, so the NodeClaims are asked for", res.JudgesNodes, res.InProgress)
	}
}

// The reference pair the function-level rollout tests clone, as the apiserver returns it.
const (
	refNodeClass = `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"default"},"spec":{"role":"r"}}`
	refNodePool  = `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"default","labels":{"kiso.dev/reference":"true"}},"spec":{"template":{"metadata":{"labels":{"tier":"general-v2"}}}}}`
)

// currentOfReferenceT is the revision of refNodeClass and refNodePool.
func currentOfReferenceT(t testing.TB) rollout.Revision {
	t.Helper()
	cur, err := rollout.Current(&unstructured.Unstructured{Object: fntest.JSONMap(t, refNodeClass)}, &unstructured.Unstructured{Object: fntest.JSONMap(t, refNodePool)}, rollout.Inherited{})
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

// boundPool is an organization's NodePool bound to cluster prod, cloned from testRef at a revision, Ready.
func boundPool(org, rev string) string {
	return fmt.Sprintf(`{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"kiso-%[1]s","generation":1,
		"labels":{"app.kubernetes.io/managed-by":"kiso","kiso.dev/organization":"%[1]s"},
		"annotations":{"kiso.dev/cluster":"prod","kiso.dev/cloned-from":"%[2]s","kiso.dev/revision":"%[3]s","karpenter.sh/nodepool-hash":"h"}},
		"status":{"conditions":[{"type":"Ready","status":"True","observedGeneration":1}]}}`, org, testRef, rev)
}

func mustSnapshot(t *testing.T, r rollout.Revision) v1alpha1.ReferenceSnapshot {
	t.Helper()
	s, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func snapshotRevisions(r v1alpha1.ReferenceRollout) []string {
	out := make([]string, 0, len(r.Snapshots))
	for _, s := range r.Snapshots {
		out = append(out, s.Revision)
	}
	return out
}

// TestEachReferencePairOfAnOrganizationRollsOutOnItsOwn: an organization with two classes of capacity has a pool
// per reference pair, and a change of one pair rolls out wave by wave across that pair's pools only: the other
// pair's pools, the same organizations', stay done on their revision and hold nothing.
func TestEachReferencePairOfAnOrganizationRollsOutOnItsOwn(t *testing.T) {
	const gpuRef = "EC2NodeClass.v1.karpenter.k8s.aws/gpu,NodePool/gpu"
	v1, v2 := twoRevisions(t)
	spec := canaryThenHalfThenAll()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	view := func(gpuOn map[string]string) rolloutView {
		v := fleet(allOn(v1.ID), nil)
		for org, rev := range gpuOn {
			v.Pools[gpuRef] = append(v.Pools[gpuRef], trackedPool{Name: "kiso." + org + ".gpu", Organization: org, Revision: rev})
		}
		// The platform changed the GPU pair only.
		v.Current[testRef], v.Current[gpuRef] = v1, v2
		return v
	}
	state := []v1alpha1.ReferenceRollout{
		{Reference: gpuRef, Revision: v1.ID, Wave: 4, Snapshots: []v1alpha1.ReferenceSnapshot{mustSnapshot(t, v1)}},
		{Reference: testRef, Revision: v1.ID, Wave: 4, Snapshots: []v1alpha1.ReferenceSnapshot{mustSnapshot(t, v1)}},
	}
	byRef := func(res rolloutResult) map[string]v1alpha1.ReferenceRollout {
		out := map[string]v1alpha1.ReferenceRollout{}
		for _, r := range res.Rollouts {
			out[r.Reference] = r
		}
		return out
	}

	res, err := advance(spec, state, view(allOn(v1.ID)), now)
	if err != nil {
		t.Fatal(err)
	}
	got := byRef(res)
	if gpu := got[gpuRef]; gpu.Revision != v2.ID || gpu.Wave != 0 || !strings.Contains(gpu.HeldBy, "canary") {
		t.Errorf("the GPU pair's rollout %+v: want revision %s, wave 0, held by the canary", gpu, v2.ID)
	}
	if general := got[testRef]; general.Revision != v1.ID || general.HeldBy != "" || general.Waiting != 0 {
		t.Errorf("the general pair's rollout %+v: want it done on %s, holding nothing, while only the GPU pair changed", general, v1.ID)
	}

	// The canary's GPU pool moved and its nodes are replaced; once the wave has soaked, the next wave opens for
	// the GPU pair, and the general pair is still done, untouched.
	state = res.Rollouts
	canaryMoved := allOn(v1.ID)
	canaryMoved["canary"] = v2.ID
	res, err = advance(spec, state, view(canaryMoved), now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if gpu := byRef(res)[gpuRef]; gpu.Wave != 0 || gpu.WaveDoneAt == "" {
		t.Errorf("the GPU pair's rollout %+v: want the canary's wave done, soaking", gpu)
	}
	res, err = advance(spec, res.Rollouts, view(canaryMoved), now.Add(20*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	got = byRef(res)
	if gpu := got[gpuRef]; gpu.Wave < 1 {
		t.Errorf("the GPU pair's rollout %+v: want its next wave open once the canary's GPU pool is done and soaked", gpu)
	}
	if general := got[testRef]; general.Revision != v1.ID || general.HeldBy != "" || general.Waiting != 0 {
		t.Errorf("the general pair's rollout %+v: want it done on %s throughout", general, v1.ID)
	}
}

// TestAWaveWhoseNodeClaimsOutgrowARequestIsHeldToItsDeadline: once Crossplane's last reconcile failed because
// the NodeClaims made the function's request larger than its server accepts (the Synced condition a real gRPC
// refusal leaves), the cluster asks for no NodeClaim for an hour and holds the open wave on its unknown nodes,
// so the rollout goes on being judged: at spec.rollout.progressDeadline it says Blocked, and skip lets it go on.
// An hour later the NodeClaims are read again. Before, every retry asked for them and failed the same way.
func TestAWaveWhoseNodeClaimsOutgrowARequestIsHeldToItsDeadline(t *testing.T) {
	cur := currentOfReferenceT(t)
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","rollout":{"waves":[{"organizations":["canary"]},{"percent":100}],"soak":"0s","progressDeadline":"30m"}}`
	fn := &Function{log: logging.NewNopLogger()}
	// The canary's wave opens, held by its pool on the old revision; it asks for the NodeClaims.
	opening := fntest.Cluster{refNodeClass, refNodePool, boundPool("canary", "old"), boundPool("acme", "old")}
	rsp := fntest.Run(t, fn, newRequest(t, xr(spec), nil), withPrometheusOperator(opening))
	fntest.AssertNoFatal(t, rsp)
	if _, asked := rsp.GetRequirements().GetResources()[requireNodeClaims]; !asked {
		t.Fatal("an open wave does not ask for its NodeClaims")
	}
	status := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)

	// The canary has moved, and the request with every NodeClaim was refused.
	moved := fntest.Cluster{refNodeClass, refNodePool, boundPool("canary", cur.ID), boundPool("acme", "old")}
	withStatus := func(extra map[string]any) string {
		observed := fntest.JSONMap(t, xr(spec))
		st := map[string]any{}
		maps.Copy(st, status)
		maps.Copy(st, extra)
		observed["status"] = st
		return fntest.ToJSON(t, observed)
	}
	rolledOut := func(rsp *fnv1.RunFunctionResponse) *fnv1.Condition {
		for _, c := range rsp.GetConditions() {
			if c.GetType() == TypeRolledOut {
				return c
			}
		}
		t.Fatal("no RolledOut condition")
		return nil
	}
	rsp = fntest.Run(t, fn, newRequest(t, withStatus(fntest.RefusedStatus(t, "kiso-cluster")), nil), withPrometheusOperator(moved))
	fntest.AssertNoFatal(t, rsp)
	if _, asked := rsp.GetRequirements().GetResources()[requireNodeClaims]; asked {
		t.Error("the NodeClaims are asked for again right after they made the request too large")
	}
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	unreadAt, _ := st["nodeClaimsUnreadAt"].(string)
	if at, err := time.Parse(time.RFC3339, unreadAt); err != nil || time.Since(at) > time.Minute {
		t.Fatalf("status.nodeClaimsUnreadAt %q, want about now", unreadAt)
	}
	r := st["rollouts"].([]any)[0].(map[string]any)
	if want := "organization canary: NodePool kiso-canary: " + nodesUnknown; r["wave"] != float64(0) || r["heldBy"] != want {
		t.Errorf("rollout %v: want wave 0 held by %q (judged without its nodes it would be done)", r, want)
	}
	if c := rolledOut(rsp); c.GetReason() != ReasonProgressing {
		t.Errorf("RolledOut %s: %s, want Progressing within the deadline", c.GetReason(), c.GetMessage())
	}
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl > 30*time.Minute+time.Second {
		t.Errorf("TTL %s, want the wave's deadline at most", ttl)
	}

	// Past the deadline, still unread: Blocked, naming the unknown nodes; spec.rollout.skip would let it go on.
	opened := time.Now().Add(-45 * time.Minute).UTC().Format(time.RFC3339)
	tenMinutesAgo := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	status["rollouts"].([]any)[0].(map[string]any)["waveOpenedAt"] = opened
	rsp = fntest.Run(t, fn, newRequest(t, withStatus(map[string]any{"nodeClaimsUnreadAt": tenMinutesAgo}), nil), withPrometheusOperator(moved))
	fntest.AssertNoFatal(t, rsp)
	if _, asked := rsp.GetRequirements().GetResources()[requireNodeClaims]; asked {
		t.Error("the NodeClaims are asked for within the hour after a refusal")
	}
	if c := rolledOut(rsp); c.GetReason() != ReasonBlocked || !strings.Contains(c.GetMessage(), nodesUnknown) {
		t.Errorf("RolledOut %s: %s, want Blocked by the canary's unknown nodes", c.GetReason(), c.GetMessage())
	}
	if st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any); st["nodeClaimsUnreadAt"] != tenMinutesAgo {
		t.Errorf("status.nodeClaimsUnreadAt %v, want %s kept", st["nodeClaimsUnreadAt"], tenMinutesAgo)
	}

	// An hour on, the NodeClaims are read again, and the wave is judged on them.
	rsp = fntest.Run(t, fn, newRequest(t, withStatus(map[string]any{"nodeClaimsUnreadAt": time.Now().Add(-61 * time.Minute).UTC().Format(time.RFC3339)}), nil), withPrometheusOperator(moved))
	fntest.AssertNoFatal(t, rsp)
	if _, asked := rsp.GetRequirements().GetResources()[requireNodeClaims]; !asked {
		t.Error("no NodeClaim asked for an hour after the refusal")
	}
	st = fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	if st["nodeClaimsUnreadAt"] != nil {
		t.Errorf("status.nodeClaimsUnreadAt %v once they are read again", st["nodeClaimsUnreadAt"])
	}
	if r := st["rollouts"].([]any)[0].(map[string]any); r["wave"] == float64(0) {
		t.Errorf("rollout %v: the canary's wave is still open once its nodes are read (it has none drifted)", r)
	}

	// A refusal while no wave was open is not the NodeClaims': nothing is recorded about them.
	done := fntest.Cluster{refNodeClass, refNodePool, boundPool("canary", cur.ID), boundPool("acme", cur.ID)}
	rsp = fntest.Run(t, fn, newRequest(t, xr(spec), nil), withPrometheusOperator(done))
	doneStatus := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)
	observed := fntest.JSONMap(t, xr(spec))
	maps.Copy(doneStatus, fntest.RefusedStatus(t, "kiso-cluster"))
	observed["status"] = doneStatus
	rsp = fntest.Run(t, fn, newRequest(t, fntest.ToJSON(t, observed), nil), withPrometheusOperator(done))
	if st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any); st["nodeClaimsUnreadAt"] != nil {
		t.Errorf("a refusal with every rollout done records unread NodeClaims: %v", st["nodeClaimsUnreadAt"])
	}
}
