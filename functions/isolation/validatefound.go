package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Validating what was found, in one place: the spec errors that only show
// once Crossplane has returned what the spec names (validateFound).

// referenceLabel marks a NodeClass or NodePool the platform lets tenants clone.
func referenceLabel(keys placement.Keys) string { return keys.Domain + "/reference" }

// validateReferences refuses a reference the platform did not mark: a
// NodePool or NodeClass is the platform's, and one it never meant for
// tenants (a privileged role, another team's subnets) must not be cloned.
func validateReferences(spec v1alpha1.XKarpenterIsolationSpec, found lookup, in Input, keys placement.Keys) field.ErrorList {
	var errs field.ErrorList
	for _, r := range referencesNamed(spec, found) {
		listed := in.References.NodeClasses
		if r.Kind == nodePoolKind {
			listed = in.References.NodePools
		}
		if r.Obj.GetLabels()[referenceLabel(keys)] == "true" || slices.Contains(listed, r.Obj.GetName()) {
			continue
		}
		errs = append(errs, field.Forbidden(r.Path, fmt.Sprintf("%s %q is not a reference: a platform marks the %ss tenants may clone with the label %s: \"true\" (or lists them in the function input)",
			r.Kind, r.Obj.GetName(), r.Kind, referenceLabel(keys))))
	}
	return errs
}

// namedReference is a reference object a class of the spec names, found, with the field that names it.
type namedReference struct {
	Path *field.Path
	Kind string
	Obj  *unstructured.Unstructured
}

// referencesNamed lists, class by class, the reference NodeClass and NodePool the spec names that Crossplane
// returned: what the platform's marks on a reference (validateReferences, validateAllowances) are checked on.
func referencesNamed(spec v1alpha1.XKarpenterIsolationSpec, found lookup) []namedReference {
	var out []namedReference
	for _, c := range classesOf(spec) {
		path, pair := classPath(c), found.pair(c)
		if pair.NodeClass != nil {
			out = append(out, namedReference{path.Child("nodeClassRef", "name"), c.NodeClassRef.Kind, pair.NodeClass})
		}
		if pair.NodePool != nil {
			out = append(out, namedReference{path.Child("nodePoolRef", "name"), nodePoolKind, pair.NodePool})
		}
	}
	return out
}

// validateAgainstReferences returns spec errors that only show once the
// reference NodePool and the pools already composed are known.
func (r *call) validateAgainstReferences() field.ErrorList {
	spec, found := r.Spec, r.found
	if errs := validateReferenceShapes(spec, found); len(errs) > 0 {
		return errs
	}
	sp := field.NewPath("spec")
	errs := validateStaticReferences(spec, found)
	errs = append(errs, validateKarpenterNamespace(r.namespaces, found.Cluster)...)

	// Only a cluster whose controller may pass per-organization roles can
	// host a Dedicated one.
	if spec.NodeRole == v1alpha1.NodeRoleDedicated && found.Cluster != nil && found.Cluster.Status.NodeRolePath == "" {
		errs = append(errs, field.Forbidden(sp.Child("nodeRole"), fmt.Sprintf("%s %q uses an existing instance profile and its controller may pass that one role only; use Shared", v1alpha1.ClusterKind, found.Cluster.Name)))
	}
	return append(errs, validateNodeClassKinds(spec, r.pools, r.view)...)
}

// validateStaticReferences refuses what Karpenter refuses on a static NodePool (spec.replicas): any limit but
// limits.nodes, and a weight; say so on the claim rather than fail every clone's apply.
func validateStaticReferences(spec v1alpha1.XKarpenterIsolationSpec, found lookup) field.ErrorList {
	var errs field.ErrorList
	for _, c := range classesOf(spec) {
		np := found.pair(c).NodePool
		if _, static, _ := unstructured.NestedFieldNoCopy(np.Object, "spec", "replicas"); !static {
			continue
		}
		check := func(p *field.Path, s *v1alpha1.PoolSettings) {
			if s == nil {
				return
			}
			if s.Weight != nil {
				errs = append(errs, field.Forbidden(p.Child("weight"), fmt.Sprintf("reference NodePool %q is static (spec.replicas); Karpenter allows no weight on it", np.GetName())))
			}
			for _, k := range slices.Sorted(maps.Keys(s.Limits)) {
				if k != nodesResource {
					errs = append(errs, field.Forbidden(p.Child("limits").Key(k), fmt.Sprintf("reference NodePool %q is static (spec.replicas); Karpenter allows only limits.nodes on it", np.GetName())))
				}
			}
		}
		check(classPath(c).Child("pool"), c.Pool)
		if c.Name != "" {
			continue
		}
		for i := range spec.Stacks {
			check(field.NewPath("spec", "stacks").Index(i).Child("pool"), spec.Stacks[i].Pool)
		}
	}
	return errs
}

// validateNodeClassKinds refuses a change of a NodePool's nodeClassRef group or kind, which Karpenter forbids: a
// pool the spec renders keeps its class's, and one it no longer renders (kept until its replacement is Ready)
// the kind of one of the spec's classes.
func validateNodeClassKinds(spec v1alpha1.XKarpenterIsolationSpec, pools []pool, observed fnstate.Observed) field.ErrorList {
	var errs field.ErrorList
	classes := classesOf(spec)
	classOf := map[resource.Name]capacityClass{}
	for _, p := range pools {
		classOf[nodePoolResourceName(p)] = p.Class
	}
	for _, name := range observed.Names() {
		if h, _ := observed.Head(name); h.GVK.Kind != nodePoolKind {
			continue
		}
		oc, _ := observed.Get(name)
		got, ok := observedNodeClassRef(oc)
		if !ok {
			continue
		}
		c, planned := classOf[name]
		if !planned && slices.ContainsFunc(classes, func(c capacityClass) bool { return nodeClassGVK(c.NodeClassRef).GroupKind() == got }) {
			continue
		}
		if !planned {
			c = classes[0]
		}
		if got != nodeClassGVK(c.NodeClassRef).GroupKind() {
			errs = append(errs, field.Forbidden(classPath(c).Child("nodeClassRef"), fmt.Sprintf("NodePool %q uses a %s and Karpenter forbids changing a NodePool's NodeClass kind; remove the organization's pools first or keep %s", oc.Resource.GetName(), got, got)))
		}
	}
	return errs
}

// validateFound refuses what only shows once what the spec names has been fetched: the references, the
// cluster, the namespaces the platform gives the organization and the claim's own namespace. Nothing is
// judged before everything is found.
func (r *call) validateFound() bool {
	if r.found.Unresolved() {
		return true
	}
	errs := r.validateAgainstReferences()
	errs = append(errs, validateReferences(r.Spec, r.found, r.In, r.keys)...)
	errs = append(errs, validateAllowances(r.Spec, r.found, r.keys)...)
	errs = append(errs, validatePlatformNamespaces(r.namespaces, r.found, r.keys)...)
	if !r.Valid(append(errs, validateClaimedOrganization(r.Spec, r.claim, r.found, r.keys)...)) {
		return false
	}
	r.Spec.Limits = withCeiling(r.Spec.Limits, r.found.Cluster)
	return true
}

// validateKarpenterNamespace refuses the namespace Karpenter's controller
// runs in: Karpenter's own pods must never need a tenant's pool to start.
func validateKarpenterNamespace(namespaces []specNamespace, c *boundCluster) field.ErrorList {
	if c == nil || c.Spec.Karpenter.Namespace == "" {
		return nil
	}
	var errs field.ErrorList
	for _, ns := range namespaces {
		if ns.Name == c.Spec.Karpenter.Namespace {
			errs = append(errs, field.Invalid(ns.Path(), ns.Name, fmt.Sprintf("Karpenter's controller runs in this namespace (%s %q)", v1alpha1.ClusterKind, c.Name)))
		}
	}
	return errs
}

// validatePlatformNamespaces refuses namespaces whose pods are the
// platform's: placement exempts them, so no organization may hold one.
func validatePlatformNamespaces(namespaces []specNamespace, found lookup, keys placement.Keys) field.ErrorList {
	var errs field.ErrorList
	for _, ns := range namespaces {
		if why := platformNamespace(ns.Name, found.Placement, found.Exempt, keys); why != "" {
			errs = append(errs, field.Invalid(ns.Path(), ns.Name, why))
		}
	}
	return errs
}

// platformNamespace says why a namespace is the platform's, or "". The kube-
// prefix is refused with the spec's other static checks.
func platformNamespace(ns string, cp *v1alpha1.PlacementPolicyStatus, exempt map[string]bool, keys placement.Keys) string {
	switch {
	case ns == "default":
		return "the default namespace is every user's: no organization may hold it"
	case exempt[ns]:
		return "the platform labels this namespace " + placement.ExemptLabel(keys.Domain) + ": its pods are exempt from placement"
	case cp != nil && slices.Contains(cp.PlatformNamespaces, ns):
		return fmt.Sprintf("a platform namespace of XKarpenterCluster %q (%s): its pods are exempt from placement", cp.Cluster, strings.Join(cp.PlatformNamespaces, ", "))
	}
	return ""
}

// validateClaimedOrganization refuses a claim whose namespace the platform
// has not given the organization it claims.
func validateClaimedOrganization(spec v1alpha1.XKarpenterIsolationSpec, claim claimOf, found lookup, keys placement.Keys) field.ErrorList {
	given := found.Namespaces[claim.Namespace]
	if found.ClaimNamespaceGiven != nil {
		given = *found.ClaimNamespaceGiven
	}
	if claim.Namespace == "" || given {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "organization"), fmt.Sprintf(
		"the claim's namespace %s is not organization %q's: a claim may claim only the organization the platform labels its namespace with (%s=%s)",
		claim.Namespace, spec.Organization, keys.Organization, spec.Organization))}
}
