package fnstate

import (
	"iter"
	"maps"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// Observed is what Crossplane observed of an XR's composed resources. Each object is read from the request
// whole (less its managed fields) the first time a reader asks for it, and only then: an organization of a
// thousand namespaces composes two thousand Roles and ConfigMaps it renders anew on every call, and of those
// the function needs only to know that they exist and are not being deleted (Head). A reader gets an object
// whole or not at all, so nothing can keep an object with part of its content missing.
type Observed struct {
	// sent is the request's observed composed resources, nil when Observed was built from objects already read.
	sent map[string]*fnv1.Resource
	// read holds every object read so far; all of them when sent is nil.
	read map[resource.Name]resource.ObservedComposed
	// heads points to the Head of every object sent, read from the request on the first Head asked for;
	// shared by every copy of Observed.
	heads *map[string]Head
	// names points to the names of every object sent, in order, listed on the first Names asked for.
	names *[]resource.Name
}

// ObservedOf is Observed holding objects already read: what a function observes of a workload cluster, a test's
// objects.
func ObservedOf(objects map[resource.Name]resource.ObservedComposed) Observed {
	if objects == nil {
		objects = map[resource.Name]resource.ObservedComposed{}
	}
	return Observed{read: objects}
}

// observedIn is Observed of the request's observed composed resources, none read yet.
func observedIn(req *fnv1.RunFunctionRequest) Observed {
	sent := req.GetObserved().GetResources()
	if sent == nil {
		sent = map[string]*fnv1.Resource{}
	}
	return Observed{sent: sent, read: make(map[resource.Name]resource.ObservedComposed), heads: new(map[string]Head), names: new([]resource.Name)}
}

// Len is how many composed resources Crossplane observed.
func (o Observed) Len() int {
	if o.sent == nil {
		return len(o.read)
	}
	return len(o.sent)
}

// Has reports whether Crossplane observed the composed resource, without reading it.
func (o Observed) Has(name resource.Name) bool {
	if o.sent == nil {
		_, ok := o.read[name]
		return ok
	}
	_, ok := o.sent[string(name)]
	return ok
}

// Get returns the observed composed resource, read whole.
func (o Observed) Get(name resource.Name) (resource.ObservedComposed, bool) {
	if oc, ok := o.read[name]; ok || o.sent == nil {
		return oc, ok
	}
	r, ok := o.sent[string(name)]
	if !ok {
		return resource.ObservedComposed{}, false
	}
	oc := resource.ObservedComposed{Resource: composed.New(), ConnectionDetails: r.GetConnectionDetails()}
	if oc.ConnectionDetails == nil {
		oc.ConnectionDetails = make(resource.ConnectionDetails)
	}
	oc.Resource.SetUnstructuredContent(withoutManagedFields(r.GetResource()))
	o.read[name] = oc
	return oc, true
}

// Names returns the names of every observed composed resource, in order, without reading any. Several readers
// walk every name of a call, so they share one slice, which none may change.
func (o Observed) Names() []resource.Name {
	if o.sent == nil {
		return slices.Sorted(maps.Keys(o.read))
	}
	if *o.names == nil {
		names := make([]resource.Name, 0, len(o.sent))
		for name := range o.sent {
			names = append(names, resource.Name(name))
		}
		slices.Sort(names)
		*o.names = slices.Clip(names)
	}
	return *o.names
}

// All yields every observed composed resource, read whole, in name order.
func (o Observed) All() iter.Seq2[resource.Name, resource.ObservedComposed] {
	return func(yield func(resource.Name, resource.ObservedComposed) bool) {
		for _, name := range o.Names() {
			oc, _ := o.Get(name)
			if !yield(name, oc) {
				return
			}
		}
	}
}

// ReadAll returns every observed composed resource, read whole, as a map the caller may change.
func (o Observed) ReadAll() map[resource.Name]resource.ObservedComposed {
	out := make(map[resource.Name]resource.ObservedComposed, o.Len())
	for name, oc := range o.All() {
		out[name] = oc
	}
	return out
}

// Head is what identifies an observed object, and whether it is being deleted: each as the object's
// Unstructured reads it (GroupVersionKind, GetNamespace, GetName, GetDeletionTimestamp() != nil).
type Head struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	Deleting  bool
}

// Head returns the observed composed resource's Head, read from the request without reading the object.
// Every reader of a large organization asks for the Head of nearly every object (its owner index, its kinds,
// its readiness), so the first ask reads them all, once.
func (o Observed) Head(name resource.Name) (Head, bool) {
	if o.sent == nil {
		oc, ok := o.read[name]
		if !ok {
			return Head{}, false
		}
		return headOfObject(&oc.Resource.Unstructured), true
	}
	if *o.heads == nil {
		heads := make(map[string]Head, len(o.sent))
		for n, r := range o.sent {
			heads[n] = headOf(r.GetResource())
		}
		*o.heads = heads
	}
	h, ok := (*o.heads)[string(name)]
	return h, ok
}

// headOfObject is the Head of an object already read.
func headOfObject(u *unstructured.Unstructured) Head {
	return Head{GVK: u.GroupVersionKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Deleting: u.GetDeletionTimestamp() != nil}
}

// headOf reads a Head from an object's fields as Unstructured reads it: a field that is not a string reads as
// "", an apiVersion that does not parse as no group, version or kind, a deletion timestamp that does not parse
// as none.
func headOf(s *structpb.Struct) Head {
	fields := s.GetFields()
	metadata := fields["metadata"].GetStructValue().GetFields()
	h := Head{Namespace: metadata["namespace"].GetStringValue(), Name: metadata["name"].GetStringValue()}
	if gv, err := schema.ParseGroupVersion(fields["apiVersion"].GetStringValue()); err == nil {
		h.GVK = gv.WithKind(fields["kind"].GetStringValue())
	}
	var deletion metav1.Time
	if ts := metadata["deletionTimestamp"].GetStringValue(); ts != "" && deletion.UnmarshalQueryParameter(ts) == nil {
		h.Deleting = !deletion.IsZero()
	}
	return h
}
