package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
	"github.com/kiso-dev/kiso/functions/internal/server"
	"github.com/kiso-dev/kiso/monitoring"
)

func TestTheOrganizationsSeriesNameItsPoolsAndNamespaces(t *testing.T) {
	stacks := []any{
		map[string]any{"name": "web", "pool": "kiso-acme.web", "namespaces": []any{"acme-web", "acme-www"}},
		map[string]any{"name": "jobs", "pool": "kiso-acme.jobs", "namespaces": []any{"acme-jobs"}},
	}
	pools := []any{
		map[string]any{"name": "kiso-acme.web", "stacks": []any{"web"}},
		map[string]any{"name": "kiso-acme.jobs", "stacks": []any{"jobs"}},
	}
	shared := []any{map[string]any{"name": "kiso-acme", "stacks": []any{"web", "jobs"}}}
	ready := []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available"}}
	notYet := []any{map[string]any{"type": "Ready", "status": "False", "reason": "Creating"}}

	cases := map[string]struct {
		spec, observedStatus, desiredStatus map[string]any
		want                                server.Samples
	}{
		"StackIsolationInWarnMode": {
			spec:           map[string]any{"organization": "acme", "isolation": "stack", "clusterRef": map[string]any{"name": "prod"}},
			observedStatus: map[string]any{"conditions": ready},
			desiredStatus:  map[string]any{"pools": pools, "stacks": stacks, "warnedPods": 2},
			want: server.Samples{
				monitoring.OrganizationReady.Name:      {{Labels: []string{"prod", "acme", "acme-x1"}, Value: 1}},
				monitoring.OrganizationCondition.Name:  {{Labels: []string{"prod", "acme", "acme-x1", "Ready", "True", "Available"}, Value: 1}},
				monitoring.OrganizationWarnedPods.Name: {{Labels: []string{"prod", "acme", "acme-x1"}, Value: 2}},
				monitoring.PoolInfo.Name: {
					{Labels: []string{"prod", "acme", "web", "kiso-acme.web"}, Value: 1},
					{Labels: []string{"prod", "acme", "jobs", "kiso-acme.jobs"}, Value: 1},
				},
				monitoring.NamespaceInfo.Name: {
					{Labels: []string{"prod", "acme", "web", "acme-web"}, Value: 1},
					{Labels: []string{"prod", "acme", "web", "acme-www"}, Value: 1},
					{Labels: []string{"prod", "acme", "jobs", "acme-jobs"}, Value: 1},
				},
			},
		},
		// One pool serves every stack: it names none. Enforce mode counts nothing, so no warned pods series.
		"OrganizationIsolationUnboundNotReadyYet": {
			spec:           map[string]any{"organization": "acme"},
			observedStatus: map[string]any{"conditions": notYet},
			desiredStatus:  map[string]any{"pools": shared, "stacks": stacks[1:]},
			want: server.Samples{
				monitoring.OrganizationReady.Name:      {{Labels: []string{"", "acme", "acme-x1"}, Value: 0}},
				monitoring.OrganizationCondition.Name:  {{Labels: []string{"", "acme", "acme-x1", "Ready", "False", "Creating"}, Value: 1}},
				monitoring.OrganizationWarnedPods.Name: {},
				monitoring.PoolInfo.Name:               {{Labels: []string{"", "acme", "", "kiso-acme"}, Value: 1}},
				monitoring.NamespaceInfo.Name:          {{Labels: []string{"", "acme", "jobs", "acme-jobs"}, Value: 1}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := mustStruct(t, map[string]any{"metadata": map[string]any{"name": "acme-x1", "uid": "xr-uid"}, "spec": tc.spec, "status": tc.observedStatus})
			desired := mustStruct(t, map[string]any{"status": tc.desiredStatus})
			c := server.Call{
				Req: &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: observed}}},
				Rsp: &fnv1.RunFunctionResponse{Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: desired}}},
			}
			if diff := cmp.Diff(tc.want, reportOrganization(c)); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

// TestTheSeriesReadWhatTheFunctionWrites: from a real call in Warn mode, the series carry the count and the pools
// the status says.
func TestTheSeriesReadWhatTheFunctionWrites(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, clusterPolicy, namespace("acme-web"), namespace("batch"),
		pod("acme-web", "bare", "", "Pending"), pod("batch", "also-bare", "", "Running")}
	req := newRequest(t, input, xr(placementSpec(v1alpha1.IsolationStack, &v1alpha1.Placement{Mode: v1alpha1.PlacementWarn})), nil)
	rsp := run(t, req, world)
	fntest.AssertNoFatal(t, rsp)
	st := fntest.AsMap(t, rsp.GetDesired().GetComposite().GetResource())["status"].(map[string]any)

	got := reportOrganization(server.Call{Req: req, Rsp: rsp})
	if warned := got[monitoring.OrganizationWarnedPods.Name]; len(warned) != 1 || warned[0].Value != st["warnedPods"] {
		t.Errorf("warned pods series %v; status.warnedPods is %v", warned, st["warnedPods"])
	}
	var want, pools []string
	for _, p := range st["pools"].([]any) {
		want = append(want, p.(map[string]any)["name"].(string))
	}
	for _, s := range got[monitoring.PoolInfo.Name] {
		pools = append(pools, s.Labels[3])
	}
	if len(want) != 2 || !cmp.Equal(want, pools) {
		t.Errorf("pool series name %v; status.pools name %v, want the two stacks' pools", pools, want)
	}
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
