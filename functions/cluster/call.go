package main

import (
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// call is one RunFunction call: the state every concern shares, and the concerns, each holding what it derives.
type call struct {
	state
	concerns
}

// begin reads what the call knows: its input, the observed and desired state, and the XR's spec. It returns
// false, with a Fatal result, when any cannot be read.
func begin(req *fnv1.RunFunctionRequest, log logging.Logger) (*call, bool) {
	c, ok := fncall.Begin(req, log, fncall.Reader[Input, v1alpha1.XKarpenterClusterSpec]{
		Input: getInput, Spec: decodeSpec, To: fncall.Composite,
	})
	r := &call{state: state{Call: c}}
	if !ok {
		return r, false
	}
	r.domain = chooseKeyDomain(r.In.KeyDomain, r.Observed)
	r.keys = placement.NewKeys(r.domain.Domain)
	r.workload = workloadReader(r.Spec, r.name())
	if err := fnstate.Decode(r.ObservedXR.Resource.Object, "status", &r.previous); err != nil {
		return r, r.Fatal(errors.Wrap(err, "cannot read the XR's status"))
	}
	return r, true
}

// each visits the concerns that take part in phase P, in the list's order.
func each[P any](r *call, visit func(P)) { fncall.Each(r.list(), visit) }

// eachUntil visits, until one fails, the concerns that take part in phase P.
func eachUntil[P any](r *call, visit func(P) error) error { return fncall.EachUntil(r.list(), visit) }

// eachChecked visits, in the list's order and until one fails, the concerns of a phase some take part in
// unchecked (U) and others checked (C).
func eachChecked[U, C any](r *call, unchecked func(U), checked func(C) error) error {
	return fncall.EachUntil(r.list(), func(c any) error {
		// A concern has one method of a phase's name, so it is at most one of the two.
		if p, ok := c.(C); ok {
			return checked(p)
		}
		if p, ok := c.(U); ok {
			unchecked(p)
		}
		return nil
	})
}
