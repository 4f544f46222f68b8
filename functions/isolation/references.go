package main

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Names of the required resources this function asks Crossplane for.
const (
	requireReferenceNodeClass = "reference-nodeclass"
	requireReferenceNodePool  = "reference-nodepool"
)

var nodePoolGVK = schema.FromAPIVersionAndKind(nodePoolAPIVersion, nodePoolKind)

// requirements asks Crossplane for the two reference objects, the cluster if
// the spec names one, every organization's XR and, for every object kiso is
// about to create, for whatever already holds its name.
func requirements(spec v1alpha1.XKarpenterIsolationSpec, planned []ownership.Object, composed ownership.Composed, keys placement.Keys) *fnv1.Requirements {
	rs := map[string]*fnv1.ResourceSelector{
		requireReferenceNodeClass: ownership.ByName(nodeClassGVK(spec.NodeClassRef), "", spec.NodeClassRef.Name),
		requireReferenceNodePool:  ownership.ByName(nodePoolGVK, "", spec.NodePoolRef.Name),
	}
	if spec.ClusterRef != nil {
		rs[requireCluster] = ownership.ByName(clusterGVK, "", spec.ClusterRef.Name)
	}
	rs[requireClusterPolicy] = ownership.ByName(validatingPolicyGVK, "", placement.PolicyName)
	requireNamespaces(rs, spec, keys)
	ownership.Require(rs, planned, composed)
	return &fnv1.Requirements{Resources: rs}
}

// lookup is what Crossplane returned for this function's requirements.
type lookup struct {
	// Waiting is true until Crossplane has resolved every requirement.
	Waiting bool

	NodeClass *unstructured.Unstructured
	NodePool  *unstructured.Unstructured

	// Missing describes each reference that does not exist.
	Missing []string

	// Cluster is the organization's XKarpenterCluster, if it names one.
	Cluster *boundCluster

	// NotReady describes each reference that exists but cannot be built on yet.
	NotReady []string

	// Conflicts describes each object that holds a name kiso wants and that
	// this XR does not own.
	Conflicts []string

	// Namespaces are the namespaces the platform gives the organization
	// (labelled <keyDomain>/organization=<organization>).
	Namespaces map[string]bool

	// Exempt are those of Namespaces the platform also labels exempt from
	// placement.
	Exempt map[string]bool

	// Placement is what the cluster's placement policy enforces, nil when
	// no XKarpenterCluster composes one.
	Placement *clusterPlacement
}

// resolve reads the required resources from the request.
func resolve(req *fnv1.RunFunctionRequest, spec v1alpha1.XKarpenterIsolationSpec, planned []ownership.Object, composed ownership.Composed, xrUID types.UID, keys placement.Keys) (lookup, error) {
	l := lookup{}
	refs := []struct {
		name  string
		field string
		ref   ownership.Object
		into  **unstructured.Unstructured
	}{
		{requireReferenceNodeClass, "spec.nodeClassRef", ownership.Object{GVK: nodeClassGVK(spec.NodeClassRef), Name: spec.NodeClassRef.Name}, &l.NodeClass},
		{requireReferenceNodePool, "spec.nodePoolRef", ownership.Object{GVK: nodePoolGVK, Name: spec.NodePoolRef.Name}, &l.NodePool},
	}
	for _, r := range refs {
		found, resolved, err := request.GetRequiredResource(req, r.name)
		if err != nil {
			return l, errors.Wrapf(err, "cannot read required resource %s", r.ref)
		}
		switch {
		case !resolved:
			l.Waiting = true
		case len(found) == 0:
			l.Missing = append(l.Missing, fmt.Sprintf("%s: reference %s not found", r.field, r.ref))
		default:
			*r.into = found[0].Resource
		}
	}
	if spec.ClusterRef != nil {
		if err := l.resolveCluster(req, spec.ClusterRef.Name); err != nil {
			return l, err
		}
	}
	if err := l.resolveNamespaces(req, keys); err != nil {
		return l, err
	}
	if err := l.resolveClusterPolicy(req); err != nil {
		return l, err
	}
	v, err := ownership.Verify(req, planned, composed, v1alpha1.IsolationKind, xrUID)
	if err != nil {
		return l, err
	}
	l.Waiting = l.Waiting || v.Waiting
	l.Conflicts = namespaceConflicts(spec, v.Conflicts, keys)
	return l, nil
}

// resolveCluster reads the organization's XKarpenterCluster.
func (l *lookup) resolveCluster(req *fnv1.RunFunctionRequest, name string) error {
	ref := ownership.Object{GVK: clusterGVK, Name: name}
	found, resolved, err := request.GetRequiredResource(req, requireCluster)
	switch {
	case err != nil:
		return errors.Wrapf(err, "cannot read required resource %s", ref)
	case !resolved:
		l.Waiting = true
	case len(found) == 0:
		l.Missing = append(l.Missing, fmt.Sprintf("spec.clusterRef: %s not found", ref))
	default:
		c, err := decodeCluster(found[0].Resource)
		if err != nil {
			return err
		}
		l.Cluster = c
		if why := c.notReady(); why != "" {
			l.NotReady = append(l.NotReady, why)
		}
	}
	return nil
}

// Unresolved reports whether anything the function needs is not there yet.
func (l lookup) Unresolved() bool {
	return l.Waiting || len(l.Missing) > 0 || len(l.NotReady) > 0
}

// referenceLabel marks a NodeClass or NodePool the platform lets tenants clone.
func referenceLabel(keys placement.Keys) string { return keys.Domain + "/reference" }

// validateReferences refuses a reference the platform did not mark: a
// NodePool or NodeClass is the platform's, and one it never meant for
// tenants (a privileged role, another team's subnets) must not be cloned.
func validateReferences(spec v1alpha1.XKarpenterIsolationSpec, found lookup, in Input, keys placement.Keys) field.ErrorList {
	var errs field.ErrorList
	for _, r := range []struct {
		path   *field.Path
		kind   string
		obj    *unstructured.Unstructured
		listed []string
	}{
		{field.NewPath("spec", "nodeClassRef", "name"), spec.NodeClassRef.Kind, found.NodeClass, in.References.NodeClasses},
		{field.NewPath("spec", "nodePoolRef", "name"), nodePoolKind, found.NodePool, in.References.NodePools},
	} {
		if r.obj == nil || r.obj.GetLabels()[referenceLabel(keys)] == "true" || slices.Contains(r.listed, r.obj.GetName()) {
			continue
		}
		errs = append(errs, field.Forbidden(r.path, fmt.Sprintf("%s %q is not a reference: a platform marks the %ss tenants may clone with the label %s: \"true\" (or lists them in the function input)",
			r.kind, r.obj.GetName(), r.kind, referenceLabel(keys))))
	}
	return errs
}

// validateAgainstReferences returns spec errors that only show once the
// reference NodePool and the pools already composed are known.
func validateAgainstReferences(spec v1alpha1.XKarpenterIsolationSpec, found lookup, observed map[resource.Name]resource.ObservedComposed) field.ErrorList {
	if errs := validateReferenceShapes(spec, found); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	sp := field.NewPath("spec")

	// A static NodePool (spec.replicas) allows only limits.nodes and no
	// weight; say so on the claim rather than fail every clone's apply.
	if _, static, _ := unstructured.NestedFieldNoCopy(found.NodePool.Object, "spec", "replicas"); static {
		check := func(p *field.Path, s *v1alpha1.PoolSettings) {
			if s == nil {
				return
			}
			if s.Weight != nil {
				errs = append(errs, field.Forbidden(p.Child("weight"), fmt.Sprintf("reference NodePool %q is static (spec.replicas); Karpenter allows no weight on it", found.NodePool.GetName())))
			}
			for _, k := range slices.Sorted(maps.Keys(s.Limits)) {
				if k != "nodes" {
					errs = append(errs, field.Forbidden(p.Child("limits").Key(k), fmt.Sprintf("reference NodePool %q is static (spec.replicas); Karpenter allows only limits.nodes on it", found.NodePool.GetName())))
				}
			}
		}
		check(sp.Child("pool"), spec.Pool)
		for i := range spec.Stacks {
			check(sp.Child("stacks").Index(i).Child("pool"), spec.Stacks[i].Pool)
		}
	}

	errs = append(errs, validateKarpenterNamespace(spec, found.Cluster)...)

	// Only a cluster whose controller may pass per-organization roles can
	// host a Dedicated one.
	if spec.NodeRole == v1alpha1.NodeRoleDedicated && found.Cluster != nil && found.Cluster.Status.NodeRolePath == "" {
		errs = append(errs, field.Forbidden(sp.Child("nodeRole"), fmt.Sprintf("%s %q uses an existing instance profile and its controller may pass that one role only; use Shared", v1alpha1.ClusterKind, found.Cluster.Name)))
	}

	// Karpenter forbids changing a NodePool's nodeClassRef group or kind.
	want := nodeClassGVK(spec.NodeClassRef).GroupKind()
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		oc := observed[name]
		if oc.Resource.GetKind() != nodePoolKind {
			continue
		}
		if got, ok := observedNodeClassRef(oc); ok && got != want {
			errs = append(errs, field.Forbidden(sp.Child("nodeClassRef"), fmt.Sprintf("NodePool %q uses a %s and Karpenter forbids changing a NodePool's NodeClass kind; remove the organization's pools first or keep %s", oc.Resource.GetName(), got, got)))
		}
	}
	return errs
}
