// Package fncall is the skeleton every kiso function's RunFunction shares: one value per call that holds what
// the call read (its input, its XR's spec, the observed and desired state), the head that reads it and stops on
// what no function can render past, and the tail that hands Crossplane back what was composed and the XR's
// status. A function embeds a Call in its own per-call value and adds what it derives; its RunFunction then reads
// as the phases between the head and the tail:
//
//	begin, validate, require, resolve, validate what was found, render, settle, report, respond
//
// What a call tells Crossplane besides its composed resources lives here too: the conditions both functions
// set (conditions.go), the API server's refusals turned into a condition on the claim (refusal.go), and how
// soon Crossplane calls again (requeue.go).
package fncall

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

// Call is what one RunFunction call of a function with input In and XR spec Spec knows once it has begun.
type Call[In, Spec any] struct {
	Req *fnv1.RunFunctionRequest
	Rsp *fnv1.RunFunctionResponse
	// In is the function's input, defaulted and valid.
	In In
	// Spec is the XR's spec, defaulted; Validate says whether it is valid.
	Spec Spec
	fnstate.State
	// To is where the call's conditions go: the XR, or the XR and its claim.
	To  Target
	Log logging.Logger
	// Now is the call's one reading of the clock, so every phase judges time alike.
	Now time.Time
}

// Reader is how a function reads its input and its XR's spec, where its conditions go and how much of the
// observed state it reads.
type Reader[In, Spec any] struct {
	Input func(*fnv1.RunFunctionRequest) (In, error)
	Spec  func(*resource.Composite) (Spec, error)
	To    Target
	State []fnstate.ReadOption
}

// Begin reads what a call knows. It returns false, with a Fatal result in the call's response, when the input,
// the state or the spec cannot be read at all.
func Begin[In, Spec any](req *fnv1.RunFunctionRequest, log logging.Logger, r Reader[In, Spec]) (*Call[In, Spec], bool) {
	c := &Call[In, Spec]{Req: req, Rsp: response.To(req, TTLSettling), To: r.To, Log: log, Now: time.Now()}
	var err error
	if c.In, err = r.Input(req); err != nil {
		return c, c.Fatal(errors.Wrap(err, "invalid function input"))
	}
	if c.State, err = fnstate.Read(req, r.State...); err != nil {
		return c, c.Fatal(err)
	}
	c.Log = log.WithValues("xr", c.ObservedXR.Resource.GetName())
	if c.Spec, err = r.Spec(c.ObservedXR); err != nil {
		return c, c.Fatal(err)
	}
	return c, true
}

// Fatal stops the call: Crossplane applies and deletes nothing for a response with a Fatal result, so whatever
// the XR composed stays as it is. It returns false, for a phase to return.
func (c *Call[In, Spec]) Fatal(err error) bool {
	response.Fatal(c.Rsp, err)
	return false
}

// Valid reports spec errors, each naming its field, as a False SpecValid condition and a Fatal result, and
// returns whether there were none.
func (c *Call[In, Spec]) Valid(errs field.ErrorList) bool {
	if len(errs) > 0 {
		InvalidSpec(c.Rsp, errs, c.To)
		return false
	}
	return true
}

// Refused says on the claim, and returns true, while the API server refuses Crossplane something this XR needs:
// Crossplane alone would only tell the XR.
func (c *Call[In, Spec]) Refused() bool {
	return ApplyRefusal(c.Rsp, c.ObservedXR, c.Now)
}

// Conflicts reports names something else holds, and returns whether there were any.
func (c *Call[In, Spec]) Conflicts(messages []string) bool {
	if len(messages) > 0 {
		NameConflicts(c.Rsp, messages, c.To)
		return true
	}
	return false
}

// Respond hands Crossplane the call's desired composed resources, and the XR with its status, and returns the
// response. Its error is always nil: a failure is a Fatal result.
func (c *Call[In, Spec]) Respond(status any) (*fnv1.RunFunctionResponse, error) {
	if err := fnstate.SetDesiredComposed(c.Rsp, c.Req, c.Desired); err != nil {
		c.Fatal(errors.Wrap(err, "cannot set desired composed resources"))
		return c.Rsp, nil
	}
	if err := fnstate.SetStatus(c.DesiredXR, status); err != nil {
		c.Fatal(err)
		return c.Rsp, nil
	}
	if err := fnstate.SetDesiredComposite(c.Rsp, c.Req, c.DesiredXR); err != nil {
		c.Fatal(errors.Wrap(err, "cannot set desired composite resource"))
	}
	return c.Rsp, nil
}

// Settled sets how soon Crossplane calls again when nothing changes (see RequeueAfter).
func (c *Call[In, Spec]) Settled(settled bool) {
	RequeueAfter(c.Rsp, c.ObservedXR, settled)
}
