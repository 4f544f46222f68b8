package main

import (
	"encoding/json"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Input is this function's input in a Composition. It has no settings yet:
// everything about a cluster is on its XKarpenterCluster.
//
//	apiVersion: cluster.fn.kiso.dev/v1alpha1
//	kind: Input
type Input struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// getInput decodes the function's input, which may be absent.
func getInput(req *fnv1.RunFunctionRequest) (Input, error) {
	in := Input{}
	if req.GetInput() == nil {
		return in, nil
	}
	raw, err := protojson.Marshal(req.GetInput())
	if err != nil {
		return in, errors.Wrap(err, "cannot encode function input")
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, errors.Wrap(err, "cannot decode function input")
	}
	return in, nil
}
