package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/clusterview"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// The resolve phase: Crossplane's answers to require read into a lookup, what the function found. Nothing here
// decides what to render.

// resolve reads Crossplane's answers into what was found, and refuses the XR while something else holds a name
// it needs, but for a namespace's ConfigMap or Role, which it says is held and composes once free.
func (r *call) resolve() bool {
	var err error
	if r.found, err = r.lookup(); err != nil {
		return r.Fatal(err)
	}
	if r.Conflicts(r.found.Conflicts) {
		return false
	}
	reportHeld(r.Rsp, r.found.Held)
	return true
}

// lookup is what Crossplane returned for this function's requirements.
type lookup struct {
	// Waiting is true until Crossplane has resolved every requirement.
	Waiting bool

	// References are each class's reference pair, by class name ("" for the default class), once found.
	References map[string]referencePair

	// Missing describes each reference that does not exist.
	Missing []string

	// Cluster is the organization's XKarpenterCluster, if it names one.
	Cluster *boundCluster

	// NotReady describes each reference that exists but cannot be built on yet.
	NotReady []string

	// Conflicts describes each object that holds a name kiso wants and that
	// this XR does not own.
	Conflicts []string

	// Held are the namespace objects whose names something else holds: the
	// organization composes everything else.
	Held []heldObject

	// Namespaces are the namespaces the platform gives the organization
	// (labelled <keyDomain>/organization=<organization>).
	Namespaces map[string]bool

	// Exempt are those of Namespaces the platform also labels exempt from
	// placement.
	Exempt map[string]bool

	// Placement is what the cluster's placement policy enforces, nil when
	// no XKarpenterCluster composes one.
	Placement *v1alpha1.PlacementPolicyStatus

	// Warned are, in Warn mode, the pods (namespace/name) Enforce would refuse.
	Warned []string
	// PodsCounted is how many pods Warn mode read.
	PodsCounted int

	// NodeClassUsers are the NodePools that launch from composed NodeClasses while Crossplane no longer observes
	// them (being deleted), as Crossplane returned them (requireNodeClassUsers).
	NodeClassUsers []*unstructured.Unstructured

	// ClaimNamespaceGiven says, for an organization of a workload cluster, whether the platform gives the
	// organization the claim's namespace in the cluster that runs Crossplane, where the claim is; nil otherwise,
	// where the claim's namespace is one of Namespaces.
	ClaimNamespaceGiven *bool
}

// A referencePair is the reference NodeClass and NodePool a class's pools clone.
type referencePair struct {
	NodeClass, NodePool *unstructured.Unstructured
}

// pair returns the reference pair of a class, as found.
func (l lookup) pair(c capacityClass) referencePair { return l.References[c.Name] }

// classPath is the field of the spec that holds what a class names: spec for the default class,
// spec.classes[i] for the others.
func classPath(c capacityClass) *field.Path {
	if c.Index < 0 {
		return field.NewPath("spec")
	}
	return field.NewPath("spec", "classes").Index(c.Index)
}

// lookup reads the required resources from the request.
func (r *call) lookup() (lookup, error) {
	req, spec, given, at, keys := r.Req, r.Spec, r.given, r.at, r.keys
	l := lookup{References: map[string]referencePair{}}
	for _, c := range classesOf(spec) {
		var pair referencePair
		ncName, npName := referenceRequirements(c)
		path := classPath(c)
		refs := []struct {
			name  string
			field *field.Path
			ref   ownership.Object
			into  **unstructured.Unstructured
		}{
			{ncName, path.Child("nodeClassRef"), ownership.Object{GVK: nodeClassGVK(c.NodeClassRef), Name: c.NodeClassRef.Name}, &pair.NodeClass},
			{npName, path.Child("nodePoolRef"), ownership.Object{GVK: nodePoolGVK, Name: c.NodePoolRef.Name}, &pair.NodePool},
		}
		published := r.fetched.publishedPair(c)
		for i, ref := range refs {
			found, resolved := fnstate.Required(req, ref.name)
			if published != nil {
				found, resolved = nil, true
				if read := []string{published.NodeClass, published.NodePool}[i]; read != "" {
					u, err := decodePublished(read, ref.ref)
					if err != nil {
						return l, err
					}
					found = []resource.Required{{Resource: u}}
				}
			}
			switch {
			case !resolved:
				l.Waiting = true
			case len(found) == 0:
				l.Missing = append(l.Missing, fmt.Sprintf("%s: reference %s not found", ref.field, ref.ref))
			default:
				*ref.into = found[0].Resource
			}
		}
		l.References[c.Name] = pair
	}
	if spec.ClusterRef != nil {
		if err := l.resolveCluster(req, spec.ClusterRef.Name); err != nil {
			return l, err
		}
	}
	l.Namespaces, l.Exempt, l.Waiting = given.Namespaces, given.Exempt, l.Waiting || !given.Resolved
	if !at.Workload && !at.PodsPaused {
		warned, pods, resolved := r.warnedPods()
		l.Warned, l.PodsCounted, l.Waiting = warned, pods, l.Waiting || !resolved
	}
	if at.Workload && at.ClaimNamespace != "" {
		given, resolved := claimNamespaceGiven(req, spec, keys)
		l.ClaimNamespaceGiven, l.Waiting = &given, l.Waiting || !resolved
	}
	l.resolveClusterPolicy(req, at.Placement)
	l.resolveNodeClassUsers(req, r.unlaunched)
	v := ownership.Verify(req, r.planned, r.ours, ownership.Owner{Kind: v1alpha1.IsolationKind, UID: r.ObservedXR.Resource.GetUID()})
	l.Waiting = l.Waiting || v.Waiting
	l.Conflicts, l.Held = namespaceConflicts(spec, r.namespaces, v.Conflicts, keys)
	return l, nil
}

// decodePublished reads a reference object as the cluster published it (publishedPair).
func decodePublished(read string, ref ownership.Object) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(read)); err != nil {
		return nil, errors.Wrapf(err, "spec.clusterRef: cannot read reference %s as its cluster published it", ref)
	}
	return u, nil
}

// resolveCluster reads the organization's XKarpenterCluster, from the view it composes for its organizations.
func (l *lookup) resolveCluster(req *fnv1.RunFunctionRequest, name string) error {
	ref := ownership.Object{GVK: clusterGVK, Name: name}
	view := ownership.Object{GVK: clusterview.GVK, Name: clusterview.Name(name)}
	found, resolved := fnstate.Required(req, requireCluster)
	switch {
	case !resolved:
		l.Waiting = true
	case len(found) == 0:
		l.Missing = append(l.Missing, fmt.Sprintf("spec.clusterRef: %s not found, or it has not composed its view for organizations (%s) yet", ref, view))
	case !clusterview.ComposedBy(found[0].Resource, name):
		l.NotReady = append(l.NotReady, fmt.Sprintf("spec.clusterRef: %s is not the view of %s: %s does not control it", view, ref, ref))
	default:
		c, err := decodeCluster(found[0].Resource, name)
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

// resolveNodeClassUsers reads the NodePools requireNodeClassUsers asked for.
func (l *lookup) resolveNodeClassUsers(req *fnv1.RunFunctionRequest, unlaunched []string) {
	for _, name := range unlaunched {
		found, resolved := fnstate.Required(req, requireNodeClassUser+name)
		l.Waiting = l.Waiting || !resolved
		for _, np := range found {
			l.NodeClassUsers = append(l.NodeClassUsers, np.Resource)
		}
	}
}

// Unresolved reports whether anything the function needs is not there yet.
func (l lookup) Unresolved() bool {
	return l.Waiting || len(l.Missing) > 0 || len(l.NotReady) > 0
}

var validatingPolicyGVK = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}

// resolveClusterPolicy reads what the cluster's placement policy enforces: as its workload cluster's
// XKarpenterCluster published it, or from the policy, if any.
func (l *lookup) resolveClusterPolicy(req *fnv1.RunFunctionRequest, published *v1alpha1.PlacementPolicyStatus) {
	if published != nil {
		l.Placement = published
		return
	}
	found, resolved := fnstate.Required(req, requireClusterPolicy)
	switch {
	case !resolved:
		l.Waiting = true
	case len(found) > 0:
		read := placement.Published(found[0].Resource.GetAnnotations())
		l.Placement = &read
	}
}

// claimNamespaceGiven reads whether the platform labels the claim's namespace with the organization, from
// Crossplane's answer to the claim-namespace requirement.
func claimNamespaceGiven(req *fnv1.RunFunctionRequest, spec v1alpha1.XKarpenterIsolationSpec, keys placement.Keys) (given, resolved bool) {
	found, resolved := fnstate.RequiredLabeled(req, requireClaimNamespace)
	return len(found) > 0 && found[0].Labels[keys.Organization] == spec.Organization, resolved
}
