package main

import (
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// What every placement policy is written with: the requests it matches (every door through which Kubernetes
// writes what placement depends on), the namespaces it applies to, and the CEL it reads pods and namespaces with.

// coreMatch matches requests on core (v1) resources, or subresources such as
// pods/binding, for the operations given.
func coreMatch(resources []string, ops ...admissionv1.OperationType) *admissionv1.MatchResources {
	return &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources},
		},
	}}}
}

// podsMatch matches requests on pods for the operations given.
func podsMatch(ops ...admissionv1.OperationType) *admissionv1.MatchResources {
	return coreMatch([]string{"pods"}, ops...)
}

// Every door through which Kubernetes writes what placement depends on, read
// from the apiserver's registry (pkg/registry/core): a policy that matches
// one door and not another is no boundary.
var (
	// namespaceWriters write a namespace's labels: the namespace itself, and
	// its status and finalize subresources, whose strategies keep the
	// metadata a request sends.
	namespaceWriters = []string{"namespaces", "namespaces/status", "namespaces/finalize"}
	// podBinders set a pod's node: the pods/binding subresource, and the
	// older bindings resource that does the same (the scheduler's
	// ClusterRole grants both). A pod's node is set by nothing else after
	// its creation: an update may not change spec.nodeName.
	podBinders = []string{"pods/binding", "bindings"}
)

// outsidePlatform selects every namespace but the platform's: those listed
// and those the platform labels exempt ("true"; any other value exempts
// nothing). Every namespace carries its name as the label
// kubernetes.io/metadata.name.
func (pp placementPlan) outsidePlatform() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: placement.ExemptLabel(pp.KeyDomain), Operator: metav1.LabelSelectorOpNotIn, Values: []string{placement.ExemptValue}},
		{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: pp.PlatformNamespaces},
	}}
}

// platformHint ends every refusal: how a pod that must do this is run.
func (pp placementPlan) platformHint() string {
	return "only pods in platform namespaces may (" + strings.Join(pp.PlatformNamespaces, ", ") +
		", and any the platform labels " + placement.ExemptLabel(pp.KeyDomain) + "=" + placement.ExemptValue + ")"
}

// cq quotes a string for CEL.
func cq(s string) string { return strconv.Quote(s) }

// celList is a CEL list of quoted strings.
func celList(items []string) string {
	quoted := make([]string, 0, len(items))
	for _, i := range items {
		quoted = append(quoted, cq(i))
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// Toleration predicates. A toleration with an empty effect matches every
// effect; one with NoExecute or PreferNoSchedule does not match a
// NoSchedule taint, which is the only effect kiso's taints have.
const (
	celSchedules = "(!has(t.effect) || t.effect == '' || t.effect == 'NoSchedule')"
	celExists    = "(has(t.operator) && t.operator == 'Exists')"
	celNoKey     = "(!has(t.key) || t.key == '')"
)

// celNodeSelector is a pod's node selector, empty when it has none, in the
// variable varNodeSelector.
const (
	celNodeSelector = "has(object.spec.nodeSelector) ? object.spec.nodeSelector : {}"
	varNodeSelector = "nodeSelector"
)

// celAffinityTerms are the node selector terms of a pod's required node
// affinity, empty when it has none.
const celAffinityTerms = "has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity) && " +
	"has(object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) ? " +
	"object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms : []"

// namespaceOrganization is the organization the platform labels the pod's
// namespace with, or "": the platform's word, which only it may write (the
// namespace policy).
func (pp placementPlan) namespaceOrganization() string {
	return "has(namespaceObject.metadata.labels) && " + cq(pp.OrganizationKey) + " in namespaceObject.metadata.labels ? namespaceObject.metadata.labels[" + cq(pp.OrganizationKey) + "] : ''"
}
