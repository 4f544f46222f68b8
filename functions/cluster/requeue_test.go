package main

import (
	"testing"
	"time"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// A cluster whose every object is observed Ready is left alone for an hour (Crossplane reconciles it when any
// of them changes); one that waits on an object is looked at again within a minute.
func TestAClusterIsReconciledAgainSoonOnlyWhileItWaits(t *testing.T) {
	observed := func(notReady ...string) map[string]string {
		out := map[string]string{}
		for name, o := range fntest.Desired(t, run(t, newRequest(t, xr(podIdentitySpec), nil))) {
			status := "True"
			for _, n := range notReady {
				if n == name {
					status = "False"
				}
			}
			o["status"] = map[string]any{"conditions": []any{
				map[string]any{"type": "Ready", "status": status},
				map[string]any{"type": "Synced", "status": "True"},
			}}
			out[name] = fntest.ToJSON(t, o)
		}
		return out
	}
	cases := map[string]struct {
		observed map[string]string
		// readyForSeconds: the XR turned Ready seconds ago; an hour ago otherwise.
		readyForSeconds bool
		want            time.Duration
	}{
		"EveryObjectReady": {observed: observed(), want: fncall.TTLSettled},
		// Crossplane may have stopped a watch the cluster needs while it just turned Ready (fncall.RequeueAfter).
		"EveryObjectReadyForSeconds": {observed: observed(), readyForSeconds: true, want: fncall.TTLSettling},
		"TheQueueIsNotReadyYet":      {observed: observed("queue"), want: fncall.TTLSettling},
		"NothingComposedYet":         {want: fncall.TTLSettling},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			changed := time.Hour
			if tc.readyForSeconds {
				changed = 10 * time.Second
			}
			rsp := run(t, newRequest(t, fntest.ReadySince(t, xr(podIdentitySpec), changed), tc.observed))
			fntest.AssertNoFatal(t, rsp)
			if got := rsp.GetMeta().GetTtl().AsDuration(); got != tc.want {
				t.Errorf("TTL %s, want %s", got, tc.want)
			}
		})
	}
}
