package main

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
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
func placementRoles(spec v1alpha1.XKarpenterIsolationSpec, stacks []v1alpha1.StackStatus, served []specNamespace, keys placement.Keys) map[resource.Name]*composed.Unstructured {
	poolOf := make(map[string]string, len(stacks))
	for _, s := range stacks {
		poolOf[s.Name] = s.Pool
	}
	out := map[resource.Name]*composed.Unstructured{}
	for _, ns := range served {
		g := namespaceGrants(spec, ns.Stack, poolOf[ns.Stack])
		rules := []any{grantRule(placement.Tolerations, placement.VerbUse, g.Tolerations), grantRule(placement.Pools, placement.VerbSelect, g.Select)}
		if len(g.Warn) > 0 {
			rules = append(rules, grantRule(placement.Pools, placement.VerbWarn, g.Warn))
		}
		if len(g.Inject) > 0 {
			rules = append(rules, grantRule(placement.Pools, placement.VerbInject, g.Inject))
		}
		role := composed.New()
		role.Object = objectMap(metav1.TypeMeta{APIVersion: rbacAPIVersion, Kind: roleKind}, placement.Name, ns.Name,
			map[string]any{placement.ManagedByLabel: placement.ManagedByValue, keys.Organization: spec.Organization, keys.Stack: ns.Stack})
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
	ReasonClusterAudits        = "ClusterAudits"
	ReasonGrantsPending        = "GrantsPending"
	ReasonInjected             = "Injected"
	ReasonInjectionUnavailable = "InjectionUnavailable"
)

// Condition type and reasons of the namespaces the platform gives.
const (
	// TypeNamespacesAssigned says whether the platform gives the
	// organization every namespace its stacks list.
	TypeNamespacesAssigned = "NamespacesAssigned"

	ReasonAssigned    = "Assigned"
	ReasonNotAssigned = "NotAssigned"

	// TypeNamespacesListed says whether a stack lists every namespace the
	// platform gives the organization for its workloads: one no stack lists
	// has no grant, so admission refuses its pods. The claim's own namespace,
	// which the platform gives so that the claim may claim the organization,
	// holds the claim: unlisted, it is named but does not make it False.
	TypeNamespacesListed = "NamespacesListed"

	ReasonAllListed      = "AllListed"
	ReasonGivenNotListed = "GivenNotListed"
	// ReasonClaimNamespaceUnlisted: every namespace given is listed but the claim's own.
	ReasonClaimNamespaceUnlisted = "ClaimNamespaceUnlisted"
)

// placementConfigMaps renders the ConfigMap of each namespace served, from what the status tells its stack.
func placementConfigMaps(spec v1alpha1.XKarpenterIsolationSpec, stacks []v1alpha1.StackStatus, served []specNamespace, keys placement.Keys) (map[resource.Name]*composed.Unstructured, error) {
	byName := make(map[string]v1alpha1.StackStatus, len(stacks))
	for _, s := range stacks {
		byName[s.Name] = s
	}
	out := map[resource.Name]*composed.Unstructured{}
	for _, ns := range served {
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
		u.Object = objectMap(metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, placementConfigMapName, ns.Name,
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

// renderPlacement adds the placement Role and ConfigMap of each namespace the platform gives the organization.
func (r *call) renderPlacement(objects map[resource.Name]*composed.Unstructured) error {
	for name, o := range placementRoles(r.Spec, r.stacks, r.served, r.keys) {
		objects[name] = o
	}
	configMaps, err := placementConfigMaps(r.Spec, r.stacks, r.served, r.keys)
	if err != nil {
		return err
	}
	for name, o := range configMaps {
		objects[name] = o
	}
	return nil
}
