package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/nodeidentity"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/ready"
	"github.com/kiso-dev/kiso/functions/internal/remote"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// Function renders an organization's dedicated Karpenter pools.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction renders one XKarpenterIsolation. It never returns an error:
// failures are Fatal results and conditions on the XR and its claim, and on
// any path where it cannot render it keeps what it composed before.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, fncall.TTLSettling)

	in, err := getInput(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "invalid function input"))
		return rsp, nil
	}
	keys := placement.NewKeys(in.KeyDomain)

	// The status is rewritten whole on every call; of the observed one only its conditions are read (and Warn
	// mode's last count, lastCount).
	st, err := fnstate.Read(req, fnstate.StatusConditionsOnly())
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	oxr, dxr, observed, desired := st.ObservedXR, st.DesiredXR, st.Observed, st.Desired
	log := f.log.WithValues("xr", oxr.Resource.GetName())

	claim := claimOfXR(oxr)
	spec, err := decodeSpec(oxr)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if errs := validateSpec(spec, keys); len(errs) > 0 {
		fncall.InvalidSpec(rsp, errs, fncall.CompositeAndClaim)
		return rsp, nil
	}
	// While the API server refuses Crossplane what this XR needs, stop and
	// say so on the claim: Crossplane alone would only tell the XR.
	if fncall.ApplyRefusal(rsp, oxr, time.Now()) {
		return rsp, nil
	}

	// An organization of a workload cluster reads what the provider observed there as Crossplane's answers, and
	// its composed objects as they are there.
	observedObjects := observed
	wl, observed, err := workloadView(req, spec, in, claim, observed)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}

	pools := planPools(spec, keys)
	given := givenNamespaces(req, keys)
	planned := planObjects(spec, pools, in, given.Namespaces)
	ours := ownership.IndexObserved(observed)
	now := time.Now()
	wc := lastWarnCount(lastCount(req.GetObserved().GetComposite().GetResource()), spec, now)
	at := siteOf(wl, claim)
	at.PodsPaused = wc.Paused
	rsp.Requirements = requirements(spec, planned, ours, given, at, keys)
	reads := wl.Requirements(rsp.GetRequirements().GetResources())

	found, err := resolve(req, spec, planned, ours, given, oxr.Resource.GetUID(), at, keys)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if len(found.Conflicts) > 0 {
		fncall.NameConflicts(rsp, found.Conflicts, fncall.CompositeAndClaim)
		return rsp, nil
	}
	reportHeld(rsp, found.Held)

	draining := drainingPools(pools, observed)
	poolReady := readyPools(pools, observed, draining)
	status := buildStatus(spec, pools, poolReady, keys)
	reportUsage(&status, spec, observed, pools)

	var rendered map[resource.Name]*resource.DesiredComposed
	switch {
	case found.Unresolved():
		rendered = keepObserved(observed.ReadAll(), keys)
		unresolved(rsp, dxr, found, wl, observed.Len())
	default:
		if errs := validateFound(spec, pools, found, observed, in, claim, keys); len(errs) > 0 {
			fncall.InvalidSpec(rsp, errs, fncall.CompositeAndClaim)
			return rsp, nil
		}
		if composesNothing(observed) {
			rendered = takeOrganization(rsp, spec, in, claim, keys)
			fncall.RequeueAfter(rsp, oxr, false)
			break
		}
		rr, err := poolSources(spec, found, pools, observed, keys)
		if err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
		rendered, err = renderOrganization(spec, in, claim, pools, status.Stacks, found, rr, observed, keys)
		if err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
		response.ConditionTrue(rsp, TypeReferencesResolved, ReasonResolved).TargetCompositeAndClaim()
		reportRevisions(rsp, &status, rr)

		tr := settle(rendered, observed, pools, draining, poolReady, found.Namespaces, keys)
		reportTransition(rsp, tr)
		reportNamespaces(rsp, spec, found, keys)
		reportUnlistedNamespaces(rsp, spec, given, keys)
		reportPlacement(rsp, spec, found.Placement, observed, found.Namespaces, warnedMessage(found, wc, now), keys)
		countWarned(&status, spec, found, wc, now)
		fncall.RequeueAfter(rsp, oxr, tr.Idle() && allObserved(rendered, observed))
		requeueForCount(rsp, spec, found, wc, now)
	}
	fncall.SpecValid(rsp, fncall.CompositeAndClaim)

	wl.WrapDesired(rendered, observedObjects)
	// A retired object a Usage of an earlier release still names goes once Crossplane can delete it, and those
	// Usages go, each released first.
	inUse := usage.KeepInUse(rendered, observedObjects, ownAnnotations(keys))
	releaseUsages(rsp, oxr, rendered, observedObjects)
	// A read is no deliverable: the organization is ready by what it composes.
	for name, r := range reads {
		rendered[name] = &resource.DesiredComposed{Resource: r, Ready: resource.ReadyTrue}
	}
	for name, dc := range rendered {
		desired[name] = dc
	}
	if err := fnstate.SetDesiredComposed(rsp, req, desired); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set desired composed resources"))
		return rsp, nil
	}

	if err := fnstate.SetStatus(dxr, status); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if err := fnstate.SetDesiredComposite(rsp, req, dxr); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set desired composite resource"))
		return rsp, nil
	}
	log.Debug("rendered", "pools", len(pools), "waiting", found.Waiting, "missing", len(found.Missing), "keptInUse", len(inUse))
	return rsp, nil
}

// renderOrganization renders every object of the organization: the
// ConfigMap by which it holds the organization, its dedicated node identity
// if it has one, each pool's NodeClass and NodePool, and the placement Role and ConfigMap of each namespace the
// platform gives it.
func renderOrganization(spec v1alpha1.XKarpenterIsolationSpec, in Input, claim claimOf, pools []pool, stacks []v1alpha1.StackStatus, found lookup, rr referenceRollouts, observed fnstate.Observed, keys placement.Keys) (map[resource.Name]*resource.DesiredComposed, error) {
	objects := make(map[resource.Name]*composed.Unstructured, 4*len(pools)+12)
	objects[organizationLockResource] = renderOrganizationLock(spec, in, claim, keys)
	var identity *nodeidentity.Identity
	if c := found.Cluster; c != nil {
		if spec.NodeRole == v1alpha1.NodeRoleDedicated {
			id := dedicatedIdentity(spec, c, organizationTags(spec, c, keys), keys)
			identity = &id
			ios, err := identityObjects(id, keys)
			if err != nil {
				return nil, err
			}
			for name, o := range ios {
				objects[name] = o
			}
		}
	}

	limit := newOrganizationLimit(spec, observed)
	for _, p := range pools {
		gvk := nodeClassGVK(p.Class.NodeClassRef)
		src := rr.Sources[p.Name]
		if src.Keep {
			for name, dc := range keepObserved(observedPool(observed, p), keys) {
				objects[name] = dc.Resource
			}
		} else {
			nc, err := renderNodeClass(src.NodeClass, p, gvk, keys, found.Cluster.inheritedTags(), identity)
			if err != nil {
				return nil, err
			}
			np, err := renderNodePool(src.NodePool, p, gvk, keys)
			if err != nil {
				return nil, err
			}
			limit.limit(np, p)
			annotate(nc, spec, src, keys)
			annotate(np, spec, src, keys)
			if err := markNodeClass(np, observedNodePool(observed.Get(nodePoolResourceName(p))), nc, keys); err != nil {
				return nil, err
			}
			objects[nodeClassResourceName(p)] = &composed.Unstructured{Unstructured: *nc}
			objects[nodePoolResourceName(p)] = &composed.Unstructured{Unstructured: *np}
		}
	}
	for name, o := range placementRoles(spec, stacks, found.Namespaces, keys) {
		objects[name] = o
	}
	configMaps, err := placementConfigMaps(spec, stacks, found.Namespaces, keys)
	if err != nil {
		return nil, err
	}
	for name, o := range configMaps {
		objects[name] = o
	}
	// A name something else holds is left to it: applying over it would fail, and would fail the organization.
	for _, h := range found.Held {
		delete(objects, h.Resource)
	}

	out := make(map[resource.Name]*resource.DesiredComposed, len(objects))
	for name, o := range objects {
		out[name] = &resource.DesiredComposed{Resource: o, Ready: ready.OfObserved(o, observed, name)}
	}
	return out, nil
}

// unresolved says why nothing new was rendered. A brand-new XR has nothing
// to keep, so it is explicitly not ready rather than "ready with no pools".
func unresolved(rsp *fnv1.RunFunctionResponse, dxr *resource.Composite, found lookup, wl *remote.Reader, kept int) {
	switch {
	case found.Waiting && len(wl.Unanswered()) > 0:
		// The workload cluster has not answered what the organization reads there: say what and why (it may be
		// unreachable, or its ProviderConfig missing).
		msg := fmt.Sprintf("waiting for workload cluster %s to answer: %s", wl.ProviderConfig, strings.Join(wl.Unanswered(), "; "))
		if kept > 0 {
			msg += "; keeping the pools already composed unchanged meanwhile"
		}
		response.ConditionFalse(rsp, TypeReferencesResolved, ReasonWaiting).WithMessage(msg).TargetCompositeAndClaim()
	case found.Waiting:
		response.ConditionFalse(rsp, TypeReferencesResolved, ReasonWaiting).
			WithMessage("waiting for Crossplane to fetch the reference NodeClass and NodePool").TargetCompositeAndClaim()
	default:
		reason, msg := ReasonNotFound, strings.Join(append(found.Missing, found.NotReady...), "; ")
		if len(found.Missing) == 0 {
			reason = ReasonClusterNotReady
		}
		if kept > 0 {
			msg += "; keeping the pools already composed unchanged meanwhile"
		}
		response.ConditionFalse(rsp, TypeReferencesResolved, reason).WithMessage(msg).TargetCompositeAndClaim()
		response.Warning(rsp, errors.New(msg)).TargetCompositeAndClaim()
	}
	if kept == 0 {
		dxr.Ready = resource.ReadyFalse
	}
}
