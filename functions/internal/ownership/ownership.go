// Package ownership keeps a function from adopting objects it did not create.
// Crossplane applies a composed resource by name: if an object of that name
// already exists, it would take it over, and rewrite (or later delete) a
// platform's NodePool or IAM role. Before composing an object for the first
// time, a function asks Crossplane for whatever already holds its name, and
// refuses if that object is not controlled by the XR.
package ownership

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
)

// An Object is one object a function composes: its composed resource name and
// the object it is.
type Object struct {
	Resource  resource.Name
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

func (o Object) key() string {
	return key(o.GVK, o.Namespace, o.Name)
}

func key(gvk schema.GroupVersionKind, namespace, name string) string {
	return gvk.GroupKind().String() + "/" + namespace + "/" + name
}

// String names the object as a user would: Kind "name" or Kind "namespace/name".
func (o Object) String() string {
	if o.Namespace != "" {
		return fmt.Sprintf("%s %q", o.GVK.Kind, o.Namespace+"/"+o.Name)
	}
	return fmt.Sprintf("%s %q", o.GVK.Kind, o.Name)
}

// requirement is the required resource under which Crossplane returns the
// object, if any, that holds the name.
func (o Object) requirement() string { return nameCheckPrefix + o.key() }

// nameCheckPrefix starts the key of every requirement Require adds.
const nameCheckPrefix = "existing/"

// IsNameCheck reports whether a requirement is one Require added: a look at
// whatever holds a name the XR is about to take, asked for only until the
// XR composes the object.
func IsNameCheck(requirement string) bool { return strings.HasPrefix(requirement, nameCheckPrefix) }

// Composed is the set of objects an XR already composes.
type Composed map[string]bool

// IndexObserved indexes the observed composed resources by their heads, reading none of them.
func IndexObserved(observed fnstate.Observed) Composed {
	c := make(Composed, observed.Len())
	for _, name := range observed.Names() {
		h, _ := observed.Head(name)
		c[key(h.GVK, h.Namespace, h.Name)] = true
	}
	return c
}

// Has reports whether the XR already composes the object.
func (c Composed) Has(o Object) bool { return c[o.key()] }

// ByName selects one object by kind, namespace and name.
func ByName(gvk schema.GroupVersionKind, namespace, name string) *fnv1.ResourceSelector {
	s := &fnv1.ResourceSelector{
		ApiVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: name},
	}
	if namespace != "" {
		s.Namespace = &namespace
	}
	return s
}

// Require adds to rs a requirement for every planned object the XR does not
// compose yet. Objects it composes need no check, so in steady state nothing
// is fetched.
func Require(rs map[string]*fnv1.ResourceSelector, planned []Object, composed Composed) {
	for _, o := range planned {
		if !composed.Has(o) {
			rs[o.requirement()] = ByName(o.GVK, o.Namespace, o.Name)
		}
	}
}

// A Verdict is what Crossplane's answers to Require say.
type Verdict struct {
	// Waiting is true until Crossplane has answered every requirement.
	Waiting bool
	// Conflicts are the objects that hold a planned name and that the XR
	// does not control.
	Conflicts []Conflict
}

// A Conflict is an object that holds the name of a planned one.
type Conflict struct {
	Planned Object
	// Holder is the object that holds the name, as Crossplane returned it.
	Holder *unstructured.Unstructured
	xrKind string
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s already exists and is not composed by this %s; kiso never adopts or overwrites an object it did not create", c.Planned, c.xrKind)
}

// Messages describes each conflict, in the order of the plan.
func (v Verdict) Messages() []string {
	out := make([]string, 0, len(v.Conflicts))
	for _, c := range v.Conflicts {
		out = append(out, c.String())
	}
	return out
}

// An Owner is the XR that composes the planned objects: of its kind, its UID controls what it composed.
type Owner struct {
	Kind string
	UID  types.UID
}

// Verify reads Crossplane's answers to Require.
func Verify(req *fnv1.RunFunctionRequest, planned []Object, composed Composed, owner Owner) Verdict {
	xrKind, xrUID := owner.Kind, owner.UID
	v := Verdict{}
	for _, o := range planned {
		if composed.Has(o) {
			continue
		}
		found, resolved := fnstate.Required(req, o.requirement())
		if !resolved {
			v.Waiting = true
			continue
		}
		if len(found) > 0 && !ControlledBy(found[0].Resource, xrUID) {
			v.Conflicts = append(v.Conflicts, Conflict{Planned: o, Holder: found[0].Resource, xrKind: xrKind})
		}
	}
	return v
}

// ControlledBy reports whether the XR is the object's controller, as it is of
// every resource it composed.
func ControlledBy(o *unstructured.Unstructured, xrUID types.UID) bool {
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
