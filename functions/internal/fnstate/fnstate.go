// Package fnstate reads what every kiso function reads from a request (the
// observed and desired composite resource and composed resources, the XR's
// fields, what Crossplane fetched) and writes what it returns, sharing every
// unchanged part with the request.
package fnstate

import (
	"maps"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"
)

// State is a request's observed and desired state.
type State struct {
	ObservedXR *resource.Composite
	DesiredXR  *resource.Composite
	Observed   Observed
	// Desired holds what earlier pipeline steps composed; a function adds
	// its own resources to it.
	Desired map[resource.Name]*resource.DesiredComposed
}

// A ReadOption narrows what Read reads.
type ReadOption func(*readOptions)

type readOptions struct {
	statusConditionsOnly bool
}

// StatusConditionsOnly reads of the observed XR's status its conditions alone, for a function that rewrites
// the rest of its status whole on every call and never reads it back: an organization of a thousand stacks has
// a status of a thousand stacks.
func StatusConditionsOnly() ReadOption {
	return func(o *readOptions) { o.statusConditionsOnly = true }
}

// Read decodes the request's state.
func Read(req *fnv1.RunFunctionRequest, opts ...ReadOption) (State, error) {
	var o readOptions
	for _, opt := range opts {
		opt(&o)
	}
	s := State{}
	var err error
	xr := req.GetObserved().GetComposite()
	if o.statusConditionsOnly {
		xr = &fnv1.Resource{Resource: withStatusConditionsOnly(xr.GetResource()), ConnectionDetails: xr.GetConnectionDetails()}
	}
	s.ObservedXR = observedComposite(xr)
	if s.DesiredXR, err = request.GetDesiredCompositeResource(req); err != nil {
		return s, errors.Wrap(err, "cannot get desired composite resource")
	}
	s.Observed = observedIn(req)
	if s.Desired, err = request.GetDesiredComposedResources(req); err != nil {
		return s, errors.Wrap(err, "cannot get desired composed resources")
	}
	return s, nil
}

// observedComposite is the observed XR as the SDK's request.GetObservedCompositeResource reads it, less its
// managed fields: Crossplane writes an XR's status with server-side apply, so its managed fields mirror the
// whole status, a tree as large as an organization of a thousand stacks' status itself, which no kiso function
// reads.
func observedComposite(observed *fnv1.Resource) *resource.Composite {
	xr := &resource.Composite{Resource: composite.New(), ConnectionDetails: observed.GetConnectionDetails()}
	if xr.ConnectionDetails == nil {
		xr.ConnectionDetails = make(resource.ConnectionDetails)
	}
	xr.Resource.SetUnstructuredContent(withoutManagedFields(observed.GetResource()))
	return xr
}

// withStatusConditionsOnly is s with a status that holds its conditions alone, if it has a status that is an
// object. It shares the rest of s.
func withStatusConditionsOnly(s *structpb.Struct) *structpb.Struct {
	status := s.GetFields()["status"].GetStructValue()
	if status == nil {
		return s
	}
	narrowed := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	if c, ok := status.GetFields()["conditions"]; ok {
		narrowed.Fields["conditions"] = c
	}
	out := &structpb.Struct{Fields: maps.Clone(s.GetFields())}
	out.Fields["status"] = structpb.NewStructValue(narrowed)
	return out
}

// GetInput reads the function's input with the SDK, strictly: a field into's type lacks is an error. The
// SDK's JSON library words one error two ways at random, on purpose; one wording keeps a Fatal result the
// same from run to run.
func GetInput(req *fnv1.RunFunctionRequest, into runtime.Object) error {
	if err := request.GetInput(req, into); err != nil {
		return errors.New(strings.Replace(err.Error(), "json: unable to ", "json: cannot ", 1))
	}
	return nil
}

// withoutManagedFields is s.AsMap() without metadata.managedFields. Crossplane sends every observed object
// whole, and an object's managed fields (every field each manager set, as a tree) are often as large as its
// spec; no kiso function reads them, and converting them was most of what reading an observed NodePool cost.
func withoutManagedFields(s *structpb.Struct) map[string]any {
	fields := s.GetFields()
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		if k != "metadata" || v.GetStructValue() == nil {
			out[k] = v.AsInterface()
			continue
		}
		meta := v.GetStructValue().GetFields()
		m := make(map[string]any, len(meta))
		for mk, mv := range meta {
			if mk != "managedFields" {
				m[mk] = mv.AsInterface()
			}
		}
		out[k] = m
	}
	return out
}
