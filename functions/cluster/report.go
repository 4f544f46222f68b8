package main

import (
	"github.com/kiso-dev/kiso/functions/internal/fncall"
)

// report says on the XR what the call found and composed: the spec valid, which platform namespaces do not
// exist, whether the alerts are in place, how far Karpenter's install is, and how soon Crossplane calls again.
func (r *call) report() {
	fncall.SpecValid(r.Rsp, r.To)
	r.namespaces.report(r)
	r.alerts.report(r)
	r.placement.report(r)
	r.install.report(r)
	r.domain.report(r.Rsp)
	// How soon Crossplane calls again: an hour once nothing waits, a soaking wave's end if sooner, and the next
	// read of a rollout's collections in a workload cluster if sooner still.
	r.Settled(r.notReady == 0 && len(r.inUse) == 0 && !r.verdict.Waiting && !r.rollouts.inProgress())
	r.rollouts.report(r)
}
