package main

import (
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// The policies on the other doors to a pod's placement: a pod's binding to a node, a namespace's organization and
// exemption labels, and the injection of a granted pool's node selector and tolerations into a new pod.

// bindingPolicy refuses a pod binding (pods/binding, which names the node a
// pod runs on and so skips the taints) outside platform namespaces unless
// the platform's scheduler makes it, or a user the platform grants create on
// bindings.placement.kiso.dev.
func (pp placementPlan) bindingPolicy() (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   validatingPolicyType,
		ObjectMeta: metav1.ObjectMeta{Name: placement.BindingPolicyName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: coreMatch(podBinders, admissionv1.Create),
			MatchConditions: []admissionv1.MatchCondition{
				{Name: "not-a-scheduler", Expression: "!(request.userInfo.username in " + celList(pp.Schedulers) + ")"},
			},
			Validations: []admissionv1.Validation{{
				Expression: fmt.Sprintf("authorizer.group(%s).resource(%s).namespace(request.namespace).check(%s).allowed()", cq(placement.Group), cq(placement.Bindings), cq(placement.VerbCreate)),
				MessageExpression: "'' + request.userInfo.username + ' may not bind pod ' + request.namespace + '/' + request.name + ' to node ' + object.target.name + " +
					"': a binding skips the taints that keep organizations apart, so outside platform namespaces only the platform\\'s schedulers (" + strings.Join(pp.Schedulers, ", ") +
					") bind pods; the platform grants others create on " + placement.Bindings + "." + placement.Group + "'",
				Reason: ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	return policy, pp.binding(placement.BindingPolicyName, nil, pp.outsidePlatform())
}

// namespacePolicy lets only the platform set, change or remove a
// namespace's organization and exemption labels, through the namespace or
// either subresource that writes them, and create a namespace whose name
// exempts it: who holds label on namespaces.placement.kiso.dev
// (cluster-admin does). A platform namespace is exempt by its name, and a
// name is anyone's who creates it first (no crossplane-system exists in a
// workload cluster); kube-system always exists. Its binding selects every
// namespace: a namespace selector would be matched against the very labels
// being set.
func (pp placementPlan) namespacePolicy() (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	identity := celList([]string{pp.OrganizationKey, placement.ExemptLabel(pp.KeyDomain)})
	platformOnly := fmt.Sprintf("authorizer.group(%s).resource(%s).name(object.metadata.name).check(%s).allowed()",
		cq(placement.Group), cq(placement.Namespaces), cq(placement.VerbLabel))
	exemptByName := pp.namesExemptByName()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   validatingPolicyType,
		ObjectMeta: metav1.ObjectMeta{Name: placement.NamespacePolicyName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: coreMatch(namespaceWriters, admissionv1.Create, admissionv1.Update),
			Variables: []admissionv1.Variable{
				{Name: "labels", Expression: "has(object.metadata.labels) ? object.metadata.labels : {}"},
				{Name: "old", Expression: "request.operation == 'UPDATE' && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}"},
				{Name: "changed", Expression: identity + ".filter(k, (k in variables.labels) != (k in variables.old) || (k in variables.labels && variables.labels[k] != variables.old[k]))"},
			},
			Validations: []admissionv1.Validation{
				{
					Expression: "size(variables.changed) == 0 || " + platformOnly,
					MessageExpression: "'only the platform may set, change or remove ' + variables.changed.join(', ') + ' on namespace ' + object.metadata.name + " +
						"': they say which organization the namespace is and whether placement exempts it (the platform holds " + placement.VerbLabel + " on " + placement.Namespaces + "." + placement.Group + ")'",
					Reason: ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: "request.operation != 'CREATE' || !(object.metadata.name in " + celList(exemptByName) + ") || " + platformOnly,
					MessageExpression: "'only the platform may create namespace ' + object.metadata.name + ': placement exempts it by its name (a platform namespace of cluster " + pp.Cluster + ": " +
						strings.Join(exemptByName, ", ") + "), so its pods could tolerate and select any organization\\'s nodes (the platform holds " + placement.VerbLabel + " on " + placement.Namespaces + "." + placement.Group + ")'",
					Reason: ptr.To(metav1.StatusReasonForbidden),
				},
			},
		},
	}
	return policy, pp.binding(placement.NamespacePolicyName, nil, nil)
}

// namesExemptByName are the platform namespaces a user could create: every
// one but those Kubernetes creates itself.
func (pp placementPlan) namesExemptByName() []string {
	return slices.DeleteFunc(slices.Clone(pp.PlatformNamespaces), func(ns string) bool { return slices.Contains(alwaysPlatformNamespaces, ns) })
}

// injectPolicy adds the node selector and tolerations of the pool the
// namespace's Role names for injection, only where missing: a pod that
// already carries them is left unchanged, and one that asks for another pool
// is refused by the pools policy, not silently moved.
func (pp placementPlan) injectPolicy() (*admissionv1beta1.MutatingAdmissionPolicy, *admissionv1beta1.MutatingAdmissionPolicyBinding) {
	org, stack := cq(pp.OrganizationKey), cq(pp.StackKey)
	nodeOrg, nodeStack := cq(pp.NodeOrganizationKey), cq(pp.NodeStackKey)
	selector := func(key, value string) string {
		return fmt.Sprintf("(%[1]s in variables.nodeSelector ? [] : [JSONPatch{op: 'add', path: '/spec/nodeSelector/' + jsonpatch.escapeKey(%[1]s), value: %[2]s}])", key, value)
	}
	toleration := func(key, value string) string {
		return fmt.Sprintf("(variables.tolerations.exists(t, has(t.key) && t.key == %[1]s && has(t.value) && t.value == %[2]s && has(t.effect) && t.effect == 'NoSchedule') ? [] : "+
			"[JSONPatch{op: 'add', path: '/spec/tolerations/-', value: Object.spec.tolerations{key: %[1]s, operator: 'Equal', value: %[2]s, effect: 'NoSchedule'}}])", key, value)
	}
	patches := []string{
		"(has(object.spec.nodeSelector) ? [] : [JSONPatch{op: 'add', path: '/spec/nodeSelector', value: {}}])",
		selector(nodeOrg, "variables.organization"),
		"(variables.stack == '' ? [] : " + selector(nodeStack, "variables.stack") + ")",
		"(has(object.spec.tolerations) ? [] : [JSONPatch{op: 'add', path: '/spec/tolerations', value: []}])",
		toleration(org, "variables.organization"),
		"(variables.stack == '' ? [] : " + toleration(stack, "variables.stack") + ")",
	}
	// A Role a tenant emptied reaches a MutatingAdmissionPolicy with rules: null, which has() lets through:
	// the condition must not fail on it (the pools policy refuses the pod, saying why).
	// A Role the pools policy does not trust may inject: that policy refuses the pod after.
	inject := "has(params.rules) && type(params.rules) == list && params.rules.exists(r, " + poolsRule(placement.VerbInject) + " && size(r.resourceNames) > 0)"
	policy := &admissionv1beta1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1beta1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: placement.InjectPolicyName},
		Spec: admissionv1beta1.MutatingAdmissionPolicySpec{
			FailurePolicy:      ptr.To(admissionv1beta1.Fail),
			ReinvocationPolicy: admissionv1beta1.IfNeededReinvocationPolicy,
			ParamKind:          &admissionv1beta1.ParamKind{APIVersion: roleKind.APIVersion, Kind: roleKind.Kind},
			MatchConstraints: &admissionv1beta1.MatchResources{ResourceRules: []admissionv1beta1.NamedRuleWithOperations{{
				RuleWithOperations: podsMatch(admissionv1.Create).ResourceRules[0].RuleWithOperations,
			}}},
			MatchConditions: []admissionv1beta1.MatchCondition{{Name: "injects", Expression: inject}},
			Variables: []admissionv1beta1.Variable{
				{Name: varNodeSelector, Expression: celNodeSelector},
				{Name: "tolerations", Expression: "has(object.spec.tolerations) ? object.spec.tolerations : []"},
				{Name: "pool", Expression: "params.rules.filter(r, " + poolsRule(placement.VerbInject) + ")[0].resourceNames[0]"},
				{Name: "organization", Expression: "variables.pool.split('.')[0]"},
				{Name: "stack", Expression: "size(variables.pool.split('.')) > 1 ? variables.pool.split('.')[1] : ''"},
			},
			Mutations: []admissionv1beta1.Mutation{{
				PatchType: admissionv1beta1.PatchTypeJSONPatch,
				JSONPatch: &admissionv1beta1.JSONPatch{Expression: strings.Join(patches, " +\n")},
			}},
		},
	}
	binding := &admissionv1beta1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1beta1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: placement.InjectPolicyName},
		Spec: admissionv1beta1.MutatingAdmissionPolicyBindingSpec{
			PolicyName:     placement.InjectPolicyName,
			ParamRef:       &admissionv1beta1.ParamRef{Name: placement.Name, ParameterNotFoundAction: ptr.To(admissionv1beta1.AllowAction)},
			MatchResources: &admissionv1beta1.MatchResources{NamespaceSelector: pp.organizationNamespaces()},
		},
	}
	return policy, binding
}
