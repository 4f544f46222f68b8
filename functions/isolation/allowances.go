package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// What the platform allows an organization. Where tenants apply their own claims, a claim is what its tenant
// wrote: the platform says which references an organization may clone (on each reference: which organizations
// may) and the most it may ask for in spec.limits (on the cluster, for every organization bound to it). Both are
// objects only the platform writes: references are cluster-scoped, and so is the cluster.

// organizationsAnnotation on a reference NodeClass or NodePool lists, comma-separated, the organizations that
// may clone it; a reference without it is every organization's.
func organizationsAnnotation(keys placement.Keys) string { return keys.Domain + "/organizations" }

// validateAllowances refuses a reference the platform keeps for other organizations, and a limit above the
// ceiling the organization's cluster sets (spec.organizationLimits).
func validateAllowances(spec v1alpha1.XKarpenterIsolationSpec, found lookup, keys placement.Keys) field.ErrorList {
	var errs field.ErrorList
	for _, r := range referencesNamed(spec, found) {
		allowed, reserved := r.Obj.GetAnnotations()[organizationsAnnotation(keys)]
		if !reserved || slices.Contains(placement.SplitList(strings.ReplaceAll(allowed, " ", "")), spec.Organization) {
			continue
		}
		errs = append(errs, field.Forbidden(r.Path, fmt.Sprintf("%s %q is the platform's for organizations %s only (its annotation %s), not for %s",
			r.Kind, r.Obj.GetName(), allowed, organizationsAnnotation(keys), spec.Organization)))
	}
	if found.Cluster == nil {
		return errs
	}
	ceiling := found.Cluster.Spec.OrganizationLimits
	for _, name := range slices.Sorted(maps.Keys(spec.Limits)) {
		most, capped := ceiling[name]
		if !capped {
			continue
		}
		limit := spec.Limits[name]
		asked, errAsked := k8sresource.ParseQuantity(limit.String())
		ceil, errCeil := k8sresource.ParseQuantity(most.String())
		if errAsked != nil || errCeil != nil || asked.Cmp(ceil) <= 0 {
			continue
		}
		errs = append(errs, field.Invalid(field.NewPath("spec", "limits").Key(name), limit.String(),
			fmt.Sprintf("more than the %s %s %q allows an organization (its spec.organizationLimits)", most.String(), v1alpha1.ClusterKind, found.Cluster.Name)))
	}
	return errs
}

// withCeiling is spec.limits with the cluster's ceiling for each resource the spec leaves unlimited: an
// organization that asks for no limit gets the most its cluster allows.
func withCeiling(limits map[string]intstr.IntOrString, c *boundCluster) map[string]intstr.IntOrString {
	if c == nil || len(c.Spec.OrganizationLimits) == 0 {
		return limits
	}
	out := maps.Clone(limits)
	if out == nil {
		out = map[string]intstr.IntOrString{}
	}
	for name, most := range c.Spec.OrganizationLimits {
		if _, set := out[name]; !set {
			out[name] = most
		}
	}
	return out
}
