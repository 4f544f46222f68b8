package main

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
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

// unlistedNamespaces lists the namespaces the platform gives the organization
// that no stack lists (usually the claim's own) and does not exempt: they get
// no grant, so admission refuses every pod in them, whatever the placement
// mode.
func unlistedNamespaces(namespaces []specNamespace, given givenSet) []string {
	listed := map[string]bool{}
	for _, ns := range namespaces {
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
