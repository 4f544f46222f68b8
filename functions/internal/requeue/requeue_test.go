package requeue

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
	withResponsive := func(status string, since time.Duration) *resource.Composite {
		xr := composite.New()
		if status != "" {
			xr.Object["status"] = map[string]any{"conditions": []any{map[string]any{
				"type": "Responsive", "status": status, "reason": "WatchCircuit",
				"lastTransitionTime": now.Add(-since).Format(time.RFC3339),
			}}}
		}
		return &resource.Composite{Resource: xr}
	}
	cases := map[string]struct {
		xr      *resource.Composite
		settled bool
		want    time.Duration
	}{
		"ASettledXRIsReconciledHourly":                           {xr: withResponsive("", 0), settled: true, want: time.Hour},
		"ASettledXRWhoseEventsCrossplaneTakesIsReconciledHourly": {xr: withResponsive("True", time.Minute), settled: true, want: time.Hour},
		"ASettledXRWhoseEventsCrossplaneDropsWaits25Seconds":     {xr: withResponsive("False", time.Minute), settled: true, want: 25 * time.Second},
		"AnXRThatWaitsIsReconciledEveryMinute":                   {xr: withResponsive("", 0), settled: false, want: time.Minute},
		"AnXRThatWaitsWhileCrossplaneDropsItsEventsToo":          {xr: withResponsive("False", 5*time.Minute), settled: false, want: 25 * time.Second},
		// Past the breaker's five minutes (and one half-open interval) the next event closes it and passes:
		// a quiet XR whose condition still says False is not called every 25 s for ever.
		"ASettledXRPastTheBreakersWindowIsReconciledHourly": {xr: withResponsive("False", 5*time.Minute+31*time.Second), settled: true, want: time.Hour},
		"AnXRThatWaitsPastTheBreakersWindowWaitsAMinute":    {xr: withResponsive("False", time.Hour), settled: false, want: time.Minute},
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
