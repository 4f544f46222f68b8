package main

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/clusterview"
	"github.com/kiso-dev/kiso/functions/internal/remote"
	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// crClusterView is the composed resource name of the cluster's view for its organizations (clusterview).
const crClusterView resource.Name = "organization-view"

// render renders, from what was resolved, the XR's status and every object the cluster composes, as composed
// resources: the plan's, the cluster's placement policies, Karpenter's Releases (in order, see
// karpenterInstall), the Usages that order their deletion, and the view its organizations read. For a workload
// cluster, every Kubernetes object goes there in a provider-kubernetes Object; the view stays where Crossplane
// and the organizations' XRs run.
func (r *call) render() bool {
	// The status comes first: the view the cluster composes for its organizations shows part of it.
	r.status = buildStatus(r.plan)
	r.references.render(r)
	r.rollouts.render(r)

	rendered, err := render(r.plan)
	if err != nil {
		return r.Fatal(err)
	}
	objects, err := r.placement.render(r)
	if err != nil {
		return r.Fatal(err)
	}
	for name, obj := range rendered {
		cd, err := typed.Composed(obj)
		if err != nil {
			return r.Fatal(errors.Wrapf(err, "cannot convert %s", name))
		}
		objects[name] = cd
	}
	releases, err := r.install.render(r)
	if err != nil {
		return r.Fatal(err)
	}
	for name, cd := range releases {
		objects[name] = cd
	}
	for name, cd := range renderUsages(r.plan, r.name(), objects) {
		objects[name] = cd
	}
	guards, err := renderNodeClassGuard()
	if err != nil {
		return r.Fatal(err)
	}
	for name, cd := range guards {
		objects[name] = cd
	}
	view, err := clusterview.Render(r.name(), r.Spec, r.status)
	if err != nil {
		return r.Fatal(err)
	}
	objects[crClusterView] = view
	providerConfig, isRemote := r.Spec.Remote()
	if isRemote {
		remote.WrapObjects(providerConfig, objects)
	}
	// The cluster's guards stay here, beside what they keep.
	guards, err = newDeletionOrder(r.name(), providerConfig, r.placement.plan.KeyDomain).renderClusterGuards()
	if err != nil {
		return r.Fatal(err)
	}
	for name, cd := range guards {
		objects[name] = cd
	}
	r.objects = objects
	return true
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
