package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/clusterview"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/ready"
	"github.com/kiso-dev/kiso/functions/internal/remote"
	"github.com/kiso-dev/kiso/functions/internal/typed"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// Function renders Karpenter's AWS prerequisites for one EKS cluster.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
}

// RunFunction renders one XKarpenterCluster. It never returns an error:
// failures are Fatal results and a condition on the XR.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, fncall.TTLSettling)

	in, err := getInput(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "invalid function input"))
		return rsp, nil
	}
	st, err := fnstate.Read(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	oxr, dxr, observed, desired := st.ObservedXR, st.DesiredXR, st.Observed, st.Desired
	log := f.log.WithValues("xr", oxr.Resource.GetName())

	spec, err := decodeSpec(oxr)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	// A workload cluster's reads are answered from what the provider observed there.
	wl := workloadReader(spec, oxr.Resource.GetName())
	if wl != nil {
		answered, err := wl.Answer(req, observed.ReadAll())
		if err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
		observed = fnstate.ObservedOf(answered)
	}
	if errs := validateSpec(spec); len(errs) > 0 {
		fncall.InvalidSpec(rsp, errs, fncall.Composite)
		return rsp, nil
	}
	// While the API server refuses Crossplane what this XR needs, stop and
	// say so on the claim: Crossplane alone would only tell the XR.
	if fncall.ApplyRefusal(rsp, oxr, time.Now()) {
		return rsp, nil
	}

	p := newPlan(spec)
	alerts := newAlertsPlan(req, observed, p.PrometheusRule)
	p.PrometheusRule = alerts.compose()
	keys := placement.NewKeys(in.KeyDomain)
	// The status comes first: the view the cluster composes for its organizations shows part of it.
	status := buildStatus(p)
	staged, err := stageRollout(rsp, req, oxr, spec, keys, time.Now())
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	status.Rollouts, status.Rollout = staged.Rollouts, summary(spec, staged.Rollouts)
	// One placement plan serves the policies rendered and the platform namespaces required.
	platform := newPlacementPlan(oxr.Resource.GetName(), spec.Karpenter.Namespace, in, injectAPIVersion(req, in, observed))
	install := newKarpenterInstall(req, p, oxr, observed, keys.Domain)
	objects, err := renderAll(p, platform, oxr.Resource.GetName(), status, install)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	planned := plannedObjects(objects)

	// Never take over an IAM role, queue or rule kiso did not create: ask
	// Crossplane for whatever holds each name not yet composed.
	composedIdx := ownership.IndexObserved(observed)
	rs := map[string]*fnv1.ResourceSelector{}
	requireInjectAPI(rs, in)
	alerts.require(rs)
	requirePlatformNamespaces(rs, platform)
	ownership.Require(rs, planned, composedIdx)
	requireRollout(rs, spec, req, keys, oxr.Resource.GetName(), staged)
	install.require(rs)
	reads := wl.Requirements(rs)
	if len(rs) > 0 {
		rsp.Requirements = &fnv1.Requirements{Resources: rs}
	}
	verdict := ownership.Verify(req, planned, composedIdx, v1alpha1.ClusterKind, oxr.Resource.GetUID())
	if len(verdict.Conflicts) > 0 {
		fncall.NameConflicts(rsp, verdict.Messages(), fncall.Composite)
		return rsp, nil
	}
	fncall.NamesAvailable(rsp, fncall.Composite)

	notReady := compose(desired, objects, reads, observed, verdict.Waiting)
	// An object the spec no longer asks for that a Usage still names goes once Crossplane can delete it.
	inUse := usage.KeepInUse(desired, observed, []string{meta.AnnotationKeyExternalName})
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
	fncall.SpecValid(rsp, fncall.Composite)
	reportPlatformNamespaces(rsp, req, platform)
	alerts.report(rsp)
	install.report(rsp)
	fncall.RequeueAfter(rsp, oxr, notReady == 0 && len(inUse) == 0 && !verdict.Waiting && !staged.InProgress)
	staged.requeue(rsp)
	log.Debug("rendered", "resources", len(objects), "notReady", notReady, "keptInUse", len(inUse))
	return rsp, nil
}

// crClusterView is the composed resource name of the cluster's view for its organizations (clusterview).
const crClusterView resource.Name = "organization-view"

// compose adds the objects to the desired composed resources, each ready by what Crossplane observed of it,
// and the reads, and returns how many objects are not ready.
func compose(desired map[resource.Name]*resource.DesiredComposed, objects, reads map[resource.Name]*composed.Unstructured, observed fnstate.Observed, waiting bool) int {
	notReady := 0
	for name, cd := range objects {
		if waiting && !observed.Has(name) {
			// Not yet known to be free: compose it once Crossplane says so.
			continue
		}
		dc := &resource.DesiredComposed{Resource: cd, Ready: ready.OfObserved(cd, observed, name)}
		if dc.Ready != resource.ReadyTrue {
			notReady++
		}
		desired[name] = dc
	}
	// A read is no deliverable: the cluster is ready by what it composes.
	for name, r := range reads {
		desired[name] = &resource.DesiredComposed{Resource: r, Ready: resource.ReadyTrue}
	}
	return notReady
}

// plannedObjects lists what the cluster composes, in name order, so
// conflicts are reported the same way every time.
func plannedObjects(objects map[resource.Name]*composed.Unstructured) []ownership.Object {
	planned := make([]ownership.Object, 0, len(objects))
	for name, cd := range objects {
		planned = append(planned, ownership.Object{Resource: name, GVK: cd.GroupVersionKind(), Namespace: cd.GetNamespace(), Name: cd.GetName()})
	}
	slices.SortFunc(planned, func(a, b ownership.Object) int { return strings.Compare(string(a.Resource), string(b.Resource)) })
	return planned
}

// renderAll returns every object the cluster composes, as composed
// resources: the plan's, the cluster's placement policies, Karpenter's
// Releases (in order, see karpenterInstall), the Usages
// that order their deletion, and the view its organizations read. For a
// workload cluster, every Kubernetes object goes there in a
// provider-kubernetes Object; the view stays where Crossplane and the
// organizations' XRs run.
func renderAll(p plan, platform placementPlan, xrName string, status v1alpha1.XKarpenterClusterStatus, install karpenterInstall) (map[resource.Name]*composed.Unstructured, error) {
	rendered, err := render(p)
	if err != nil {
		return nil, err
	}
	objects, err := renderPlacement(platform)
	if err != nil {
		return nil, err
	}
	for name, obj := range rendered {
		cd, err := typed.Composed(obj)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot convert %s", name)
		}
		objects[name] = cd
	}
	releases, err := install.releases()
	if err != nil {
		return nil, err
	}
	for name, cd := range releases {
		objects[name] = cd
	}
	for name, cd := range renderUsages(p, xrName, objects) {
		objects[name] = cd
	}
	guards, err := renderNodeClassGuard()
	if err != nil {
		return nil, err
	}
	for name, cd := range guards {
		objects[name] = cd
	}
	view, err := clusterview.Render(xrName, p.Spec, status)
	if err != nil {
		return nil, err
	}
	objects[crClusterView] = view
	providerConfig, isRemote := p.Spec.Remote()
	if isRemote {
		remote.WrapObjects(providerConfig, objects)
	}
	// The cluster's guards stay here, beside what they keep.
	guards, err = newDeletionOrder(xrName, providerConfig, platform.KeyDomain).renderClusterGuards()
	if err != nil {
		return nil, err
	}
	for name, cd := range guards {
		objects[name] = cd
	}
	return objects, nil
}

// render returns every object the plan calls for, keyed by composed
// resource name.
func render(p plan) (map[resource.Name]runtime.Object, error) {
	out := map[resource.Name]runtime.Object{}
	for _, part := range []map[resource.Name]runtime.Object{renderIAM(p), renderInterruption(p), renderEKS(p)} {
		for name, obj := range part {
			out[name] = obj
		}
	}
	pr, err := renderPrometheusRule(p)
	if err != nil {
		return nil, err
	}
	if pr != nil {
		out[crPrometheusRule] = pr
	}
	return out, nil
}
