package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/aws"
	"github.com/kiso-dev/kiso/functions/internal/placement"
	"github.com/kiso-dev/kiso/functions/internal/rollout"
)

// Patterns and enums of Karpenter v1's NodePool CRD, as the XRD declares them, checked here so a bad value
// fails on the claim, naming the claim's field, rather than as an apply error on a composed NodePool.
var (
	expireAfter            = regexp.MustCompile(v1alpha1.PatternPoolSettingsExpireAfter)
	terminationGracePeriod = regexp.MustCompile(v1alpha1.PatternPoolSettingsTerminationGracePeriod)
	consolidateAfter       = regexp.MustCompile(v1alpha1.PatternDisruptionConsolidateAfter)
	budgetNodes            = regexp.MustCompile(v1alpha1.PatternBudgetNodes)
	budgetDuration         = regexp.MustCompile(v1alpha1.PatternBudgetDuration)
	nodeClassKind          = regexp.MustCompile(v1alpha1.PatternNodeClassReferenceKind)
	consolidationEnum      = v1alpha1.EnumDisruptionConsolidationPolicy
	budgetReasonEnum       = v1alpha1.ItemEnumBudgetReasons
)

// validate refuses a spec kiso cannot render, each error naming its field, and stops, saying so on the
// claim, while the API server refuses Crossplane something this XR needs: Crossplane alone would only tell the
// XR.
func (r *call) validate() bool {
	return r.Valid(validateSpec(r.Spec, r.keys)) && !r.Refused()
}

// validateSpec returns every problem with the spec, each naming its field.
// The spec has had defaults applied.
func validateSpec(spec v1alpha1.XKarpenterIsolationSpec, keys placement.Keys) field.ErrorList {
	sp := field.NewPath("spec")
	var errs field.ErrorList

	orgErrs := dnsLabel(sp.Child("organization"), spec.Organization)
	errs = append(errs, orgErrs...)
	if spec.Customer != "" {
		for _, msg := range validation.IsValidLabelValue(spec.Customer) {
			errs = append(errs, field.Invalid(sp.Child("customer"), spec.Customer, msg))
		}
	}
	mode := spec.Isolation
	if mode != v1alpha1.IsolationOrganization && mode != v1alpha1.IsolationStack {
		errs = append(errs, field.NotSupported(sp.Child("isolation"), mode,
			v1alpha1.EnumXKarpenterIsolationSpecIsolation))
	}

	errs = append(errs, validateStacks(sp.Child("stacks"), spec, len(orgErrs) == 0)...)
	errs = append(errs, validateNodeClassRef(sp.Child("nodeClassRef"), spec.NodeClassRef)...)
	errs = append(errs, dnsSubdomain(sp.Child("nodePoolRef", "name"), spec.NodePoolRef.Name)...)
	if spec.Pool != nil {
		errs = append(errs, validatePool(sp.Child("pool"), *spec.Pool)...)
	}
	errs = append(errs, validateClasses(sp.Child("classes"), spec)...)
	errs = append(errs, validateLimits(sp, spec)...)
	errs = append(errs, validateTags(sp.Child("tags"), spec, keys)...)
	errs = append(errs, validateNodeRole(sp, spec)...)
	errs = append(errs, validatePlacement(sp.Child("placement"), spec.Placement)...)
	return errs
}

// validatePlacement checks what the XRD's schema checks too, for a spec no API server has seen (make render).
func validatePlacement(path *field.Path, p *v1alpha1.Placement) field.ErrorList {
	if p == nil {
		return nil
	}
	switch p.Mode {
	case v1alpha1.PlacementEnforce:
	case v1alpha1.PlacementWarn:
		if !p.Enforced() {
			return field.ErrorList{field.Invalid(path.Child("mode"), p.Mode, "mode Warn needs enforce true: with enforce false no pool is required of the organization's pods, so there is nothing to warn about")}
		}
	default:
		return field.ErrorList{field.NotSupported(path.Child("mode"), p.Mode, v1alpha1.EnumPlacementMode)}
	}
	return nil
}

func validateNodeRole(sp *field.Path, spec v1alpha1.XKarpenterIsolationSpec) field.ErrorList {
	var errs field.ErrorList
	switch spec.NodeRole {
	case v1alpha1.NodeRoleShared:
	case v1alpha1.NodeRoleDedicated:
		if spec.ClusterRef == nil {
			errs = append(errs, field.Required(sp.Child("clusterRef"), "a Dedicated node role is created in the cluster's AWS account, under its node-role path"))
		}
		if !isEC2NodeClass(spec.NodeClassRef) {
			errs = append(errs, field.Forbidden(sp.Child("nodeRole"), fmt.Sprintf("a Dedicated node role needs an EC2NodeClass; %s has no IAM identity", spec.NodeClassRef.Kind)))
		}
		for i, c := range spec.Classes {
			if !isEC2NodeClass(c.NodeClassRef) {
				errs = append(errs, field.Forbidden(sp.Child("classes").Index(i).Child("nodeClassRef", "kind"), fmt.Sprintf("a Dedicated node role needs an EC2NodeClass for every class; %s has no IAM identity", c.NodeClassRef.Kind)))
			}
		}
	default:
		errs = append(errs, field.NotSupported(sp.Child("nodeRole"), spec.NodeRole, v1alpha1.EnumXKarpenterIsolationSpecNodeRole))
	}
	if spec.ClusterRef != nil {
		errs = append(errs, dnsSubdomain(sp.Child("clusterRef", "name"), spec.ClusterRef.Name)...)
	}
	return errs
}

// Limits on stacks keep an organization's desired state well inside the 4 MiB
// gRPC message Crossplane receives from a function (a test renders the
// largest organization each allows): about 7 KB per stack in stack isolation
// (its pool and Usages). Namespaces have limits of their own (namespaces.go).
const (
	maxStacks        = v1alpha1.MaxItemsXKarpenterIsolationSpecStacks
	maxStackedStacks = v1alpha1.MaxStackedStacks
)

func validateStacks(path *field.Path, spec v1alpha1.XKarpenterIsolationSpec, organizationValid bool) field.ErrorList {
	var errs field.ErrorList
	switch {
	case len(spec.Stacks) > maxStacks:
		errs = append(errs, field.TooMany(path, len(spec.Stacks), maxStacks))
	case spec.Isolation == v1alpha1.IsolationStack && len(spec.Stacks) > maxStackedStacks:
		errs = append(errs, field.TooMany(path, len(spec.Stacks), maxStackedStacks))
	}
	errs = append(errs, validateNamespaceCount(path, spec)...)
	seen := map[string]bool{} // stack names, to find duplicates
	namespaceOf := namespaceOwners{}
	for i, s := range spec.Stacks {
		p := path.Index(i)
		nameErrs := dnsLabel(p.Child("name"), s.Name)
		errs = append(errs, nameErrs...)
		if seen[s.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), s.Name))
			continue
		}
		seen[s.Name] = true
		errs = append(errs, namespaceOf.validateStackNamespaces(p.Child("namespaces"), spec.Organization, s, organizationValid && len(nameErrs) == 0)...)
		errs = append(errs, validateStackClasses(p.Child("classes"), spec, s)...)
		if s.Pool == nil {
			continue
		}
		if spec.Isolation != v1alpha1.IsolationStack {
			errs = append(errs, field.Forbidden(p.Child("pool"), "per-stack pool settings need spec.isolation: stack; in organization isolation every stack shares the pool set by spec.pool"))
			continue
		}
		errs = append(errs, validatePool(p.Child("pool"), *s.Pool)...)
	}
	if spec.Isolation == v1alpha1.IsolationStack && len(spec.Stacks) <= maxStackedStacks {
		if pools := stackedPools(spec); pools > maxStackedStacks {
			errs = append(errs, field.Invalid(path, pools, fmt.Sprintf("stack isolation renders a pool per stack and per class each stack uses: %d pools, at most %d fit one organization's desired state", pools, maxStackedStacks)))
		}
	}
	return errs
}

// stackedPools counts the pools of stack isolation: one per stack, and one per class it uses.
func stackedPools(spec v1alpha1.XKarpenterIsolationSpec) int {
	n := 0
	for _, s := range spec.Stacks {
		n += 1 + len(stackClasses(spec, s))
	}
	return n
}

// validateStackClasses checks the classes a stack names: each a class of spec.classes, once, and only in stack
// isolation, where a stack has pools of its own.
func validateStackClasses(path *field.Path, spec v1alpha1.XKarpenterIsolationSpec, s v1alpha1.Stack) field.ErrorList {
	if s.Classes == nil {
		return nil
	}
	if spec.Isolation != v1alpha1.IsolationStack {
		return field.ErrorList{field.Forbidden(path, "per-stack classes need spec.isolation: stack; in organization isolation every stack shares the organization's pool of each class")}
	}
	var errs field.ErrorList
	if len(s.Classes) > maxClasses {
		errs = append(errs, field.TooMany(path, len(s.Classes), maxClasses))
	}
	names := make([]string, 0, len(spec.Classes))
	for _, c := range spec.Classes {
		if !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	seen := map[string]bool{}
	for j, name := range s.Classes {
		switch {
		case seen[name]:
			errs = append(errs, field.Duplicate(path.Index(j), name))
		case !slices.Contains(names, name):
			errs = append(errs, field.NotSupported(path.Index(j), name, names))
		}
		seen[name] = true
	}
	return errs
}

// maxClasses bounds an organization's classes: each is a pool more per stack in stack isolation.
const maxClasses = v1alpha1.MaxItemsXKarpenterIsolationSpecClasses

// validateClasses checks each class of capacity: a unique DNS-1123 label other than the default class's name,
// a reference pair, and its pool settings.
func validateClasses(path *field.Path, spec v1alpha1.XKarpenterIsolationSpec) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Classes) > maxClasses {
		errs = append(errs, field.TooMany(path, len(spec.Classes), maxClasses))
	}
	seen := map[string]bool{}
	for i, c := range spec.Classes {
		p := path.Index(i)
		nameErrs := dnsLabel(p.Child("name"), c.Name)
		errs = append(errs, nameErrs...)
		switch {
		case len(nameErrs) > 0:
		case c.Name == v1alpha1.DefaultClassName:
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, v1alpha1.DefaultClassName+" names the class spec.nodeClassRef and spec.nodePoolRef give"))
		case seen[c.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		seen[c.Name] = true
		errs = append(errs, validateNodeClassRef(p.Child("nodeClassRef"), c.NodeClassRef)...)
		errs = append(errs, dnsSubdomain(p.Child("nodePoolRef", "name"), c.NodePoolRef.Name)...)
		if c.Pool != nil {
			errs = append(errs, validatePool(p.Child("pool"), *c.Pool)...)
		}
	}
	return errs
}

// validateLimits checks the organization's limits, and that no pool's own limit is above one: the
// organization's would make it meaningless, and it is most likely a typo.
func validateLimits(sp *field.Path, spec v1alpha1.XKarpenterIsolationSpec) field.ErrorList {
	var errs field.ErrorList
	limits := map[string]resource.Quantity{}
	for _, k := range slices.Sorted(maps.Keys(spec.Limits)) {
		v := spec.Limits[k]
		q, err := resource.ParseQuantity(v.String())
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(sp.Child("limits").Key(k), v.String(), "must be a quantity, e.g. 100 or 400Gi"))
		case q.Sign() < 0:
			errs = append(errs, field.Invalid(sp.Child("limits").Key(k), v.String(), "must not be negative"))
		default:
			limits[k] = q
		}
	}
	if len(limits) == 0 {
		return errs
	}
	check := func(p *field.Path, s *v1alpha1.PoolSettings) {
		if s == nil {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(s.Limits)) {
			v := s.Limits[k]
			org, bounded := limits[k]
			q, err := resource.ParseQuantity(v.String())
			if bounded && err == nil && q.Cmp(org) > 0 {
				errs = append(errs, field.Invalid(p.Child("limits").Key(k), v.String(), fmt.Sprintf("above the organization's limit (spec.limits.%s: %s), which bounds all its pools together", k, org.String())))
			}
		}
	}
	check(sp.Child("pool"), spec.Pool)
	for i, s := range spec.Stacks {
		check(sp.Child("stacks").Index(i).Child("pool"), s.Pool)
	}
	for i, c := range spec.Classes {
		check(sp.Child("classes").Index(i).Child("pool"), c.Pool)
	}
	return errs
}

func validateNodeClassRef(path *field.Path, ref v1alpha1.NodeClassReference) field.ErrorList {
	errs := dnsSubdomain(path.Child("name"), ref.Name)
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	switch {
	case err != nil:
		errs = append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, err.Error()))
	case gv.Group == "" || gv.Version == "":
		errs = append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, "must be group/version, e.g. karpenter.k8s.aws/v1"))
	case gv.Group == karpenterGroup:
		errs = append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, "karpenter.sh holds NodePools and NodeClaims, not NodeClasses"))
	}
	if !nodeClassKind.MatchString(ref.Kind) {
		errs = append(errs, field.Invalid(path.Child("kind"), ref.Kind, "must be a Karpenter NodeClass kind, e.g. EC2NodeClass"))
	}
	return errs
}

func validatePool(path *field.Path, pool v1alpha1.PoolSettings) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(pool.Limits)) {
		v := pool.Limits[k]
		if _, err := resource.ParseQuantity(v.String()); err != nil {
			errs = append(errs, field.Invalid(path.Child("limits").Key(k), v.String(), "must be a quantity, e.g. 100 or 400Gi"))
		}
	}
	if pool.ExpireAfter != "" && !expireAfter.MatchString(pool.ExpireAfter) {
		errs = append(errs, field.Invalid(path.Child("expireAfter"), pool.ExpireAfter, "must be a duration like 720h or 24h30m, or Never"))
	}
	if pool.TerminationGracePeriod != "" && !terminationGracePeriod.MatchString(pool.TerminationGracePeriod) {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriod"), pool.TerminationGracePeriod, "must be a duration like 48h or 30m"))
	}
	if w := pool.Weight; w != nil && (*w < v1alpha1.MinimumPoolSettingsWeight || *w > v1alpha1.MaximumPoolSettingsWeight) {
		errs = append(errs, field.Invalid(path.Child("weight"), *w, fmt.Sprintf("must be between %d and %d", v1alpha1.MinimumPoolSettingsWeight, v1alpha1.MaximumPoolSettingsWeight)))
	}
	if d := pool.Disruption; d != nil {
		errs = append(errs, validateDisruption(path.Child("disruption"), *d)...)
	}
	return errs
}

func validateDisruption(path *field.Path, d v1alpha1.Disruption) field.ErrorList {
	var errs field.ErrorList
	if d.ConsolidationPolicy != "" && !slices.Contains(consolidationEnum, d.ConsolidationPolicy) {
		errs = append(errs, field.NotSupported(path.Child("consolidationPolicy"), d.ConsolidationPolicy, consolidationEnum))
	}
	if d.ConsolidateAfter != "" && !consolidateAfter.MatchString(d.ConsolidateAfter) {
		errs = append(errs, field.Invalid(path.Child("consolidateAfter"), d.ConsolidateAfter, "must be a duration like 30s or 5m, or Never"))
	}
	for i, b := range d.Budgets {
		p := path.Child("budgets").Index(i)
		if !budgetNodes.MatchString(b.Nodes) {
			errs = append(errs, field.Invalid(p.Child("nodes"), b.Nodes, "must be a node count like 5 or a percentage like 10%"))
		}
		if (b.Schedule == "") != (b.Duration == "") {
			errs = append(errs, field.Invalid(p, b.Schedule+" "+b.Duration, "schedule and duration must be set together"))
		}
		if b.Duration != "" && !budgetDuration.MatchString(b.Duration) {
			errs = append(errs, field.Invalid(p.Child("duration"), b.Duration, "must be hours and minutes, e.g. 8h or 1h30m"))
		}
		for j, r := range b.Reasons {
			if !slices.Contains(budgetReasonEnum, r) {
				errs = append(errs, field.NotSupported(p.Child("reasons").Index(j), r, budgetReasonEnum))
			}
		}
	}
	return errs
}

// validateTags refuses tags AWS, Karpenter or kiso itself reserve. Only
// EC2NodeClasses carry tags.
func validateTags(path *field.Path, spec v1alpha1.XKarpenterIsolationSpec, keys placement.Keys) field.ErrorList {
	if len(spec.Tags) == 0 {
		return nil
	}
	if !slices.ContainsFunc(classesOf(spec), func(c capacityClass) bool { return isEC2NodeClass(c.NodeClassRef) }) {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("tags apply only to EC2NodeClass; %s has no tags", spec.NodeClassRef.Kind))}
	}
	errs := aws.ValidateTags(path, spec.Tags)
	for _, k := range slices.Sorted(maps.Keys(spec.Tags)) {
		switch {
		case rollout.ReservedTag(k):
			errs = append(errs, field.Forbidden(path.Key(k), "Karpenter sets this tag itself and its EC2NodeClass refuses it"))
		case slices.Contains(keys.Managed(), k):
			errs = append(errs, field.Forbidden(path.Key(k), "kiso sets this tag from the organization, stack and customer"))
		}
	}
	return errs
}

func dnsLabel(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(path, v, msg))
	}
	return errs
}

func dnsSubdomain(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(v) {
		errs = append(errs, field.Invalid(path, v, msg))
	}
	return errs
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
	n := 0
	for _, s := range spec.Stacks {
		n += max(1, len(s.Namespaces))
	}
	if limit := namespaceLimit(spec.Isolation); n > limit {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("the stacks list %d namespaces; an organization serves at most %d in %s isolation", n, limit, spec.Isolation))}
	}
	return nil
}

// namespaceOwners are the namespaces the stacks listed so far, each with the stack that listed it first.
type namespaceOwners map[string]string

// validateStackNamespaces checks one stack's namespaces, at path (its
// namespaces field): each a valid name outside Kubernetes' own, and none
// another stack already listed (namespaceOf, which it extends). defaultValid
// says the organization and stack names are valid, so the default namespace
// they make can be checked.
func (namespaceOf namespaceOwners) validateStackNamespaces(path *field.Path, organization string, s v1alpha1.Stack, defaultValid bool) field.ErrorList {
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
