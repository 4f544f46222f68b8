package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
)

// Names of the required resources this function asks Crossplane for.
const (
	requireReferenceNodeClass = "reference-nodeclass"
	requireReferenceNodePool  = "reference-nodepool"
)

// objectRef identifies a cluster-scoped object by group, kind and name.
type objectRef struct {
	GVK  schema.GroupVersionKind
	Name string
}

func (r objectRef) key() string { return r.GVK.GroupKind().String() + "/" + r.Name }

func (r objectRef) String() string { return fmt.Sprintf("%s %q", r.GVK.Kind, r.Name) }

// requireExisting is the requirement name under which Crossplane returns the
// object, if any, that already holds a name kiso wants to use.
func (r objectRef) requireExisting() string { return "existing/" + r.key() }

// requirements asks Crossplane for the two reference objects and, for every
// object kiso is about to create, for whatever already holds its name. Objects
// this XR already composes need no check, so in steady state only the two
// references are fetched.
func requirements(spec v1alpha1.XKarpenterIsolationSpec, planned []plannedObject, composed map[string]bool) *fnv1.Requirements {
	rs := map[string]*fnv1.ResourceSelector{
		requireReferenceNodeClass: byName(nodeClassGVK(spec.NodeClassRef), spec.NodeClassRef.Name),
		requireReferenceNodePool:  byName(schema.FromAPIVersionAndKind(nodePoolAPIVersion, nodePoolKind), spec.NodePoolRef.Name),
	}
	if spec.ClusterRef != nil {
		rs[requireCluster] = byName(clusterGVK, spec.ClusterRef.Name)
	}
	for _, o := range planned {
		if !composed[o.Ref.key()] {
			rs[o.Ref.requireExisting()] = byName(o.Ref.GVK, o.Ref.Name)
		}
	}
	return &fnv1.Requirements{Resources: rs}
}

func byName(gvk schema.GroupVersionKind, name string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: name},
	}
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
}

// resolve reads the required resources from the request.
func resolve(req *fnv1.RunFunctionRequest, spec v1alpha1.XKarpenterIsolationSpec, planned []plannedObject, composed map[string]bool, xrUID types.UID) (lookup, error) {
	l := lookup{}
	refs := []struct {
		name  string
		field string
		ref   objectRef
		into  **unstructured.Unstructured
	}{
		{requireReferenceNodeClass, "spec.nodeClassRef", objectRef{GVK: nodeClassGVK(spec.NodeClassRef), Name: spec.NodeClassRef.Name}, &l.NodeClass},
		{requireReferenceNodePool, "spec.nodePoolRef", objectRef{GVK: schema.FromAPIVersionAndKind(nodePoolAPIVersion, nodePoolKind), Name: spec.NodePoolRef.Name}, &l.NodePool},
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
	for _, o := range planned {
		if composed[o.Ref.key()] {
			continue
		}
		found, resolved, err := request.GetRequiredResource(req, o.Ref.requireExisting())
		if err != nil {
			return l, errors.Wrapf(err, "cannot read required resource %s", o.Ref)
		}
		if !resolved {
			l.Waiting = true
			continue
		}
		if len(found) > 0 && !controlledBy(found[0].Resource, xrUID) {
			l.Conflicts = append(l.Conflicts, fmt.Sprintf("%s already exists and is not composed by this %s; kiso never adopts or overwrites an object it did not create", o.Ref, v1alpha1.IsolationKind))
		}
	}
	return l, nil
}

// controlledBy reports whether the XR is the object's controller, as it is of
// every resource it composed.
func controlledBy(o *unstructured.Unstructured, xrUID types.UID) bool {
	if xrUID == "" {
		return false
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.UID == xrUID {
			return true
		}
	}
	return false
}

// resolveCluster reads the organization's XKarpenterCluster.
func (l *lookup) resolveCluster(req *fnv1.RunFunctionRequest, name string) error {
	ref := objectRef{GVK: clusterGVK, Name: name}
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
