package main

import (
	"fmt"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// The policies on pods: the outsiders' policy (no pod outside the platform names a node, tolerates every taint
// or tolerates an organization whose namespace it is not in), the pools policy and its Warn-mode twin (a pod of
// an organization's namespace selects a pool the namespace's Role grants), and what they read of that Role.

// policy is the outsiders' policy: every pod, CREATE and UPDATE. An UPDATE
// is only checked for what it changes of the pod's placement: the
// tolerations it adds (any pod's update may add some; none of a stack,
// whose grant is read at creation), and the node selection of a gated pod,
// which Kubernetes lets an update narrow. Label changes, finalizer removal
// and pods that predate a policy are never refused. Whose a namespace is comes from
// its label, so every check is a comparison: a pod costs the same whatever
// it carries and however many organizations there are.
func (pp placementPlan) policy() (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	org, stack := cq(pp.OrganizationKey), cq(pp.StackKey)
	selectorKeys := celList([]string{pp.OrganizationKey, pp.NodeOrganizationKey})
	onKey := func(key string) string {
		return "variables.added.filter(t, has(t.key) && t.key == " + key + " && !" + celExists + " && " + celSchedules + ").map(t, has(t.value) ? t.value : '')"
	}
	vars := []admissionv1.Variable{
		{Name: "tolerations", Expression: "has(object.spec.tolerations) ? object.spec.tolerations : []"},
		// Tolerations this request adds: all of them at CREATE.
		{Name: "added", Expression: "request.operation == 'UPDATE' && has(oldObject.spec.tolerations) ? variables.tolerations.filter(t, !(t in oldObject.spec.tolerations)) : variables.tolerations"},
		{Name: "everyTaint", Expression: "variables.added.exists(t, " + celExists + " && " + celNoKey + " && " + celSchedules + ")"},
		{Name: "everyTenant", Expression: "variables.added.filter(t, " + celExists + " && has(t.key) && (t.key == " + org + " || t.key == " + stack + ") && " + celSchedules + ").map(t, t.key)"},
		{Name: "own", Expression: pp.namespaceOrganization()},
		{Name: "foreignOrganizations", Expression: onKey(org) + ".filter(o, o != variables.own)"},
		{Name: varNodeSelector, Expression: celNodeSelector},
		{Name: "affinityTerms", Expression: celAffinityTerms},
		// Stack tolerations this request adds: at UPDATE, none may be (see below).
		{Name: "addedStacks", Expression: "variables.added.filter(t, has(t.key) && t.key == " + stack + " && " + celSchedules + ").map(t, has(t.value) ? t.value : '')"},
		// An update may change a pod's node selection only while the pod is gated (Kubernetes lets it
		// narrow the selector and affinity then): such an update is checked as a creation is.
		{Name: "selectionChanged", Expression: "request.operation == 'UPDATE' && (variables.nodeSelector != (has(oldObject.spec.nodeSelector) ? oldObject.spec.nodeSelector : {}) || " +
			"variables.affinityTerms != (" + strings.ReplaceAll(celAffinityTerms, "object.", "oldObject.") + "))"},
	}
	selectorOwn := selectorKeys + ".all(k, !(k in variables.nodeSelector) || variables.nodeSelector[k] == variables.own)"
	affinityOwn := "variables.affinityTerms.all(term, !has(term.matchExpressions) || term.matchExpressions.all(e, " +
		"!(e.key in " + selectorKeys + ") || e.operator != 'In' || !has(e.values) || e.values.all(o, o == variables.own)))"
	hint := pp.platformHint()
	in := " in namespace ' + request.namespace + '"
	whose := "(the platform labels it ' + (variables.own == '' ? 'with no organization' : '" + pp.OrganizationKey + "=' + variables.own) + ')"
	validations := []admissionv1.Validation{
		{
			// Mirror pods, which a node creates for its static pods, name it.
			Expression:        "request.operation != 'CREATE' || !has(object.spec.nodeName) || object.spec.nodeName == ''",
			MessageExpression: "'pod" + in + " names node ' + object.spec.nodeName + ' in spec.nodeName, which skips the scheduler and the taints that keep organizations apart: remove spec.nodeName and select nodes with a nodeSelector; " + hint + "'",
		},
		{
			Expression:        "!variables.everyTaint",
			MessageExpression: "'pod" + in + " tolerates every taint (a toleration with operator Exists and no key), organizations\\' nodes included: give the toleration a key; " + hint + "'",
		},
		{
			Expression:        "size(variables.everyTenant) == 0",
			MessageExpression: "'pod" + in + " tolerates every value of ' + variables.everyTenant[0] + ' (operator Exists), every organization\\'s nodes: tolerate your own with operator Equal and its value; " + hint + "'",
		},
		{
			Expression: "size(variables.foreignOrganizations) == 0",
			MessageExpression: "'pod" + in + " tolerates organization ' + variables.foreignOrganizations.join(', ') + '\\'s taint (toleration " + pp.OrganizationKey + "=' + " +
				"variables.foreignOrganizations.join(', ') + '), but the namespace is not that organization\\'s " + whose + ": remove the toleration; " + hint + "'",
		},
		{
			// Which stacks of its organization a pod may tolerate is its namespace's grant, read when the
			// pod is created (kiso-placement-pools); an update that added one would go round it, in Warn
			// mode and with enforce: false too, where the pod need not select its own pool.
			Expression: "request.operation != 'UPDATE' || size(variables.addedStacks) == 0",
			MessageExpression: "'pod" + in + " adds a toleration of stack ' + variables.addedStacks.join(', ') + ' (" + pp.StackKey + ") in an update: the stacks a pod tolerates are checked " +
				"against its namespace\\'s grant when it is created; create the pod with the toleration (its organization\\'s claim says which: status.stacks)'",
		},
		{
			Expression: "(request.operation == 'UPDATE' && !variables.selectionChanged) || (" + selectorOwn + " && " + affinityOwn + ")",
			MessageExpression: "'pod" + in + " selects the nodes of an organization (" + pp.NodeOrganizationKey + " or " + pp.OrganizationKey +
				" in its nodeSelector or required node affinity) that the namespace is not " + whose + ": remove that selector; " + hint + "'",
		},
	}
	for i := range validations {
		validations[i].Reason = ptr.To(metav1.StatusReasonForbidden)
	}
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta: validatingPolicyType,
		ObjectMeta: metav1.ObjectMeta{Name: placement.PolicyName, Annotations: map[string]string{
			placement.AnnotationCluster:            pp.Cluster,
			placement.AnnotationKeyDomain:          pp.KeyDomain,
			placement.AnnotationPlatformNamespaces: strings.Join(pp.PlatformNamespaces, ","),
			placement.AnnotationInjectAPIVersion:   pp.InjectAPIVersion,
		}},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: podsMatch(admissionv1.Create, admissionv1.Update),
			// A node creates mirror pods for its static pods, on itself (NodeRestriction): outside organizations'
			// namespaces they are the node's business; inside them the pools policy refuses them.
			MatchConditions: []admissionv1.MatchCondition{notANode},
			Variables:       vars,
			Validations:     validations,
		},
	}
	if pp.InjectAPIVersion == "" {
		delete(policy.Annotations, placement.AnnotationInjectAPIVersion)
	}
	if !pp.audits() {
		return policy, pp.binding(placement.PolicyName, nil, pp.outsidePlatform())
	}
	policy.Annotations[placement.AnnotationMode] = string(pp.Mode)
	// Organizations' namespaces are enforced in either mode: what one organization's pods may tolerate or
	// select of another's is never only a warning.
	return policy, pp.binding(placement.PolicyName, nil, pp.organizationNamespaces())
}

// auditBinding binds the placement policy, in mode Audit, to the namespaces neither an organization's nor the
// platform's: a pod there that Enforce would refuse is admitted, the refusal a warning to whoever created it
// (kubectl prints it; a controller logs it) and an audit annotation in the apiserver's audit log.
func (pp placementPlan) auditBinding() *admissionv1.ValidatingAdmissionPolicyBinding {
	b := pp.binding(placement.PolicyName, nil, pp.outsideOrganizations())
	b.Name = placement.AuditBindingName
	b.Spec.ValidationActions = []admissionv1.ValidationAction{admissionv1.Warn, admissionv1.Audit}
	return b
}

// outsideOrganizations selects the namespaces neither an organization's nor the platform's.
func (pp placementPlan) outsideOrganizations() *metav1.LabelSelector {
	sel := pp.outsidePlatform()
	sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: pp.OrganizationKey, Operator: metav1.LabelSelectorOpDoesNotExist})
	return sel
}

func (pp placementPlan) binding(name string, param *admissionv1.ParamRef, namespaces *metav1.LabelSelector) *admissionv1.ValidatingAdmissionPolicyBinding {
	b := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ParamRef:          param,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	if namespaces != nil {
		b.Spec.MatchResources = &admissionv1.MatchResources{NamespaceSelector: namespaces}
	}
	return b
}

// organizationNamespaces selects the namespaces the platform gives an
// organization, outside the platform's own.
func (pp placementPlan) organizationNamespaces() *metav1.LabelSelector {
	sel := pp.outsidePlatform()
	sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: pp.OrganizationKey, Operator: metav1.LabelSelectorOpExists})
	return sel
}

// roleParam is the namespace's Role kiso-placement. In a namespace the
// platform gives an organization, a missing Role refuses every pod: a
// tenant who deletes it switches nothing off.
var roleParam = &admissionv1.ParamRef{Name: placement.Name, ParameterNotFoundAction: ptr.To(admissionv1.DenyAction)}

// warnParam is the same Role for the warn policy: where it is missing, the
// pools policy refuses the pod already.
var warnParam = &admissionv1.ParamRef{Name: placement.Name, ParameterNotFoundAction: ptr.To(admissionv1.AllowAction)}

var roleKind = &admissionv1.ParamKind{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"}

// nodeUserPrefix begins the user name of a node.
const nodeUserPrefix = "system:node:"

// celIsNode is true when a node makes the request, as Kubernetes decides (the
// Node authorizer and NodeRestriction): a user named system:node:<node> in the
// group system:nodes. The name alone is anyone's whom an authenticator lets
// choose it (an OIDC or webhook authenticator without a prefix, a client
// certificate without the group).
const celIsNode = "request.userInfo.username.startsWith('" + nodeUserPrefix + "') && has(request.userInfo.groups) && 'system:nodes' in request.userInfo.groups"

// notANode leaves a node's own requests (its mirror pods) to NodeRestriction.
var notANode = admissionv1.MatchCondition{Name: "not-a-node", Expression: "!(" + celIsNode + ")"}

// compositeLabel is the label Crossplane sets on every resource it composes:
// the name of the XR that composes it.
const compositeLabel = "crossplane.io/composite"

// roleDistrust are the variables that read the namespace's Role (the
// policy's params); distrust says why it grants nothing, and is empty when it
// grants what its rules say. RBAC lets whoever may
// update Roles in the namespace (its tenant admin) change only what the
// garbage collector reads without holding the grants: the Role's owner
// references and finalizers. Everything else (labels, rules) only who holds
// the grants writes. So the Role is trusted only
//   - while it is not being deleted (a finalizer would keep a withdrawn grant);
//   - if its organization label, kiso's, is the namespace's organization (a
//     grant of the organization the namespace was given before is not this
//     one's);
//   - where Crossplane composed it (it carries Crossplane's composite label),
//     if its controller is still the organization's XR that label names: a
//     tenant who makes another object its controller stops Crossplane from
//     updating it, which would freeze the grant. A reference naming that XR
//     with another UID is no way round it: the garbage collector deletes a
//     Role whose only owner does not exist. In a workload cluster
//     provider-kubernetes keeps the Role current whoever its owners are.
func (pp placementPlan) roleDistrust() []admissionv1.Variable {
	controlled := "has(params.metadata.ownerReferences) && params.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && " +
		"r.apiVersion == " + cq(v1alpha1.Group+"/"+v1alpha1.Version) + " && r.kind == " + cq(v1alpha1.IsolationKind) + " && r.name == variables.roleComposite)"
	return []admissionv1.Variable{
		{Name: "roleLabels", Expression: "has(params.metadata.labels) ? params.metadata.labels : {}"},
		{Name: "roleOrganization", Expression: cq(pp.OrganizationKey) + " in variables.roleLabels ? variables.roleLabels[" + cq(pp.OrganizationKey) + "] : ''"},
		{Name: "roleComposite", Expression: cq(compositeLabel) + " in variables.roleLabels ? variables.roleLabels[" + cq(compositeLabel) + "] : ''"},
		{Name: "distrust", Expression: "has(params.metadata.deletionTimestamp) ? 'is being deleted' : " +
			"variables.roleOrganization != variables.own ? 'is organization ' + variables.roleOrganization + '\\'s, not the namespace\\'s' : " +
			"variables.roleComposite != '' && !(" + controlled + ") ? 'is no longer controlled by XKarpenterIsolation ' + variables.roleComposite + ', which composed it' : ''"},
	}
}

// grantRule selects the Role's rules granting a verb on a resource. A rule
// kiso did not write cannot be there: creating it needs the grant itself.
func grantRule(resource, verb string) string {
	return fmt.Sprintf("has(r.apiGroups) && %s in r.apiGroups && has(r.resources) && %s in r.resources && has(r.verbs) && %s in r.verbs && has(r.resourceNames)",
		cq(placement.Group), cq(resource), cq(verb))
}

// poolsRule selects the Role's rules granting a verb on pools.
func poolsRule(verb string) string { return grantRule(placement.Pools, verb) }

// selects is true when the pod's node selector, or every term of its
// required node affinity, selects pool p ("o" or "o.s").
func (pp placementPlan) selects(p string) string {
	org, stack := cq(pp.NodeOrganizationKey), cq(pp.NodeStackKey)
	bySelector := fmt.Sprintf("(%[3]s.split('.')[0] == (%[1]s in variables.nodeSelector ? variables.nodeSelector[%[1]s] : '') && "+
		"(size(%[3]s.split('.')) == 1 || %[3]s.split('.')[1] == (%[2]s in variables.nodeSelector ? variables.nodeSelector[%[2]s] : '')))", org, stack, p)
	requires := func(key, value string) string {
		return fmt.Sprintf("term.matchExpressions.exists(e, e.key == %s && e.operator == 'In' && has(e.values) && size(e.values) > 0 && e.values.all(v, v == %s))", key, value)
	}
	byAffinity := fmt.Sprintf("(size(variables.affinityTerms) > 0 && variables.affinityTerms.all(term, has(term.matchExpressions) && %s && (size(%s.split('.')) == 1 || %s)))",
		requires(org, p+".split('.')[0]"), p, requires(stack, p+".split('.')[1]"))
	return "(" + bySelector + " || " + byAffinity + ")"
}

// poolsPolicy holds a pod created in a namespace the platform gives an
// organization to the namespace's Role: it selects a pool the Role names
// (its own, and while a retired pool is kept, that one too) and tolerates
// only the stacks the Role grants. A Role that is missing or names no pool
// refuses the pod: a grant fails closed.
func (pp placementPlan) poolsPolicy() (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	stack := cq(pp.StackKey)
	vars := append(pp.poolVariables(placement.VerbSelect),
		admissionv1.Variable{Name: "uses", Expression: "variables.rules.filter(r, " + grantRule(placement.Tolerations, placement.VerbUse) + ")"},
		admissionv1.Variable{Name: "stacks", Expression: "(has(object.spec.tolerations) ? object.spec.tolerations : []).filter(t, has(t.key) && t.key == " + stack + " && !" + celExists + " && " + celSchedules + ").map(t, has(t.value) ? t.value : '')"},
		admissionv1.Variable{Name: "ungranted", Expression: "variables.stacks.filter(s, !variables.uses.exists(r, (variables.own + '.' + s) in r.resourceNames))"},
	)
	vars = append([]admissionv1.Variable{{Name: "node", Expression: celIsNode}}, vars...)
	validations := []admissionv1.Validation{
		{
			// NodeRestriction lets a node create a mirror pod, bound to itself, in any namespace; which
			// organization a node is, a policy cannot read from the request. A pod in an organization's
			// namespace is one its Services and NetworkPolicies select: none is a node's.
			Expression: "!variables.node",
			MessageExpression: "'node ' + request.userInfo.username.substring(" + strconv.Itoa(len(nodeUserPrefix)) + ") + ' may not create a mirror pod in namespace ' + request.namespace + " +
				"', organization ' + variables.own + '\\'s: a static pod runs in a platform namespace'",
		},
		{
			Expression:        "variables.distrust == ''",
			MessageExpression: "'pods in namespace ' + request.namespace + ' are refused: its placement grant (Role " + placement.Name + ") ' + variables.distrust + ', so it grants nothing'",
		},
		{
			Expression: "size(variables.pools) > 0",
			MessageExpression: "'pods in namespace ' + request.namespace + ' are refused: its placement grant (Role " + placement.Name + ") was changed and names no pool; " +
				"Crossplane restores it at its next reconcile of organization ' + variables.own + '\\'s claim'",
		},
		{
			Expression:        pp.selectsGrantedPool(),
			MessageExpression: pp.poolMessage(),
		},
		{
			Expression: "size(variables.ungranted) == 0",
			MessageExpression: "'pod in namespace ' + request.namespace + ' tolerates stack taints (" + pp.StackKey + "=' + variables.ungranted.join(', ') + ') of organization ' + variables.own + " +
				"' whose pods do not run in this namespace: tolerate only your own stack'",
		},
	}
	return pp.rolePolicy(placement.PoolsPolicyName, nil, vars, validations), pp.binding(placement.PoolsPolicyName, roleParam, pp.organizationNamespaces())
}

// warnPolicy is Warn mode (spec.placement.mode): where the namespace's Role
// grants warn on pools (and select on any pool, so the pools policy admits
// the pod), a pod that selects none of them gets, as a warning and an audit
// annotation, the refusal the pools policy would give it in Enforce mode.
// What keeps other organizations' pods off its nodes is never a warning.
func (pp placementPlan) warnPolicy() (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	validations := []admissionv1.Validation{{
		Expression:        "size(variables.pools) == 0 || " + pp.selectsGrantedPool(),
		MessageExpression: pp.poolMessage() + " + ' (organization ' + variables.own + '\\'s placement is in Warn mode: in Enforce mode this pod is refused)'",
	}}
	binding := pp.binding(placement.WarnPolicyName, warnParam, pp.organizationNamespaces())
	binding.Spec.ValidationActions = []admissionv1.ValidationAction{admissionv1.Warn, admissionv1.Audit}
	return pp.rolePolicy(placement.WarnPolicyName, []admissionv1.MatchCondition{notANode}, pp.poolVariables(placement.VerbWarn), validations), binding
}

// poolVariables are what a policy reading the namespace's Role knows of a pod
// and of the pools the Role grants the verb given on: the first one, its
// organization and stack, for the message.
func (pp placementPlan) poolVariables(verb string) []admissionv1.Variable {
	vars := []admissionv1.Variable{
		{Name: varNodeSelector, Expression: celNodeSelector},
		{Name: "affinityTerms", Expression: celAffinityTerms},
		{Name: "own", Expression: pp.namespaceOrganization()},
	}
	vars = append(vars, pp.roleDistrust()...)
	return append(vars, []admissionv1.Variable{
		// A Role its tenant admin emptied reads back with rules null, which has() counts as present.
		{Name: "rules", Expression: "variables.distrust == '' && has(params.rules) && type(params.rules) == list ? params.rules : []"},
		{Name: "pools", Expression: "variables.rules.filter(r, " + poolsRule(verb) + " && size(r.resourceNames) > 0)"},
		{Name: "pool", Expression: "size(variables.pools) > 0 ? variables.pools[0].resourceNames[0] : ''"},
		{Name: "organization", Expression: "variables.pool.split('.')[0]"},
		{Name: "stack", Expression: "size(variables.pool.split('.')) > 1 ? variables.pool.split('.')[1] : ''"},
	}...)
}

// selectsGrantedPool is true when the pod selects one of variables.pools (or
// they grant any pool).
func (pp placementPlan) selectsGrantedPool() string {
	return "variables.pools.exists(r, r.resourceNames.exists(p, p == " + cq(placement.AnyPool) + " || " + pp.selects("p") + "))"
}

// poolMessage tells a pod that selects none of variables.pools what to add.
func (pp placementPlan) poolMessage() string {
	selector := "'" + pp.NodeOrganizationKey + "=' + variables.organization + (variables.stack == '' ? '' : ', " + pp.NodeStackKey + "=' + variables.stack)"
	tolerations := "'" + pp.OrganizationKey + "=' + variables.organization + ':NoSchedule' + (variables.stack == '' ? '' : ', " + pp.StackKey + "=' + variables.stack + ':NoSchedule')"
	poolName := "(has(params.metadata.annotations) && " + cq(placement.PoolAnnotation) + " in params.metadata.annotations ? params.metadata.annotations[" + cq(placement.PoolAnnotation) + "] : variables.pool)"
	return "'pods in namespace ' + request.namespace + ' run on pool ' + " + poolName + " + ': add nodeSelector ' + " + selector +
		" + ' (or a required node affinity on them) and tolerations ' + " + tolerations
}

// rolePolicy is a policy on pod creation that reads the namespace's Role.
func (pp placementPlan) rolePolicy(name string, matchConditions []admissionv1.MatchCondition, vars []admissionv1.Variable, validations []admissionv1.Validation) *admissionv1.ValidatingAdmissionPolicy {
	for i := range validations {
		validations[i].Reason = ptr.To(metav1.StatusReasonForbidden)
	}
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   validatingPolicyType,
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			ParamKind:        roleKind,
			MatchConstraints: podsMatch(admissionv1.Create),
			MatchConditions:  matchConditions,
			Variables:        vars,
			Validations:      validations,
		},
	}
}
