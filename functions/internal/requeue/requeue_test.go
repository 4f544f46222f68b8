package requeue

import (
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
)

func TestAfter(t *testing.T) {
	cases := map[string]struct {
		settled bool
		want    time.Duration
	}{
		"ASettledXRIsReconciledHourly":         {settled: true, want: time.Hour},
		"AnXRThatWaitsIsReconciledEveryMinute": {settled: false, want: time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := response.To(&fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "t"}}, response.DefaultTTL)
			After(rsp, tc.settled)
			if got := rsp.GetMeta().GetTtl().AsDuration(); got != tc.want {
				t.Errorf("TTL %s, want %s", got, tc.want)
			}
			if rsp.GetMeta().GetTag() != "t" {
				t.Errorf("the response's tag was lost: %q", rsp.GetMeta().GetTag())
			}
		})
	}
}
