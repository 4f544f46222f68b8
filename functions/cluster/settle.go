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

// settle decides, concern by concern, what of the rendered objects Crossplane composes now (composition), and
// hands Crossplane the requirements every phase wrote.
func (r *call) settle() bool {
	settled := true
	each(r, func(c settler) { settled = settled && c.settle(&r.state) })
	return settled
}

// composition is what Crossplane composes now, one concern. Never take over an IAM role, queue or rule kiso did
// not create: Crossplane is asked for whatever holds each name not yet composed, and a name something else holds
// stops the call; an object not yet known to be free waits. Each object is ready by what Crossplane observed of
// it, and an object the spec no longer asks for that a Usage still names goes once Crossplane can delete it.
type composition struct {
	// reads are the workload cluster's reads, composed as observe-only objects.
	reads    map[resource.Name]*composed.Unstructured
	verdict  ownership.Verdict
	notReady int
	inUse    []resource.Name
}

// settle asks for whatever holds each name the objects take, hands over the requirements (a workload cluster's
// go there), and composes what is free.
func (o *composition) settle(r *state) bool {
	planned := plannedObjects(r.objects)
	composedIdx := ownership.IndexObserved(r.Observed)
	ownership.Require(r.required, planned, composedIdx)
	o.reads = r.workload.Requirements(r.required)
	if len(r.required) > 0 || len(r.schemas) > 0 {
		r.Rsp.Requirements = &fnv1.Requirements{Resources: r.required, Schemas: r.schemas}
	}
	o.verdict = ownership.Verify(r.Req, planned, composedIdx, ownership.Owner{Kind: v1alpha1.ClusterKind, UID: r.ObservedXR.Resource.GetUID()})
	if r.Conflicts(o.verdict.Messages()) {
		return false
	}
	fncall.NamesAvailable(r.Rsp, r.To)

	o.notReady = o.compose(r)
	o.inUse = usage.KeepInUse(r.Desired, r.Observed, []string{meta.AnnotationKeyExternalName})
	return true
}

// settled reports whether nothing waits: every object ready, none kept in use, every name known to be free.
func (o *composition) settled() bool {
	return o.notReady == 0 && len(o.inUse) == 0 && !o.verdict.Waiting
}

// compose adds the objects to the desired composed resources, each ready by what Crossplane observed of it,
// and the reads, and returns how many objects are not ready.
func (o *composition) compose(r *state) int {
	notReady := 0
	for name, cd := range r.objects {
		if o.verdict.Waiting && !r.Observed.Has(name) {
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
	for name, read := range o.reads {
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
