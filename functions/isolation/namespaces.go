package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// A namespace is an organization's when the platform says so: it labels the
// namespace <keyDomain>/organization=<organization>, a label only the
// platform may set (the cluster's namespace policy). A claim lists which of
// its organization's namespaces each stack's pods run in; a namespace it
// lists that the platform has not given it gets nothing.
//
// Every namespace an organization serves holds a ConfigMap of a fixed name,
// composed by the organization's XR. It tells the namespace's teams, with the
// namespace's own RBAC, what their pods carry; a second XR that lists the
// namespace finds the ConfigMap held and is refused, as for any name kiso
// would otherwise adopt.

// configMapData is the field of a ConfigMap that holds its entries.
const configMapData = "data"

// placementConfigMapName names the ConfigMap in each namespace.
const placementConfigMapName = "kiso-placement"

var (
	namespaceGVK = corev1.SchemeGroupVersion.WithKind("Namespace")
	configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	roleGVK      = rbacv1.SchemeGroupVersion.WithKind("Role")
)

func placementConfigMapResourceName(namespace string) resource.Name {
	return resource.Name("placement-configmap-" + namespace)
}

// namespacesOf returns the namespaces a stack's pods run in: those listed, or
// <organization>-<stack> by default.
func namespacesOf(organization string, s v1alpha1.Stack) []string {
	if len(s.Namespaces) > 0 {
		return s.Namespaces
	}
	return []string{defaultNamespace(organization, s.Name)}
}

func defaultNamespace(organization, stack string) string {
	return organization + "-" + stack
}

// specNamespace is one namespace of the spec and where the spec lists it:
// in stacks[stack].namespaces[index], or, with index -1, as the stack's
// default namespace.
type specNamespace struct {
	Name         string
	Stack        string
	stack, index int
}

// Path is the field that lists the namespace; a stack's default namespace is
// reported at the stack's namespaces field. It is built only for an error:
// the spec's namespaces are listed many times in a call.
func (ns specNamespace) Path() *field.Path {
	p := field.NewPath("spec", "stacks").Index(ns.stack).Child("namespaces")
	if ns.index < 0 {
		return p
	}
	return p.Index(ns.index)
}

// specNamespaces lists every namespace of the spec, in spec order. A stack
// without namespaces has its default one.
func specNamespaces(spec v1alpha1.XKarpenterIsolationSpec) []specNamespace {
	var out []specNamespace
	for i, s := range spec.Stacks {
		if len(s.Namespaces) == 0 {
			out = append(out, specNamespace{Name: defaultNamespace(spec.Organization, s.Name), Stack: s.Name, stack: i, index: -1})
			continue
		}
		for j, ns := range s.Namespaces {
			out = append(out, specNamespace{Name: ns, Stack: s.Name, stack: i, index: j})
		}
	}
	return out
}

// Limits on namespaces keep an organization's desired state well inside the
// 4 MiB gRPC message Crossplane receives from a function (a test renders the
// largest organization each allows): about 2 KB per namespace (its
// ConfigMap, its entries in the admission policies and the status).
const (
	maxNamespaces        = 1000
	maxStackedNamespaces = 600
)

// namespaceLimit is how many namespaces an organization may serve.
func namespaceLimit(isolation v1alpha1.IsolationMode) int {
	if isolation == v1alpha1.IsolationStack {
		return maxStackedNamespaces
	}
	return maxNamespaces
}

// reservedNamespacePrefix is the prefix Kubernetes reserves for its system
// namespaces (kube-system, kube-public, kube-node-lease).
const reservedNamespacePrefix = "kube-"

// validateNamespaceCount refuses more namespaces than an organization may serve.
func validateNamespaceCount(path *field.Path, spec v1alpha1.XKarpenterIsolationSpec) field.ErrorList {
	if n, limit := len(specNamespaces(spec)), namespaceLimit(spec.Isolation); n > limit {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("the stacks list %d namespaces; an organization serves at most %d in %s isolation", n, limit, spec.Isolation))}
	}
	return nil
}

// validateStackNamespaces checks one stack's namespaces, at path (its
// namespaces field): each a valid name outside Kubernetes' own, and none
// another stack already listed (namespaceOf, which it extends). defaultValid
// says the organization and stack names are valid, so the default namespace
// they make can be checked.
func validateStackNamespaces(path *field.Path, organization string, s v1alpha1.Stack, defaultValid bool, namespaceOf map[string]string) field.ErrorList {
	var errs field.ErrorList
	switch {
	case len(s.Namespaces) > 0:
		for j, ns := range s.Namespaces {
			errs = append(errs, dnsLabel(path.Index(j), ns)...)
		}
	case defaultValid:
		// Both parts are valid, yet <organization>-<stack> can be too long.
		def := defaultNamespace(organization, s.Name)
		for _, msg := range validation.IsDNS1123Label(def) {
			errs = append(errs, field.Invalid(path, def, "the default namespace <organization>-<name> is not a valid namespace ("+msg+"); list the stack's namespaces"))
		}
	}
	for j, ns := range namespacesOf(organization, s) {
		if strings.HasPrefix(ns, reservedNamespacePrefix) {
			errs = append(errs, field.Invalid(path.Index(j), ns, "the kube- prefix is reserved for Kubernetes system namespaces, whose pods must never depend on a tenant's pool"))
		}
		if other, taken := namespaceOf[ns]; taken {
			errs = append(errs, field.Invalid(path.Index(j), ns, fmt.Sprintf("namespace already belongs to stack %q; a namespace's pods can run in one stack's pool only", other)))
			continue
		}
		namespaceOf[ns] = s.Name
	}
	return errs
}

// plannedNamespaceObjects lists the placement ConfigMap and Role of every
// namespace of the spec the platform gives the organization, for the
// ownership check: a Role kiso-placement that kiso did not compose is never
// taken over. A namespace not given gets nothing, so whatever it holds is
// none of this organization's business (another's grant, in a namespace the
// platform gave another).
func plannedNamespaceObjects(spec v1alpha1.XKarpenterIsolationSpec, given map[string]bool) []ownership.Object {
	nss := specNamespaces(spec)
	out := make([]ownership.Object, 0, 2*len(given))
	for _, ns := range nss {
		if !given[ns.Name] {
			continue
		}
		out = append(out,
			ownership.Object{Resource: placementConfigMapResourceName(ns.Name), GVK: configMapGVK, Namespace: ns.Name, Name: placementConfigMapName},
			ownership.Object{Resource: placementRoleResourceName(ns.Name), GVK: roleGVK, Namespace: ns.Name, Name: placement.Name})
	}
	return out
}

// unassignedNamespaces lists the spec's namespaces the platform has not
// given the organization (they may not exist yet): their pods get no grant.
func unassignedNamespaces(spec v1alpha1.XKarpenterIsolationSpec, assigned map[string]bool) []string {
	var out []string
	for _, ns := range specNamespaces(spec) {
		if !assigned[ns.Name] {
			out = append(out, ns.Name)
		}
	}
	return out
}

// unlistedNamespaces lists the namespaces the platform gives the organization
// that no stack lists (usually the claim's own) and does not exempt: they get
// no grant, so admission refuses every pod in them, whatever the placement
// mode.
func unlistedNamespaces(spec v1alpha1.XKarpenterIsolationSpec, given givenSet) []string {
	listed := map[string]bool{}
	for _, ns := range specNamespaces(spec) {
		listed[ns.Name] = true
	}
	var out []string
	for ns := range given.Namespaces {
		if !listed[ns] && !given.Exempt[ns] {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}

// A heldObject is a namespace's ConfigMap or Role kiso-placement whose name
// something kiso did not compose for this XR holds: an object a tenant
// created there (a tenant may delete kiso's and create its own, controlled by
// its own Deployment), or the grant of the organization the platform gave the
// namespace before, until that XR lets go. No tenant may stop the platform
// from changing its organization, so the organization composes everything
// else and says on the claim who holds the name; it composes the object once
// the name is free. A held Role leaves the namespace without its grant, and
// the policies refuse its pods: the grant fails closed.
type heldObject struct {
	Resource  resource.Name
	Namespace string
	Kind      string
	// Holder says who holds the name, as a user reads it.
	Holder string
}

func (h heldObject) String() string {
	msg := fmt.Sprintf("%s %s/%s is held by %s, not composed by this organization: kiso composes it once the name is free", h.Kind, h.Namespace, placement.Name, h.Holder)
	if h.Kind == roleGVK.Kind {
		msg += "; until then the namespace's pods are refused (its placement grant is missing)"
	}
	return msg
}

// namespaceConflicts sorts the objects that hold names the organization
// needs: a namespace's ConfigMap or Role held by something else is held
// (composed once free, reported meanwhile); any other conflict refuses the
// XR. Another XR holding the organization explains every other conflict: it
// holds the organization's pools and namespaces too.
func namespaceConflicts(spec v1alpha1.XKarpenterIsolationSpec, conflicts []ownership.Conflict, keys placement.Keys) (refused []string, held []heldObject) {
	for _, c := range conflicts {
		if c.Planned.Resource == organizationLockResource {
			return []string{organizationConflict(spec, c.Holder)}, nil
		}
	}
	listed := map[string]bool{}
	for _, ns := range specNamespaces(spec) {
		listed[ns.Name] = true
	}
	for _, c := range conflicts {
		if c.Planned.GVK != configMapGVK && c.Planned.GVK != roleGVK || !listed[c.Planned.Namespace] {
			refused = append(refused, c.String())
			continue
		}
		held = append(held, heldObject{Resource: c.Planned.Resource, Namespace: c.Planned.Namespace, Kind: c.Planned.GVK.Kind, Holder: holderOf(c.Holder, keys)})
	}
	return refused, held
}

// holderOf names who holds a namespace object: its controller, and the
// organization when that controller is an organization's XR. Labels alone
// say nothing: a tenant who takes kiso's object keeps them.
func holderOf(holder *unstructured.Unstructured, keys placement.Keys) string {
	owner := metav1.GetControllerOf(holder)
	if owner == nil {
		return "an object without a controller"
	}
	who := fmt.Sprintf("%s %s", owner.Kind, owner.Name)
	if org := holder.GetLabels()[keys.Organization]; org != "" && owner.Kind == v1alpha1.IsolationKind {
		return fmt.Sprintf("organization %q (%s)", org, who)
	}
	return who
}

// placementConfigMaps renders the ConfigMap of each namespace the platform
// gives the organization, from what the status tells its stack.
func placementConfigMaps(spec v1alpha1.XKarpenterIsolationSpec, stacks []v1alpha1.StackStatus, assigned map[string]bool, keys placement.Keys) (map[resource.Name]*composed.Unstructured, error) {
	byName := make(map[string]v1alpha1.StackStatus, len(stacks))
	for _, s := range stacks {
		byName[s.Name] = s
	}
	out := map[resource.Name]*composed.Unstructured{}
	for _, ns := range specNamespaces(spec) {
		if !assigned[ns.Name] {
			continue
		}
		s := byName[ns.Stack]
		selector, err := json.Marshal(s.NodeSelector)
		if err != nil {
			return nil, errors.Wrap(err, "cannot encode a node selector")
		}
		tolerations, err := json.Marshal(s.Tolerations)
		if err != nil {
			return nil, errors.Wrap(err, "cannot encode tolerations")
		}
		u := composed.New()
		u.Object = objectMap("v1", "ConfigMap", placementConfigMapName, ns.Name,
			map[string]any{placement.ManagedByLabel: placement.ManagedByValue, keys.Organization: spec.Organization, keys.Stack: ns.Stack})
		u.Object[configMapData] = map[string]any{
			"organization": spec.Organization,
			"stack":        ns.Stack,
			"pool":         s.Pool,
			"nodeSelector": string(selector),
			"tolerations":  string(tolerations),
		}
		out[placementConfigMapResourceName(ns.Name)] = u
	}
	return out, nil
}
