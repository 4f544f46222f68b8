package main

import (
	"github.com/kiso-dev/kiso/functions/internal/fncall"
)

// report says on the XR what the call found and composed: the spec valid, which platform namespaces do not
// exist, whether the alerts are in place, and how far Karpenter's install is.
func (r *request) report() {
	fncall.SpecValid(r.Rsp, r.To)
	r.namespaces.report(r.Rsp)
	r.alerts.report(r.Rsp)
	r.install.report(r.Rsp)
}
