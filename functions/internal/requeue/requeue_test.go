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
	withResponsive := func(status string) *resource.Composite {
		xr := composite.New()
		if status != "" {
			xr.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Responsive", "status": status, "reason": "WatchCircuit"}}}
		}
		return &resource.Composite{Resource: xr}
	}
	cases := map[string]struct {
		xr      *resource.Composite
		settled bool
		want    time.Duration
	}{
		"ASettledXRIsReconciledHourly":                           {xr: withResponsive(""), settled: true, want: time.Hour},
		"ASettledXRWhoseEventsCrossplaneTakesIsReconciledHourly": {xr: withResponsive("True"), settled: true, want: time.Hour},
		"ASettledXRWhoseEventsCrossplaneDropsWaits25Seconds":     {xr: withResponsive("False"), settled: true, want: 25 * time.Second},
		"AnXRThatWaitsIsReconciledEveryMinute":                   {xr: withResponsive(""), settled: false, want: time.Minute},
		"AnXRThatWaitsWhileCrossplaneDropsItsEventsToo":          {xr: withResponsive("False"), settled: false, want: 25 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := response.To(&fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "t"}}, response.DefaultTTL)
			After(rsp, tc.xr, tc.settled)
			if got := rsp.GetMeta().GetTtl().AsDuration(); got != tc.want {
				t.Errorf("TTL %s, want %s", got, tc.want)
			}
			if rsp.GetMeta().GetTag() != "t" {
				t.Errorf("the response's tag was lost: %q", rsp.GetMeta().GetTag())
			}
		})
	}
}
