package main

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/clusterview"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// requireCluster is the required resource under which Crossplane returns the
// view the organization's XKarpenterCluster composes for its organizations
// (clusterview): not the cluster itself, whose every status change would
// reconcile every organization bound to it.
const requireCluster = "cluster"

var clusterGVK = schema.GroupVersionKind{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.ClusterKind}

// boundCluster is what an organization takes from its XKarpenterCluster.
type boundCluster struct {
	Name   string
	Spec   v1alpha1.XKarpenterClusterSpec
	Status v1alpha1.XKarpenterClusterStatus
}

// decodeCluster reads the spec and status of the cluster XR named name from its view.
func decodeCluster(view *unstructured.Unstructured, name string) (*boundCluster, error) {
	c := &boundCluster{Name: name}
	if err := clusterview.Read(view, &c.Spec, &c.Status); err != nil {
		return nil, errors.Wrapf(err, "spec.clusterRef: cannot read %s %q from its view %s %q", v1alpha1.ClusterKind, name, clusterview.GVK.Kind, view.GetName())
	}
	// The XRD's schema requires it, but a cluster read here is whatever is stored: an empty one would start
	// the name of every Object composed in the workload cluster with a dot.
	if pc, remote := c.Spec.Remote(); remote {
		if errs := validation.IsDNS1123Label(pc); len(errs) > 0 {
			return nil, errors.Errorf("spec.clusterRef: %s %q: spec.workloadCluster.providerConfigName %q is not a DNS label: %s", v1alpha1.ClusterKind, c.Name, pc, strings.Join(errs, "; "))
		}
	}
	c.Spec.Default()
	return c, nil
}

// publishedPair is the reference pair of a class as the cluster read it for its organizations
// (spec.references), nil when the cluster does not publish it: then the organization reads it itself. A nil
// cluster publishes nothing.
func (c *boundCluster) publishedPair(class capacityClass) *v1alpha1.PublishedReference {
	if c == nil {
		return nil
	}
	ref := rollout.ReferenceOf(class.NodeClassRef, class.NodePoolRef).String()
	for i := range c.Status.References {
		if c.Status.References[i].Reference == ref {
			return &c.Status.References[i]
		}
	}
	return nil
}

// notReady says why a cluster cannot be built on yet. kiso waits for the
// cluster function's status (every value in it is known from the cluster's
// spec), not for AWS: Usages order deletion, and creation converges.
func (c *boundCluster) notReady() string {
	for _, f := range []struct{ name, value string }{
		{"controllerRoleResource", c.Status.ControllerRoleResource},
		{"namePrefix", c.Status.NamePrefix},
	} {
		if f.value == "" {
			return fmt.Sprintf("spec.clusterRef: %s %q has not been rendered yet (its status has no %s)", v1alpha1.ClusterKind, c.Name, f.name)
		}
	}
	return ""
}

// inherited is what every pool of the cluster inherits from it now: its tags
// an EC2NodeClass may carry (Karpenter's CRD refuses the keys it reserves,
// which IAM resources allow). It is part of each reference's revision.
func (c *boundCluster) inherited() rollout.Inherited {
	if c == nil {
		return rollout.Inherited{}
	}
	return rollout.InheritedFrom(c.Spec.Tags)
}
