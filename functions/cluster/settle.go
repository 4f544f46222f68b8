package main

import (
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/ready"
	"github.com/kiso-dev/kiso/functions/internal/usage"
)

// settle decides what of the rendered objects Crossplane composes now. Never take
// over an IAM role, queue or rule kiso did not create: Crossplane is asked for whatever holds each name not yet
// composed, and a name something else holds stops the call; an object not yet known to be free waits. Each object
// is ready by what Crossplane observed of it, and an object the spec no longer asks for that a Usage still names
// goes once Crossplane can delete it.
func (r *call) settle() bool {
	planned := plannedObjects(r.objects)
	composedIdx := ownership.IndexObserved(r.Observed)
	ownership.Require(r.required, planned, composedIdx)
	r.rollouts.settle(r)
	r.reads = r.workload.Requirements(r.required)
	if len(r.required) > 0 || len(r.placement.schemas) > 0 {
		r.Rsp.Requirements = &fnv1.Requirements{Resources: r.required, Schemas: r.placement.schemas}
	}
	r.verdict = ownership.Verify(r.Req, planned, composedIdx, ownership.Owner{Kind: v1alpha1.ClusterKind, UID: r.ObservedXR.Resource.GetUID()})
	if r.Conflicts(r.verdict.Messages()) {
		return false
	}
	fncall.NamesAvailable(r.Rsp, r.To)

	r.notReady = r.compose()
	r.inUse = usage.KeepInUse(r.Desired, r.Observed, []string{meta.AnnotationKeyExternalName})
	return true
}

// compose adds the objects to the desired composed resources, each ready by what Crossplane observed of it,
// and the reads, and returns how many objects are not ready.
func (r *call) compose() int {
	notReady := 0
	for name, cd := range r.objects {
		if r.verdict.Waiting && !r.Observed.Has(name) {
			// Not yet known to be free: compose it once Crossplane says so.
			continue
		}
		dc := &resource.DesiredComposed{Resource: cd, Ready: ready.OfObserved(cd, r.Observed, name)}
		if dc.Ready != resource.ReadyTrue {
			notReady++
		}
		r.Desired[name] = dc
	}
	// A read is no deliverable: the cluster is ready by what it composes.
	for name, read := range r.reads {
		r.Desired[name] = &resource.DesiredComposed{Resource: read, Ready: resource.ReadyTrue}
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
