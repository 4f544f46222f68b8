package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/monitoring"
)

var (
	testReady = monitoring.Family{Name: "test_ready", Help: "Ready.", Labels: []string{"organization"}}
	testInfo  = monitoring.Family{Name: "test_info", Help: "Info.", Labels: []string{"organization", "nodepool"}}
)

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// callFor is a request for an XR named name and a response that asks to be called again within ttl.
func callFor(t *testing.T, name string, ttl time.Duration) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse) {
	t.Helper()
	xr, err := structpb.NewStruct(map[string]any{"metadata": map[string]any{"name": name, "uid": "uid-" + name}, "spec": map[string]any{"organization": name}})
	if err != nil {
		t.Fatal(err)
	}
	return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}},
		&fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(ttl)}}
}

// reportPools reports test_ready 1 and a test_info per pool a test sets.
func reportPools(pools map[string][]string) func(Call) Samples {
	return func(c Call) Samples {
		org := c.Spec().GetFields()["organization"].GetStringValue()
		s := Samples{}
		s.Add(testReady, 1, org)
		if p, told := pools[org]; told {
			s.Known(testInfo)
			for _, name := range p {
				s.Add(testInfo, 1, org, name)
			}
		}
		return s
	}
}

// gather scrapes the collector as a registry that checks every series does, one line per series.
func gather(t *testing.T, col *collector) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(col)
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var b strings.Builder
	for _, f := range families {
		for _, m := range f.GetMetric() {
			b.WriteString(f.GetName())
			for _, l := range m.GetLabel() {
				b.WriteString(" " + l.GetName() + "=" + l.GetValue())
			}
			fmt.Fprintf(&b, " %g\n", m.GetGauge().GetValue())
		}
	}
	return b.String()
}

func TestAnXRsSeriesAreThoseOfItsLatestCall(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	pools := map[string][]string{"acme": {"kiso-acme.web", "kiso-acme.jobs"}}
	col := newCollector([]monitoring.Family{testReady, testInfo}, clk.now)
	r := reporting{FunctionRunnerServiceServer: nil, metrics: Metrics{Families: []monitoring.Family{testReady, testInfo}, Report: reportPools(pools)}, collector: col, log: logging.NewNopLogger()}
	call := func(name string, ttl time.Duration) {
		t.Helper()
		req, rsp := callFor(t, name, ttl)
		r.FunctionRunnerServiceServer = fixedRunner{rsp: rsp}
		if _, err := r.RunFunction(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}

	call("acme", time.Hour)
	want := `test_info nodepool=kiso-acme.jobs organization=acme 1
test_info nodepool=kiso-acme.web organization=acme 1
test_ready organization=acme 1
`
	if diff := cmp.Diff(want, gather(t, col)); diff != "" {
		t.Errorf("after one call: -want, +got:\n%s", diff)
	}

	// A later call that tells fewer pools replaces the family; one that cannot tell it keeps it.
	pools["acme"] = []string{"kiso-acme"}
	call("acme", time.Hour)
	delete(pools, "acme")
	call("acme", time.Hour)
	want = `test_info nodepool=kiso-acme organization=acme 1
test_ready organization=acme 1
`
	if diff := cmp.Diff(want, gather(t, col)); diff != "" {
		t.Errorf("after a call that could not tell the pools: -want, +got:\n%s", diff)
	}
}

func TestAnXRsSeriesExpireAfterTwiceItsTTLAndFiveMinutes(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	families := []monitoring.Family{testReady, testInfo}
	col := newCollector(families, clk.now)
	col.record("uid-settled", Samples{testReady.Name: {{Labels: []string{"settled"}, Value: 1}}}, time.Hour)
	col.record("uid-settling", Samples{testReady.Name: {{Labels: []string{"settling"}, Value: 0}}}, time.Minute)
	// No TTL is Crossplane's default, a minute.
	col.record("uid-default", Samples{testReady.Name: {{Labels: []string{"default"}, Value: 0}}}, 0)

	cases := []struct {
		after time.Duration
		want  string
	}{
		{after: 7 * time.Minute, want: "test_ready organization=default 0\ntest_ready organization=settled 1\ntest_ready organization=settling 0\n"},
		{after: 7*time.Minute + time.Second, want: "test_ready organization=settled 1\n"},
		{after: 2*time.Hour + 5*time.Minute, want: "test_ready organization=settled 1\n"},
		{after: 2*time.Hour + 5*time.Minute + time.Second, want: ""},
	}
	for _, tc := range cases {
		clk.t = start.Add(tc.after)
		if diff := cmp.Diff(tc.want, gather(t, col)); diff != "" {
			t.Errorf("%s after the last calls: -want, +got:\n%s", tc.after, diff)
		}
	}
}

func TestTwoXRsTellingOneSeriesExportItOnce(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	col := newCollector([]monitoring.Family{testReady, testInfo}, clk.now)
	// Two claims of one organization; a series of the wrong shape is dropped, not sent to fail the scrape.
	col.record("uid-a", Samples{testInfo.Name: {{Labels: []string{"acme", "kiso-acme"}, Value: 1}}}, time.Hour)
	col.record("uid-b", Samples{testInfo.Name: {{Labels: []string{"acme", "kiso-acme"}, Value: 1}, {Labels: []string{"acme"}, Value: 1}}}, time.Hour)
	col.record("uid-c", Samples{"unknown_family": {{Labels: []string{"x"}, Value: 1}}}, time.Hour)
	want := "test_info nodepool=kiso-acme organization=acme 1\n"
	if diff := cmp.Diff(want, gather(t, col)); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}

func TestAPanickingReportKeepsTheLastSeries(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	families := []monitoring.Family{testReady}
	col := newCollector(families, clk.now)
	panics := false
	report := func(c Call) Samples {
		if panics {
			panic("a report that cannot read the XR")
		}
		s := Samples{}
		s.Add(testReady, 1, c.XRName())
		return s
	}
	req, rsp := callFor(t, "acme", time.Hour)
	r := reporting{FunctionRunnerServiceServer: fixedRunner{rsp: rsp}, metrics: Metrics{Families: families, Report: report}, collector: col, log: logging.NewNopLogger()}
	if _, err := r.RunFunction(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	panics = true
	got, err := r.RunFunction(context.Background(), req)
	if err != nil || got != rsp {
		t.Fatalf("RunFunction(...) = %v, %v; want the function's response whatever the metrics do", got, err)
	}
	if diff := cmp.Diff("test_ready organization=acme 1\n", gather(t, col)); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}

func TestACallTellsTheXRsReadinessAndConditions(t *testing.T) {
	xr := func(conditions ...map[string]any) *fnv1.RunFunctionRequest {
		cs := make([]any, len(conditions))
		for i, c := range conditions {
			cs[i] = c
		}
		s, err := structpb.NewStruct(map[string]any{"metadata": map[string]any{"name": "acme"}, "status": map[string]any{"conditions": cs, "warnedPods": 3}})
		if err != nil {
			t.Fatal(err)
		}
		return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: s}}}
	}
	ready := map[string]any{"type": "Ready", "status": "True", "reason": "Available"}
	notReady := map[string]any{"type": "Ready", "status": "False", "reason": "Creating"}
	stale := map[string]any{"type": "PlacementEnforced", "status": "False", "reason": "ClusterNotFound"}
	desired, err := structpb.NewStruct(map[string]any{"status": map[string]any{"warnedPods": 0}})
	if err != nil {
		t.Fatal(err)
	}
	fresh := &fnv1.Condition{Type: "PlacementEnforced", Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: "Enforced", Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}
	fatal := &fnv1.Result{Severity: fnv1.Severity_SEVERITY_FATAL, Message: "invalid"}

	cases := map[string]struct {
		req        *fnv1.RunFunctionRequest
		rsp        *fnv1.RunFunctionResponse
		ready      bool
		conditions []Condition
		warned     float64
	}{
		"ReadyAsCrossplaneWroteIt": {
			req:        xr(ready, stale),
			rsp:        &fnv1.RunFunctionResponse{Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: desired}}, Conditions: []*fnv1.Condition{fresh}},
			ready:      true,
			conditions: []Condition{{"PlacementEnforced", "True", "Enforced"}, {"Ready", "True", "Available"}},
			warned:     0,
		},
		"NotReady": {
			req:        xr(notReady),
			rsp:        &fnv1.RunFunctionResponse{Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: desired}}},
			conditions: []Condition{{"Ready", "False", "Creating"}},
		},
		"NoReadyConditionYet": {
			req: xr(),
			rsp: &fnv1.RunFunctionResponse{},
			// No desired status: the XR's own.
			warned: 3,
		},
		"AFatalResultIsNotReadyAndWritesNoStatus": {
			req:        xr(ready),
			rsp:        &fnv1.RunFunctionResponse{Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: desired}}, Results: []*fnv1.Result{fatal}},
			conditions: []Condition{{"Ready", "True", "Available"}},
			warned:     3,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Call{Req: tc.req, Rsp: tc.rsp}
			if got := c.Ready(); got != tc.ready {
				t.Errorf("Ready() = %t, want %t", got, tc.ready)
			}
			if diff := cmp.Diff(tc.conditions, c.Conditions(), cmpEmpty); diff != "" {
				t.Errorf("Conditions(): -want, +got:\n%s", diff)
			}
			if got := c.Status().GetFields()["warnedPods"].GetNumberValue(); got != tc.warned {
				t.Errorf("Status().warnedPods = %v, want %v", got, tc.warned)
			}
		})
	}
}

// cmpEmpty compares a nil slice equal to an empty one.
var cmpEmpty = cmp.FilterValues(func(a, b []Condition) bool { return len(a) == 0 && len(b) == 0 }, cmp.Comparer(func(_, _ []Condition) bool { return true }))
