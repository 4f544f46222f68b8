package main

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// state is what every concern of a call reads and writes: what the call read (fncall.Call) and derives from it
// for all (the keys, the plans), and what the phases build together (the requirements, the XR's status, the
// objects). A concern's phase methods take it, never the call, so a concern knows no other concern.
type state struct {
	*fncall.Call[Input, v1alpha1.XKarpenterClusterSpec]

	// Set by begin: the keys are in the domain the cluster's policies were composed with (chooseKeyDomain).
	keys placement.Keys
	// previous is the XR's status as the cluster last wrote it: what a rollout and the published references
	// carry over while Crossplane has not answered.
	previous v1alpha1.XKarpenterClusterStatus
	// workload reads the workload cluster for the cluster's own requirements; nil when Karpenter runs beside
	// Crossplane.
	workload *remote.Reader

	// Set as require begins, from the spec, the input and the keys: the names of everything the cluster
	// composes in AWS (plan) and what the admission policies need (placement).
	plan      plan
	placement placementPlan

	// required and schemas are what the call asks Crossplane for: require writes them, resolve adds what the
	// answers name, and settle the names the objects hold.
	required map[string]*fnv1.ResourceSelector
	schemas  map[string]*fnv1.SchemaSelector
	// status and objects are what render writes: the XR's status and the objects the cluster composes.
	status  v1alpha1.XKarpenterClusterStatus
	objects map[resource.Name]*composed.Unstructured
}

// name is the XR's name.
func (s *state) name() string { return s.ObservedXR.Resource.GetName() }
