package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/server"
	"github.com/kiso-dev/kiso/monitoring"
)

// TestEachOrganizationsRolloutStateIsExported: the canary holds the open wave (blocked once past the deadline,
// progressing before), a done organization of the same wave, one waiting for the next and one skipped.
func TestEachOrganizationsRolloutStateIsExported(t *testing.T) {
	cur := currentOfReferenceT(t)
	now := time.Now().Truncate(time.Second)
	spec := `{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333","rollout":{"waves":[{"organizations":["canary","early"]},{"percent":100}],` +
		`"soak":"5m","progressDeadline":"1h","skip":["skipped"]}}`
	objects := withPrometheusOperator(fntest.Cluster{refNodeClass, refNodePool,
		boundPool("canary", "old"), boundPool("early", cur.ID), boundPool("late", "old"), boundPool("skipped", "old")})
	states := func(openedAgo time.Duration) map[string]string {
		status := fmt.Sprintf(`{"conditions":[{"type":"Ready","status":"True","reason":"Available"}],"rollouts":[{"reference":%q,"revision":%q,"wave":0,"waiting":0,"waveOpenedAt":%q}]}`,
			testRef, cur.ID, now.Add(-openedAgo).UTC().Format(time.RFC3339))
		xrJSON := `{"apiVersion":"kiso.dev/v1alpha1","kind":"XKarpenterCluster","metadata":{"name":"prod"},"spec":` + spec + `,"status":` + status + `}`
		req, rsp := fntest.Settle(t, &Function{log: logging.NewNopLogger()}, newRequest(t, xrJSON, nil), objects)
		fntest.AssertNoFatal(t, rsp)
		got := newClusterReporter().report(server.Call{Req: req, Rsp: rsp, Now: now})
		if r := got[monitoring.ClusterReady.Name]; len(r) != 1 || r[0].Value != 1 || r[0].Labels[0] != "prod" {
			t.Errorf("cluster ready series %v, want prod at 1", r)
		}
		out := map[string]string{}
		for _, s := range got[monitoring.RolloutOrganizationState.Name] {
			if s.Labels[0] != "prod" || s.Value != 1 {
				t.Errorf("rollout series %v, want cluster prod at 1", s)
			}
			out[s.Labels[1]] = s.Labels[2]
		}
		return out
	}
	want := map[string]string{"canary": "progressing", "early": "done", "late": "waiting", "skipped": "skipped"}
	if diff := cmp.Diff(want, states(time.Minute)); diff != "" {
		t.Errorf("a minute into the wave: -want, +got:\n%s", diff)
	}
	want["canary"] = "blocked"
	if diff := cmp.Diff(want, states(2*time.Hour)); diff != "" {
		t.Errorf("past the deadline: -want, +got:\n%s", diff)
	}
}

func TestAClusterWithoutARolloutExportsNoRolloutState(t *testing.T) {
	req := newRequest(t, xr(`{"clusterName":"prod","region":"eu-west-3","accountId":"111122223333"}`), nil)
	rsp := run(t, req)
	got := newClusterReporter().report(server.Call{Req: req, Rsp: rsp, Now: time.Now()})
	if r := got[monitoring.ClusterReady.Name]; len(r) != 1 || r[0].Value != 0 {
		t.Errorf("a cluster Crossplane has not made Ready: %v, want 0", r)
	}
	if s, known := got[monitoring.RolloutOrganizationState.Name]; !known || len(s) != 0 {
		t.Errorf("rollout series %v (told: %t), want none, told", s, known)
	}
}

// TestARolloutIsReadAgainAtMostEvery30SecondsWhileCalledSoon: a call soon after one that read the rollout, and
// that asks to be called again within a minute, leaves the states as they were; a later call, or one before a
// longer wait, reads them.
func TestARolloutIsReadAgainAtMostEvery30SecondsWhileCalledSoon(t *testing.T) {
	req, rsp := rolloutAtScale(t)
	start := time.Now()
	r := newClusterReporter()
	read := func(after, ttl time.Duration) bool {
		t.Helper()
		rsp.GetMeta().Ttl = durationpb.New(ttl)
		_, told := r.report(server.Call{Req: req, Rsp: rsp, Now: start.Add(after)})[monitoring.RolloutOrganizationState.Name]
		return told
	}
	for _, tc := range []struct {
		after, ttl time.Duration
		want       bool
	}{
		{after: 0, ttl: time.Minute, want: true},
		{after: 10 * time.Second, ttl: time.Minute, want: false},
		{after: 20 * time.Second, ttl: time.Hour, want: true},
		{after: 40 * time.Second, ttl: time.Minute, want: false},
		{after: 50 * time.Second, ttl: time.Minute, want: true},
	} {
		if got := read(tc.after, tc.ttl); got != tc.want {
			t.Errorf("a call %s after the first, asking for %s: read the rollout %t, want %t", tc.after, tc.ttl, got, tc.want)
		}
	}
}
