// Package fnstate reads what every kiso function reads from a request: the
// observed and desired composite resource and composed resources.
package fnstate

import (
	"encoding/json"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
)

// State is a request's observed and desired state.
type State struct {
	ObservedXR *resource.Composite
	DesiredXR  *resource.Composite
	Observed   map[resource.Name]resource.ObservedComposed
	// Desired holds what earlier pipeline steps composed; a function adds
	// its own resources to it.
	Desired map[resource.Name]*resource.DesiredComposed
}

// Read decodes the request's state.
func Read(req *fnv1.RunFunctionRequest) (State, error) {
	s := State{}
	var err error
	if s.ObservedXR, err = request.GetObservedCompositeResource(req); err != nil {
		return s, errors.Wrap(err, "cannot get observed composite resource")
	}
	if s.DesiredXR, err = request.GetDesiredCompositeResource(req); err != nil {
		return s, errors.Wrap(err, "cannot get desired composite resource")
	}
	if s.Observed, err = request.GetObservedComposedResources(req); err != nil {
		return s, errors.Wrap(err, "cannot get observed composed resources")
	}
	if s.Desired, err = request.GetDesiredComposedResources(req); err != nil {
		return s, errors.Wrap(err, "cannot get desired composed resources")
	}
	return s, nil
}

// DecodeInput decodes the function's input from the Composition into a
// plain Go value; an absent input leaves into unchanged.
func DecodeInput(req *fnv1.RunFunctionRequest, into any) error {
	if req.GetInput() == nil {
		return nil
	}
	raw, err := protojson.Marshal(req.GetInput())
	if err != nil {
		return errors.Wrap(err, "cannot encode function input")
	}
	return errors.Wrap(json.Unmarshal(raw, into), "cannot decode function input")
}
