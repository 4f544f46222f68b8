package main

import (
	"testing"
	"time"

	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

// Crossplane reconciles an XR when anything it composes or requires changes; the TTL only bounds how long a
// dropped event goes unnoticed. An organization that waits on nothing is left alone for an hour, one that
// waits on something is looked at again within a minute.
func TestAnOrganizationIsReconciledAgainSoonOnlyWhileItWaits(t *testing.T) {
	world := cluster{refNodeClass, refNodePool, namespace("acme-web"), namespace("acme-jobs")}
	cases := map[string]struct {
		spec     string
		observed map[string]string
		world    cluster
		// readyForSeconds: the XR turned Ready seconds ago; an hour ago otherwise.
		readyForSeconds bool
		want            time.Duration
	}{
		"EverythingComposedAndReady": {spec: orgSpec, observed: composedOrg(t, true), world: world, want: fncall.TTLSettled},
		// Crossplane may have stopped a watch the organization needs while it just turned Ready (fncall.RequeueAfter).
		"EverythingReadyForSeconds":      {spec: orgSpec, observed: composedOrg(t, true), world: world, readyForSeconds: true, want: fncall.TTLSettling},
		"PoolsNotReadyYet":               {spec: orgSpec, observed: composedOrg(t, false), world: world, want: fncall.TTLSettling},
		"NothingComposedYet":             {spec: orgSpec, world: world, want: fncall.TTLSettling},
		"PoolsBeingReplaced":             {spec: stackSwitch, observed: composedOrg(t, true), world: world, want: fncall.TTLSettling},
		"AReferenceIsMissing":            {spec: orgSpec, observed: composedOrg(t, true), world: cluster{refNodeClass, namespace("acme-web"), namespace("acme-jobs")}, want: fncall.TTLSettling},
		"ANamespaceTakenAwayIsStillHeld": {spec: orgSpec, observed: composedOrg(t, true), world: cluster{refNodeClass, refNodePool, namespace("acme-web")}, want: fncall.TTLSettling},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			changed := time.Hour
			if tc.readyForSeconds {
				changed = 10 * time.Second
			}
			rsp := run(t, newRequest(t, input, fntest.ReadySince(t, xr(tc.spec), changed), tc.observed), tc.world)
			fntest.AssertNoFatal(t, rsp)
			if got := rsp.GetMeta().GetTtl().AsDuration(); got != tc.want {
				t.Errorf("TTL %s, want %s", got, tc.want)
			}
		})
	}
}
