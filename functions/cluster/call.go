package main

import (
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// call is what one RunFunction call knows: what it read (fncall.Call), the concerns (each holds what it derives),
// and what every phase shares.
type call struct {
	*fncall.Call[Input, v1alpha1.XKarpenterClusterSpec]

	// Set by begin: the keys are in the domain the cluster's policies were composed with (chooseKeyDomain).
	keys   placement.Keys
	domain keyDomain
	// previous is the XR's status as the cluster last wrote it: what a rollout and the published references
	// carry over while Crossplane has not answered.
	previous v1alpha1.XKarpenterClusterStatus
	// workload reads the workload cluster for the cluster's own requirements; nil when Karpenter runs beside
	// Crossplane.
	workload *remote.Reader

	concerns

	// required is what the call asks Crossplane for: require writes it, resolve adds what the answers name, and
	// settle the names the objects hold.
	required map[string]*fnv1.ResourceSelector
	// status and objects are what render writes: the XR's status and the objects the cluster composes.
	status  v1alpha1.XKarpenterClusterStatus
	objects map[resource.Name]*composed.Unstructured
}

// begin reads what the call knows: its input, the observed and desired state, and the XR's spec. It returns
// false, with a Fatal result, when any cannot be read.
func begin(req *fnv1.RunFunctionRequest, log logging.Logger) (*call, bool) {
	c, ok := fncall.Begin(req, log, fncall.Reader[Input, v1alpha1.XKarpenterClusterSpec]{
		Input: getInput, Spec: decodeSpec, To: fncall.Composite,
	})
	r := &call{Call: c}
	if !ok {
		return r, false
	}
	r.domain = chooseKeyDomain(r.In.KeyDomain, r.Observed)
	r.keys = placement.NewKeys(r.domain.Domain)
	r.workload = workloadReader(r.Spec, r.name())
	r.placement.plan = newPlacementPlan(r.name(), r.Spec, r.In, r.keys)
	if err := fnstate.Decode(r.ObservedXR.Resource.Object, "status", &r.previous); err != nil {
		return r, r.Fatal(errors.Wrap(err, "cannot read the XR's status"))
	}
	return r, true
}

// name is the XR's name.
func (r *call) name() string { return r.ObservedXR.Resource.GetName() }
