package fncall

import (
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"
	"github.com/crossplane/function-sdk-go/response"
)

func TestAfter(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	type condition struct {
		kind, status string
		since        time.Duration
	}
	with := func(conditions ...condition) *resource.Composite {
		xr := composite.New()
		if len(conditions) > 0 {
			var cs []any
			for _, c := range conditions {
				cs = append(cs, map[string]any{
					"type": c.kind, "status": c.status, "reason": "Observed",
					"lastTransitionTime": now.Add(-c.since).Format(time.RFC3339),
				})
			}
			xr.Object["status"] = map[string]any{"conditions": cs}
		}
		return &resource.Composite{Resource: xr}
	}
	// readyLongAgo is an XR that has not changed for longer than Crossplane's watch garbage collector needs.
	readyLongAgo := condition{"Ready", "True", time.Hour}
	withResponsive := func(status string, since time.Duration) *resource.Composite {
		return with(readyLongAgo, condition{"Responsive", status, since})
	}
	cases := map[string]struct {
		xr      *resource.Composite
		settled bool
		want    time.Duration
	}{
		"ASettledXRIsReconciledHourly":                           {xr: with(readyLongAgo), settled: true, want: time.Hour},
		"ASettledXRWhoseEventsCrossplaneTakesIsReconciledHourly": {xr: withResponsive("True", 10*time.Minute), settled: true, want: time.Hour},
		"ASettledXRWhoseEventsCrossplaneDropsWaits25Seconds":     {xr: withResponsive("False", time.Minute), settled: true, want: 25 * time.Second},
		"AnXRThatWaitsIsReconciledEveryMinute":                   {xr: with(readyLongAgo), settled: false, want: time.Minute},
		"AnXRThatWaitsWhileCrossplaneDropsItsEventsToo":          {xr: withResponsive("False", 5*time.Minute), settled: false, want: 25 * time.Second},
		// Past the breaker's five minutes (and one half-open interval) the next event closes it and passes:
		// a quiet XR whose condition still says False is not called every 25 s for ever.
		"ASettledXRPastTheBreakersWindowIsReconciledHourly": {xr: withResponsive("False", 5*time.Minute+31*time.Second), settled: true, want: time.Hour},
		"AnXRThatWaitsPastTheBreakersWindowWaitsAMinute":    {xr: withResponsive("False", time.Hour), settled: false, want: time.Minute},
		// Crossplane may stop a watch a new XR needs, or one whose Ready changed, and restarts it only when it
		// reconciles the XR: such an XR is reconciled once more a minute later before the hour.
		"ANewXRIsReconciledAgainInAMinute":                   {xr: with(), settled: true, want: time.Minute},
		"AnXRReadyForSecondsIsReconciledAgainInAMinute":      {xr: with(condition{"Ready", "True", 10 * time.Second}), settled: true, want: time.Minute},
		"AnXRReadyForAMinuteIsReconciledHourly":              {xr: with(condition{"Ready", "True", 54 * time.Second}), settled: true, want: time.Hour},
		"AnXRWhoseOtherConditionsChangedJustNowWaitsTheHour": {xr: with(readyLongAgo, condition{"ReferencesResolved", "True", time.Second}), settled: true, want: time.Hour},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := response.To(&fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "t"}}, response.DefaultTTL)
			after(rsp, tc.xr, tc.settled, now)
			if got := rsp.GetMeta().GetTtl().AsDuration(); got != tc.want {
				t.Errorf("TTL %s, want %s", got, tc.want)
			}
			if rsp.GetMeta().GetTag() != "t" {
				t.Errorf("the response's tag was lost: %q", rsp.GetMeta().GetTag())
			}
		})
	}
}
