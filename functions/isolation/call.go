package main

import (
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/remote"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// call is what one call of RunFunction knows: what it read (its input, its XR's spec, the observed and
// desired state) and what each phase derives from it, set by that phase and read by the phases after it.
type call struct {
	*fncall.Call[Input, v1alpha1.XKarpenterIsolationSpec]

	// Set by begin. keys are in the input's domain until require sets the one in use, domain
	// (chooseKeyDomain).
	keys   placement.Keys
	domain keyDomain
	claim  claimOf
	// namespaces are the spec's, in spec order (specNamespaces).
	namespaces []specNamespace

	// Set by require. view is the observed composed resources as the function reads them: an organization of
	// a workload cluster reads its objects as they are there (wl), through what the provider observed; the
	// Call's Observed stays what Crossplane observed. fetched is the organization's cluster as Crossplane last
	// returned it (fetchedCluster).
	fetched *boundCluster
	wl      *remote.Reader
	view    fnstate.Observed
	pools   []pool
	given   givenSet
	// served are those of namespaces the platform gives the organization: each holds its Role and ConfigMap.
	served  []specNamespace
	planned []ownership.Object
	// unlaunched are the composed NodeClasses no observed NodePool launches from, whose NodePools require asks
	// for by name and resolve reads (requireNodeClassUsers).
	unlaunched []string
	ours       ownership.Composed
	wc         warnCount
	at         site
	reads      map[resource.Name]*composed.Unstructured

	// Set by resolve.
	found lookup

	// Set by render: what each stack's pods carry, and the objects. taking is true while a new organization
	// is taken (takeOrganization), rr where its pools stand in their reference pair's rollout.
	stacks   []v1alpha1.StackStatus
	rendered map[resource.Name]*resource.DesiredComposed
	taking   bool
	rr       referenceRollouts

	// Set by settle.
	draining, ready map[string]bool
	tr              transition

	// Set by report.
	status v1alpha1.XKarpenterIsolationStatus
}

// begin reads what the call knows: its input, the observed and desired state (of the observed status only its
// conditions, and Warn mode's last count, lastCount: the status is rewritten whole on every call) and the spec.
func begin(req *fnv1.RunFunctionRequest, log logging.Logger) (*call, bool) {
	c, ok := fncall.Begin(req, log, fncall.Reader[Input, v1alpha1.XKarpenterIsolationSpec]{
		Input: getInput,
		Spec:  decodeSpec,
		To:    fncall.CompositeAndClaim,
		State: []fnstate.ReadOption{fnstate.StatusConditionsOnly()},
	})
	r := &call{Call: c}
	if !ok {
		return r, false
	}
	r.keys = placement.NewKeys(r.In.KeyDomain)
	r.claim = claimOfXR(r.ObservedXR)
	r.namespaces = specNamespaces(r.Spec)
	return r, true
}

// respond hands Crossplane what the call composed, as the workload cluster needs it, with the reads of the
// workload cluster, and the XR's status.
func (r *call) respond() (*fnv1.RunFunctionResponse, error) {
	r.wl.WrapDesired(r.rendered, r.Observed)
	// A retired object a Usage of an earlier release still names goes once Crossplane can delete it, and those
	// Usages go, each released first.
	inUse := usage.KeepInUse(r.rendered, r.Observed, ownAnnotations(r.keys))
	releaseUsages(r.Rsp, r.ObservedXR, r.rendered, r.Observed)
	// A read is no deliverable: the organization is ready by what it composes.
	for name, o := range r.reads {
		r.rendered[name] = &resource.DesiredComposed{Resource: o, Ready: resource.ReadyTrue}
	}
	for name, dc := range r.rendered {
		r.Desired[name] = dc
	}
	r.Log.Debug("rendered", "pools", len(r.pools), "waiting", r.found.Waiting, "missing", len(r.found.Missing), "keptInUse", len(inUse))
	return r.Respond(r.status)
}
