package main

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// The reference pairs the cluster lists (spec.references) are read once here, where the organizations' pools
// are (in a workload cluster, through one watched observe-only Object each), and shown in status.references,
// so in the view its organizations read: an organization whose class names a listed pair reads it there
// instead of each reading it itself. A pair a staged rollout also reads is asked for once: both ask under the
// pair's requirement names (referenceRequirements).

// listedReferences is the reference pairs the spec lists, one concern: it asks for each (require), reads them
// (resolve) and shows them in the XR's status (render).
type listedReferences struct {
	// published are the pairs as read, in spec order (publishedReferences).
	published []v1alpha1.PublishedReference
}

// require asks for each object of each pair the spec lists.
func (l *listedReferences) require(r *state) { requireListedReferences(r.required, r.Spec) }

// resolve reads the pairs, keeping what the cluster published before of a pair not answered now.
func (l *listedReferences) resolve(r *state) error {
	var err error
	l.published, err = publishedReferences(r.Req, r.Spec, r.previous.References)
	return err
}

// render shows the pairs in the XR's status.
func (l *listedReferences) render(r *state) {
	r.status.References = l.published
}

// requireListedReferences asks for each object of each pair the spec lists.
func requireListedReferences(rs map[string]*fnv1.ResourceSelector, spec v1alpha1.XKarpenterClusterSpec) {
	for _, p := range spec.References {
		ref := rollout.ReferenceOf(p.NodeClassRef, p.NodePoolRef)
		nc, np := referenceRequirements(ref.String())
		rs[nc] = ownership.ByName(ref.NodeClass, "", ref.NodeClassRef)
		rs[np] = ownership.ByName(rollout.NodePoolGVK, "", ref.NodePool)
	}
}

// publishedReferences are the listed pairs as read, in spec order: each once both its objects are answered.
// A pair not answered now (a workload cluster unreachable a moment) keeps what the cluster published before, so
// that its organizations do not each start reading it meanwhile; a pair no longer listed goes.
func publishedReferences(req *fnv1.RunFunctionRequest, spec v1alpha1.XKarpenterClusterSpec, previous []v1alpha1.PublishedReference) ([]v1alpha1.PublishedReference, error) {
	out := make([]v1alpha1.PublishedReference, 0, len(spec.References))
	for _, p := range spec.References {
		ref := rollout.ReferenceOf(p.NodeClassRef, p.NodePoolRef).String()
		nc, np := referenceRequirements(ref)
		nodeClass, ncResolved := fnstate.Required(req, nc)
		nodePool, npResolved := fnstate.Required(req, np)
		if !ncResolved || !npResolved {
			for _, was := range previous {
				if was.Reference == ref {
					out = append(out, was)
				}
			}
			continue
		}
		published := v1alpha1.PublishedReference{Reference: ref}
		var err error
		if published.NodeClass, err = referenceJSON(nodeClass); err != nil {
			return nil, err
		}
		if published.NodePool, err = referenceJSON(nodePool); err != nil {
			return nil, err
		}
		out = append(out, published)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// referenceJSON is what an organization reads of a reference object: its kind, name, labels (the platform marks
// a reference with one) and spec, which is all it clones; "" when it does not exist.
func referenceJSON(found []resource.Required) (string, error) {
	if len(found) == 0 {
		return "", nil
	}
	o := found[0].Resource
	trimmed := &unstructured.Unstructured{Object: map[string]any{"spec": o.Object["spec"]}}
	trimmed.SetAPIVersion(o.GetAPIVersion())
	trimmed.SetKind(o.GetKind())
	trimmed.SetName(o.GetName())
	trimmed.SetLabels(o.GetLabels())
	b, err := json.Marshal(trimmed.Object)
	if err != nil {
		return "", errors.Wrapf(err, "cannot show %s %q to organizations", o.GetKind(), o.GetName())
	}
	return string(b), nil
}
