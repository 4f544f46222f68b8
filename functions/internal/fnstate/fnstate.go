// Package fnstate reads what every kiso function reads from a request: the
// observed and desired composite resource and composed resources.
package fnstate

import (
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

// Read decodes the request's state.
func Read(req *fnv1.RunFunctionRequest) (State, error) {
	s := State{}
	var err error
	s.ObservedXR = observedComposite(req)
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
func observedComposite(req *fnv1.RunFunctionRequest) *resource.Composite {
	xr := &resource.Composite{Resource: composite.New(), ConnectionDetails: req.GetObserved().GetComposite().GetConnectionDetails()}
	if xr.ConnectionDetails == nil {
		xr.ConnectionDetails = make(resource.ConnectionDetails)
	}
	xr.Resource.SetUnstructuredContent(withoutManagedFields(req.GetObserved().GetComposite().GetResource()))
	return xr
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
