package main

import (
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

// resolve reads Crossplane's answers to what require asked for, concern by concern, before anything is rendered:
// a workload cluster's first (the provider's observations there become the answers).
func (r *call) resolve() bool {
	if r.workload != nil {
		answered, err := r.workload.Answer(r.Req, r.Observed.ReadAll())
		if err != nil {
			return r.Fatal(err)
		}
		r.Observed = fnstate.ObservedOf(answered)
	}
	err := eachChecked(r, func(c resolver) { c.resolve(&r.state) }, func(c checkedResolver) error { return c.resolve(&r.state) })
	if err != nil {
		return r.Fatal(err)
	}
	return true
}
