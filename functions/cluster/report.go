package main

import (
	"github.com/kiso-dev/kiso/functions/internal/fncall"
)

// report says on the XR what the call found and composed: the spec valid, then, concern by concern, which
// platform namespaces do not exist, whether the alerts are in place, what an auditing cluster would refuse, how
// far Karpenter's install is, which key domain the policies check, and how soon Crossplane calls again: an hour
// once nothing waits, a soaking wave's end if sooner, and the next read of a rollout's collections in a workload
// cluster if sooner still.
func (r *call) report() {
	fncall.SpecValid(r.Rsp, r.To)
	r.Settled(r.ownership.settled() && !r.rollouts.inProgress())
	each(r, func(c reporter) { c.report(&r.state) })
}
