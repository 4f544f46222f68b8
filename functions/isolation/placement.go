package main

import (
	"fmt"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// Placement is enforced at admission, for every pod, by the admission
// policies an XKarpenterCluster composes once for the whole cluster (see the
// cluster function). Which organization a namespace is, they read from its
// label, which the platform sets. What else they need to know lives in each
// namespace the organization holds: a Role kiso-placement, their parameter,
// that grants
//   - use of tolerations "o" and "o.s": the namespace's pods may tolerate the
//     organization's and their stack's taints;
//   - select of pools "o" or "o.s": the pool its pods must select ("*" when
//     spec.placement.enforce is false), and while a retired pool is kept,
//     that one too;
//   - inject of the pool whose selector and tolerations admission adds
//     (spec.placement.inject).
// RBAC lets only who holds a permission grant it, so a tenant who may edit
// Roles in its namespace cannot write this one; if it deletes or empties it,
// the policies refuse the namespace's pods until Crossplane restores it.

// placementEnforced reports whether the organization's pods must select its pools.
func placementEnforced(spec v1alpha1.XKarpenterIsolationSpec) bool {
	return spec.Placement.Enforced()
}

// placementInjected reports whether admission adds the pools' selector and tolerations.
func placementInjected(spec v1alpha1.XKarpenterIsolationSpec) bool {
	return spec.Placement != nil && spec.Placement.Inject
}

// The RBAC API of the Role.
const (
	rbacGroup      = "rbac.authorization.k8s.io"
	rbacAPIVersion = rbacGroup + "/v1"
	roleKind       = "Role"
)

func placementRoleResourceName(namespace string) resource.Name {
	return resource.Name("placement-role-" + namespace)
}

// grants are what a namespace's Role grants.
type grants struct {
	Tolerations []string
	Select      []string
	Warn        []string
	Inject      []string
	Pool        string
}

func namespaceGrants(spec v1alpha1.XKarpenterIsolationSpec, stack, pool string) grants {
	g := grants{Tolerations: []string{spec.Organization, placement.GrantName(spec.Organization, stack)}, Pool: pool}
	own := spec.Organization
	if spec.Isolation == v1alpha1.IsolationStack {
		own = placement.GrantName(spec.Organization, stack)
	}
	g.Select = []string{placement.AnyPool}
	switch {
	case spec.Placement.Warned():
		// Admission lets the pods run anywhere, and warns those that would be refused.
		g.Warn = []string{own}
	case placementEnforced(spec):
		g.Select = []string{own}
	}
	if placementInjected(spec) {
		g.Inject = []string{own}
	}
	return g
}

func grantRule(resource, verb string, names []string) map[string]any {
	rn := make([]any, 0, len(names))
	for _, n := range names {
		rn = append(rn, n)
	}
	return map[string]any{"apiGroups": []any{placement.Group}, "resources": []any{resource}, "verbs": []any{verb}, "resourceNames": rn}
}

// placementRoles renders, in each namespace the platform gives the
// organization, the Role the cluster's admission policies read. It depends
// on nothing a tenant can delete: a namespace keeps its grant as long as
// the platform's label and the spec say so.
func placementRoles(spec v1alpha1.XKarpenterIsolationSpec, stacks []v1alpha1.StackStatus, assigned map[string]bool, keys placement.Keys) map[resource.Name]*composed.Unstructured {
	poolOf := make(map[string]string, len(stacks))
	for _, s := range stacks {
		poolOf[s.Name] = s.Pool
	}
	out := map[resource.Name]*composed.Unstructured{}
	for _, ns := range specNamespaces(spec) {
		if !assigned[ns.Name] {
			continue
		}
		g := namespaceGrants(spec, ns.Stack, poolOf[ns.Stack])
		rules := []any{grantRule(placement.Tolerations, placement.VerbUse, g.Tolerations), grantRule(placement.Pools, placement.VerbSelect, g.Select)}
		if len(g.Warn) > 0 {
			rules = append(rules, grantRule(placement.Pools, placement.VerbWarn, g.Warn))
		}
		if len(g.Inject) > 0 {
			rules = append(rules, grantRule(placement.Pools, placement.VerbInject, g.Inject))
		}
		role := composed.New()
		role.Object = objectMap(rbacAPIVersion, roleKind, placement.Name, ns.Name,
			map[string]any{ownership.ManagedByLabel: ownership.ManagedByValue, keys.Organization: spec.Organization, keys.Stack: ns.Stack})
		role.Object["metadata"].(map[string]any)["annotations"] = map[string]any{placement.PoolAnnotation: g.Pool}
		role.Object["rules"] = rules
		out[placementRoleResourceName(ns.Name)] = role
	}
	return out
}

// Condition types and reasons of placement.
const (
	// TypePlacementEnforced says whether admission holds the organization's
	// pods to its pools and other pods off its nodes.
	TypePlacementEnforced = "PlacementEnforced"
	// TypePlacementInjected says, when spec.placement.inject is true,
	// whether admission adds the pools' selector and tolerations.
	TypePlacementInjected = "PlacementInjected"

	ReasonEnforced             = "Enforced"
	ReasonEnforcementOff       = "EnforcementOff"
	ReasonWarnOnly             = "WarnOnly"
	ReasonNoPlacementPolicy    = "NoPlacementPolicy"
	ReasonKeyDomainMismatch    = "KeyDomainMismatch"
	ReasonGrantsPending        = "GrantsPending"
	ReasonInjected             = "Injected"
	ReasonInjectionUnavailable = "InjectionUnavailable"
)

type condition struct {
	Type, Reason, Message string
	OK                    bool
}

// pendingGrants lists the namespaces given to the organization whose Role
// is not there yet: until it is, admission refuses every pod there.
func pendingGrants(spec v1alpha1.XKarpenterIsolationSpec, observed fnstate.Observed, assigned map[string]bool) []string {
	var out []string
	for _, ns := range specNamespaces(spec) {
		if assigned[ns.Name] && !observed.Has(placementRoleResourceName(ns.Name)) {
			out = append(out, ns.Name)
		}
	}
	return out
}

// maxListed bounds how many namespaces a condition names.
const maxListed = 10

// listed names up to maxListed items, and how many more there are.
func listed(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxListed], ", "), len(items)-maxListed)
}

// placementConditions say what admission enforces for the organization:
// True only once the policies and every grant they read are there.
func placementConditions(spec v1alpha1.XKarpenterIsolationSpec, cp *clusterPlacement, pending []string, keys placement.Keys) []condition {
	var enforced condition
	switch {
	case cp == nil:
		enforced = condition{Reason: ReasonNoPlacementPolicy, Message: "no XKarpenterCluster composes the admission policy " + placement.PolicyName +
			" in this cluster: nothing keeps other pods off this organization's nodes, nor its pods on its pools"}
	case cp.KeyDomain != keys.Domain:
		enforced = condition{Reason: ReasonKeyDomainMismatch, Message: fmt.Sprintf("the admission policy %s of XKarpenterCluster %q checks keys of domain %s, this organization's nodes are tainted %s: "+
			"set the same keyDomain in both functions' inputs", placement.PolicyName, cp.Cluster, cp.KeyDomain, keys.Organization)}
	case len(pending) > 0:
		enforced = condition{Reason: ReasonGrantsPending, Message: "waiting for Crossplane to compose the Role " + placement.Name + " in namespaces " + listed(pending) +
			": until it is there, admission refuses every pod in them"}
	case !placementEnforced(spec):
		enforced = condition{Reason: ReasonEnforcementOff, Message: "spec.placement.enforce is false: pods in the organization's namespaces may run outside its pools; other pods are still kept off its nodes"}
	case spec.Placement.Warned():
		enforced = condition{Reason: ReasonWarnOnly, Message: fmt.Sprintf("spec.placement.mode is Warn: the admission policies of XKarpenterCluster %q admit a pod of the organization's namespaces "+
			"that does not select its pool, with the refusal Enforce would give as a warning and an audit annotation (policy %s); other pods are still kept off its nodes", cp.Cluster, placement.WarnPolicyName)}
	default:
		enforced = condition{OK: true, Reason: ReasonEnforced, Message: fmt.Sprintf("the admission policies of XKarpenterCluster %q hold the organization's pods to its pools and other pods off its nodes", cp.Cluster)}
	}
	enforced.Type = TypePlacementEnforced
	out := make([]condition, 0, 2)
	out = append(out, enforced)
	if !placementInjected(spec) {
		return out
	}
	injected := condition{Type: TypePlacementInjected, Reason: ReasonInjectionUnavailable}
	switch {
	case cp == nil || !enforced.OK && enforced.Reason != ReasonEnforcementOff && enforced.Reason != ReasonWarnOnly && enforced.Reason != ReasonGrantsPending:
		injected.Message = "spec.placement.inject: " + enforced.Message
	case cp.InjectAPIVersion == "":
		injected.Message = fmt.Sprintf("spec.placement.inject: XKarpenterCluster %q says the apiserver serves no MutatingAdmissionPolicy (its function input sets no mutatingAdmissionPolicy), so nothing is injected: "+
			"pods must carry the nodeSelector and tolerations in status.stacks. Kubernetes 1.36+ serves admissionregistration.k8s.io/v1; 1.34 and 1.35 serve v1beta1 "+
			"with --feature-gates=MutatingAdmissionPolicy=true and --runtime-config=admissionregistration.k8s.io/v1beta1=true", cp.Cluster)
	default:
		injected = condition{Type: TypePlacementInjected, OK: true, Reason: ReasonInjected, Message: "MutatingAdmissionPolicy " + placement.InjectPolicyName + " (" + cp.InjectAPIVersion + ") adds the pools' nodeSelector and tolerations where a pod lacks them"}
	}
	return append(out, injected)
}

// Condition type and reasons of the namespaces the platform gives.
const (
	// TypeNamespacesAssigned says whether the platform gives the
	// organization every namespace its stacks list.
	TypeNamespacesAssigned = "NamespacesAssigned"

	ReasonAssigned    = "Assigned"
	ReasonNotAssigned = "NotAssigned"

	// TypeNamespacesListed says whether a stack lists every namespace the
	// platform gives the organization: one no stack lists has no grant, so
	// admission refuses its pods.
	TypeNamespacesListed = "NamespacesListed"

	ReasonAllListed      = "AllListed"
	ReasonGivenNotListed = "GivenNotListed"
)
