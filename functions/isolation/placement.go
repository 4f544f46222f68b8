package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// Placement is enforced at admission, for every pod: taints and tolerations
// alone are self-service (any pod may tolerate any taint), and patching
// Deployments misses Jobs and pods created before a change.

// exemptLabel on a namespace exempts its pods from an organization's
// placement policies; tenants cannot label namespaces, platforms can.
func exemptLabel(keys Keys) string { return keys.Domain + "/placement-exempt" }

// placementPolicyName names an organization's admission policies; it is
// unique per organization as pool names are.
func placementPolicyName(organization string) string { return poolName(organization, "") }

// placementEnforced reports whether the validating policy is rendered.
func placementEnforced(spec v1alpha1.XKarpenterIsolationSpec) bool {
	return spec.Placement == nil || spec.Placement.Enforce == nil || *spec.Placement.Enforce
}

// placementInjected reports whether the mutating policy is rendered.
func placementInjected(spec v1alpha1.XKarpenterIsolationSpec) bool {
	return spec.Placement != nil && spec.Placement.Inject
}

// placement holds what the policies need to know about an organization.
type placement struct {
	Organization string
	Stacked      bool
	Keys         Keys
	// Namespaces maps each of the organization's namespaces to its stack and pool.
	Namespaces map[string]stackPool
}

type stackPool struct{ Stack, Pool string }

func newPlacement(spec v1alpha1.XKarpenterIsolationSpec, pools []pool, keys Keys) placement {
	pl := placement{Organization: spec.Organization, Stacked: spec.Isolation == v1alpha1.IsolationStack, Keys: keys, Namespaces: map[string]stackPool{}}
	poolOf := map[string]string{}
	for _, p := range pools {
		for _, s := range p.Stacks {
			poolOf[s] = p.Name
		}
	}
	for _, s := range spec.Stacks {
		for _, ns := range namespacesOf(spec.Organization, s) {
			pl.Namespaces[ns] = stackPool{Stack: s.Name, Pool: poolOf[s.Name]}
		}
	}
	return pl
}

// celMap renders a CEL map literal from namespace to value, keys sorted so
// the policy is byte-identical for the same spec.
func (pl placement) celMap(value func(stackPool) string) string {
	nss := make([]string, 0, len(pl.Namespaces))
	for ns := range pl.Namespaces {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	entries := make([]string, 0, len(nss))
	for _, ns := range nss {
		entries = append(entries, strconv.Quote(ns)+": "+strconv.Quote(value(pl.Namespaces[ns])))
	}
	return "{" + strings.Join(entries, ", ") + "}"
}

// CEL shared by both policies. Variables are evaluated lazily and once.
func (pl placement) variables() []admissionv1.Variable {
	return []admissionv1.Variable{
		{Name: "stacks", Expression: pl.celMap(func(sp stackPool) string { return sp.Stack })},
		{Name: "pools", Expression: pl.celMap(func(sp stackPool) string { return sp.Pool })},
		{Name: "inOrganization", Expression: "request.namespace in variables.stacks"},
		{Name: "nodeSelector", Expression: "has(object.spec.nodeSelector) ? object.spec.nodeSelector : {}"},
		{Name: "tolerations", Expression: "has(object.spec.tolerations) ? object.spec.tolerations : []"},
	}
}

// selectsOwnPool is true when a pod selects its stack's pool by identity keys.
func (pl placement) selectsOwnPool() string {
	q := strconv.Quote
	expr := fmt.Sprintf("(%[1]s in variables.nodeSelector && variables.nodeSelector[%[1]s] == %[2]s)", q(pl.Keys.Organization), q(pl.Organization))
	if pl.Stacked {
		expr += fmt.Sprintf(" && (%[1]s in variables.nodeSelector && variables.nodeSelector[%[1]s] == variables.stacks[request.namespace])", q(pl.Keys.Stack))
	}
	return expr
}

// tolerates is true when a pod tolerates the organization's taint, by its
// key and value or by a wildcard.
func (pl placement) tolerates() string {
	q := strconv.Quote
	return fmt.Sprintf("variables.tolerations.exists(t, "+
		"(has(t.operator) && t.operator == 'Exists' && (!has(t.key) || t.key == '' || t.key == %[1]s)) || "+
		"(has(t.key) && t.key == %[1]s && has(t.value) && t.value == %[2]s))", q(pl.Keys.Organization), q(pl.Organization))
}

// selectsOrganization is true when a pod asks for the organization's nodes by
// node selector or by a required node affinity on the organization key.
func (pl placement) selectsOrganization() string {
	q := strconv.Quote
	return fmt.Sprintf("(%[1]s in variables.nodeSelector && variables.nodeSelector[%[1]s] == %[2]s) || "+
		"(has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity) && "+
		"has(object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) && "+
		"object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.exists(term, "+
		"has(term.matchExpressions) && term.matchExpressions.exists(e, e.key == %[1]s)))", q(pl.Keys.Organization), q(pl.Organization))
}

// wantMessage tells a rejected pod exactly what to add.
func (pl placement) wantMessage() string {
	q := func(s string) string { return "'" + s + "'" }
	msg := q("pods in namespace ") + " + request.namespace + " + q(" run on pool ") + " + variables.pools[request.namespace] + " +
		q(": add nodeSelector "+pl.Keys.Organization+"="+pl.Organization)
	if pl.Stacked {
		msg += " + " + q(", "+pl.Keys.Stack+"=") + " + variables.stacks[request.namespace]"
	}
	msg += " + " + q(" and tolerations "+pl.Keys.Organization+"="+pl.Organization+":"+taintEffect)
	if pl.Stacked {
		msg += " + " + q(", "+pl.Keys.Stack+"=") + " + variables.stacks[request.namespace] + " + q(":"+taintEffect)
	}
	return msg
}

var podRules = func(ops ...admissionv1.OperationType) admissionv1.MatchResources {
	return admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		},
	}}}
}

// exemptNamespaces leaves out namespaces the platform labels exempt.
func exemptNamespaces(keys Keys) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: exemptLabel(keys), Operator: metav1.LabelSelectorOpDoesNotExist}}}
}

// daemonSetControllerUsers are who the DaemonSet controller creates pods as:
// its own service account with --use-service-account-credentials (the
// default of kubeadm and EKS), else the controller manager's identity.
var daemonSetControllerUsers = []string{"system:serviceaccount:kube-system:daemon-set-controller", "system:kube-controller-manager"}

// validatingPolicy rejects a pod of the organization that does not select its
// own pool, and a pod elsewhere that tolerates or selects the organization.
// Pods the DaemonSet controller creates are exempt from the second rule:
// per-node agents must run on every node, tenant nodes included.
func validatingPolicy(pl placement) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	name := placementPolicyName(pl.Organization)
	rules := podRules(admissionv1.Create, admissionv1.Update)
	vars := append(pl.variables(), admissionv1.Variable{
		Name: "daemonSetPod",
		// Anyone may write a DaemonSet owner reference into a pod; only the
		// DaemonSet controller creates pods as itself.
		Expression: "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, r.kind == 'DaemonSet') && " +
			"request.userInfo.username in ['" + strings.Join(daemonSetControllerUsers, "', '") + "']",
	})
	q := func(s string) string { return "'" + s + "'" }
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: &rules,
			Variables:        vars,
			Validations: []admissionv1.Validation{
				{
					Expression:        "!variables.inOrganization || (" + pl.selectsOwnPool() + ")",
					MessageExpression: pl.wantMessage(),
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: "variables.inOrganization || variables.daemonSetPod || !(" + pl.tolerates() + ")",
					MessageExpression: q("pods outside organization "+pl.Organization+" must not tolerate its taint "+pl.Keys.Organization+"="+pl.Organization+
						" (nor every taint): remove that toleration from the pod in namespace ") + " + request.namespace",
					Reason: ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: "variables.inOrganization || !(" + pl.selectsOrganization() + ")",
					MessageExpression: q("pods outside organization "+pl.Organization+" must not select its nodes ("+pl.Keys.Organization+"): remove that node selector or affinity from the pod in namespace ") +
						" + request.namespace",
					Reason: ptr.To(metav1.StatusReasonForbidden),
				},
			},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources:    &admissionv1.MatchResources{NamespaceSelector: exemptNamespaces(pl.Keys)},
		},
	}
	return policy, binding
}

// mutatingPolicy adds the node selector and tolerations to the organization's
// pods. It only adds what is missing, so a pod that already carries them is
// left unchanged and applying it twice changes nothing.
func mutatingPolicy(pl placement) (*admissionv1beta1.MutatingAdmissionPolicy, *admissionv1beta1.MutatingAdmissionPolicyBinding) {
	name := placementPolicyName(pl.Organization) + "-inject"
	q := strconv.Quote
	// A selector key the pod already sets is left as it is: a pod that asks
	// for another pool is refused by the validating policy, not silently
	// moved.
	selector := func(key, value string) string {
		return fmt.Sprintf("(%[1]s in variables.nodeSelector ? [] : [JSONPatch{op: 'add', path: '/spec/nodeSelector/' + jsonpatch.escapeKey(%[1]s), value: %[2]s}])", q(key), value)
	}
	patches := []string{
		"(has(object.spec.nodeSelector) ? [] : [JSONPatch{op: 'add', path: '/spec/nodeSelector', value: {}}])",
		selector(pl.Keys.Organization, q(pl.Organization)),
	}
	if pl.Stacked {
		patches = append(patches, selector(pl.Keys.Stack, "variables.stacks[request.namespace]"))
	}
	patches = append(patches, "(has(object.spec.tolerations) ? [] : [JSONPatch{op: 'add', path: '/spec/tolerations', value: []}])")
	toleration := func(key, value string) string {
		return fmt.Sprintf("(variables.tolerations.exists(t, has(t.key) && t.key == %[1]s && has(t.value) && t.value == %[2]s && has(t.effect) && t.effect == %[3]s) ? [] : "+
			"[JSONPatch{op: 'add', path: '/spec/tolerations/-', value: Object.spec.tolerations{key: %[1]s, operator: 'Equal', value: %[2]s, effect: %[3]s}}])",
			q(key), value, q(taintEffect))
	}
	patches = append(patches, toleration(pl.Keys.Organization, q(pl.Organization)))
	if pl.Stacked {
		patches = append(patches, toleration(pl.Keys.Stack, "variables.stacks[request.namespace]"))
	}

	rules := podRules(admissionv1.Create)
	vars := make([]admissionv1beta1.Variable, 0, 5)
	for _, v := range pl.variables() {
		vars = append(vars, admissionv1beta1.Variable{Name: v.Name, Expression: v.Expression})
	}
	policy := &admissionv1beta1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1beta1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1beta1.MutatingAdmissionPolicySpec{
			FailurePolicy:      ptr.To(admissionv1beta1.Fail),
			ReinvocationPolicy: admissionv1beta1.IfNeededReinvocationPolicy,
			MatchConstraints:   toV1beta1Match(rules),
			MatchConditions:    []admissionv1beta1.MatchCondition{{Name: "organization-namespace", Expression: "request.namespace in " + pl.celMap(func(sp stackPool) string { return sp.Stack })}},
			Variables:          vars,
			Mutations: []admissionv1beta1.Mutation{{
				PatchType: admissionv1beta1.PatchTypeJSONPatch,
				JSONPatch: &admissionv1beta1.JSONPatch{Expression: strings.Join(patches, " +\n")},
			}},
		},
	}
	binding := &admissionv1beta1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1beta1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1beta1.MutatingAdmissionPolicyBindingSpec{
			PolicyName:     name,
			MatchResources: &admissionv1beta1.MatchResources{NamespaceSelector: exemptNamespaces(pl.Keys)},
		},
	}
	return policy, binding
}

func toV1beta1Match(m admissionv1.MatchResources) *admissionv1beta1.MatchResources {
	out := &admissionv1beta1.MatchResources{}
	for _, r := range m.ResourceRules {
		out.ResourceRules = append(out.ResourceRules, admissionv1beta1.NamedRuleWithOperations{RuleWithOperations: r.RuleWithOperations})
	}
	return out
}

// renderPlacement renders the admission policies the spec asks for.
func renderPlacement(spec v1alpha1.XKarpenterIsolationSpec, pools []pool, keys Keys) (map[resource.Name]*composed.Unstructured, error) {
	pl := newPlacement(spec, pools, keys)
	objects := map[resource.Name]runtime.Object{}
	if placementEnforced(spec) {
		objects[resourcePlacementPolicy], objects[resourcePlacementBinding] = validatingPolicy(pl)
	}
	if placementInjected(spec) {
		objects[resourcePlacementInjectPolicy], objects[resourcePlacementInjectBinding] = mutatingPolicy(pl)
	}
	out := make(map[resource.Name]*composed.Unstructured, len(objects))
	for name, o := range objects {
		cd, err := typed.Composed(o)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot convert %s", name)
		}
		cd.SetLabels(map[string]string{managedByLabel: managedByValue, keys.Organization: spec.Organization})
		out[name] = cd
	}
	return out, nil
}
