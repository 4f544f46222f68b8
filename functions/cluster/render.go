package main

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/functions/internal/remote"
)

// render renders, from what was resolved, the XR's status and every object the cluster composes, concern by
// concern: the AWS prerequisites and the status first, the view once the status is whole, the Usages once every
// object they order is there. For a workload cluster, every Kubernetes object goes there in a provider-kubernetes
// Object; what stays beside the XR (the view, the cluster's deletion guards) is not wrapped.
func (r *call) render() bool {
	r.objects = map[resource.Name]*composed.Unstructured{}
	err := eachChecked(r, func(c renderer) { c.render(&r.state) }, func(c checkedRenderer) error { return c.render(&r.state) })
	if err != nil {
		return r.Fatal(err)
	}
	if providerConfig, isRemote := r.Spec.Remote(); isRemote {
		remote.WrapObjects(providerConfig, r.objects)
	}
	if err := eachUntil(r, func(c besideRenderer) error { return c.renderBeside(&r.state) }); err != nil {
		return r.Fatal(err)
	}
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
