package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/apis/v1alpha1"
	"github.com/kiso-dev/kiso/functions/internal/fncall"
	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/placement"
)

// In spec.placement.mode Audit the cluster's placement policy only warns in the namespaces that are neither an
// organization's nor the platform's, and the cluster says what it would refuse there in Enforce: the DaemonSets
// whose pods it would refuse, by namespace and name, with the first refusal each would get. DaemonSets are what
// other teams run on every node (monitoring, logging and security agents) and what commonly tolerates every
// taint; a pod of any other owner is audited the same way by the apiserver (a warning to whoever creates it, an
// audit annotation), only not listed here. The DaemonSets and namespaces are read only in Audit mode, a
// transition: a cluster that enforces reads neither.

// Required resources of the audit.
const (
	requireAuditDaemonSets = "audit-daemonsets"
	requireAuditNamespaces = "audit-namespaces"
)

// Condition of the cluster's placement policy.
const (
	TypePlacementEnforced = "PlacementEnforced"
	// ReasonPlacementEnforced: spec.placement.mode is Enforce.
	ReasonPlacementEnforced = "Enforced"
	// ReasonPlacementAudit: spec.placement.mode is Audit.
	ReasonPlacementAudit = "Audit"
)

// placementAudit is what the cluster reads and finds in Audit mode.
type placementAudit struct {
	// on: spec.placement.mode is Audit.
	on bool
	// answered: Crossplane has returned the DaemonSets and the namespaces.
	answered bool
	// found is what Enforce would refuse, every one of them.
	found []v1alpha1.AuditedWorkload
	// read is how many DaemonSets of the audited namespaces were read.
	read int
}

// require asks, in Audit mode, for every DaemonSet and every namespace.
func (a placementAudit) require(rs map[string]*fnv1.ResourceSelector) {
	if !a.on {
		return
	}
	everything := &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{}}
	rs[requireAuditDaemonSets] = &fnv1.ResourceSelector{ApiVersion: "apps/v1", Kind: "DaemonSet", Match: everything}
	rs[requireAuditNamespaces] = &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Namespace", Match: everything}
}

// resolve judges every DaemonSet of the audited namespaces as the placement policy would judge its pods.
func (a *placementAudit) resolve(req *fnv1.RunFunctionRequest, pp placementPlan) {
	if !a.on {
		return
	}
	daemonSets, dsAnswered := fnstate.Required(req, requireAuditDaemonSets)
	namespaces, nsAnswered := fnstate.Required(req, requireAuditNamespaces)
	a.answered = dsAnswered && nsAnswered
	labels := map[string]map[string]string{}
	for _, ns := range namespaces {
		labels[ns.Resource.GetName()] = ns.Resource.GetLabels()
	}
	for _, d := range daemonSets {
		u := d.Resource
		nsLabels, known := labels[u.GetNamespace()]
		if !known || !pp.audited(u.GetNamespace(), nsLabels) {
			continue
		}
		a.read++
		if why := pp.wouldRefuse(podTemplateOf(u), u.GetNamespace()); why != "" {
			a.found = append(a.found, v1alpha1.AuditedWorkload{Namespace: u.GetNamespace(), Kind: u.GetKind(), Name: u.GetName(), Reason: why})
		}
	}
}

// status is what the XR's status says of the audit; nil outside Audit mode, and while Crossplane has not
// answered.
func (a placementAudit) status() *v1alpha1.PlacementAudit {
	if !a.on || !a.answered {
		return nil
	}
	st := &v1alpha1.PlacementAudit{Total: int32(min(len(a.found), math.MaxInt32)), DaemonSets: int32(max(0, min(a.read, math.MaxInt32)))}
	st.WouldRefuse = a.found[:min(len(a.found), v1alpha1.MaxListedAudit)]
	return st
}

// report says what the placement policy enforces; in Audit mode, what it would refuse, also as a Warning (an
// event on the XR) while anything would be.
func (a placementAudit) report(rsp *fnv1.RunFunctionResponse, pp placementPlan) {
	if !a.on {
		response.ConditionTrue(rsp, TypePlacementEnforced, ReasonPlacementEnforced).
			WithMessage("the placement policy refuses, outside the platform's namespaces, any pod that could run on an organization's nodes it is not given").TargetComposite()
		return
	}
	msg := "spec.placement.mode is Audit: outside organizations' and the platform's namespaces, the placement policy admits a pod it would refuse, with the refusal as a warning and an audit annotation, so nothing keeps such pods off organizations' nodes"
	switch {
	case !a.answered:
		msg += "; waiting for Crossplane to return the DaemonSets and namespaces to audit"
	case len(a.found) == 0:
		msg += fmt.Sprintf("; of %d DaemonSets there, Enforce would refuse the pods of none: switch spec.placement.mode to Enforce", a.read)
	default:
		refused := make([]string, 0, len(a.found))
		for _, w := range a.found {
			refused = append(refused, w.Namespace+"/"+w.Name)
		}
		msg += fmt.Sprintf("; Enforce would refuse the pods of %d of %d DaemonSets there (status.placementAudit): %s. Label the namespaces of the platform's agents %s=%s, or fix the DaemonSets, then switch to Enforce",
			len(a.found), a.read, fncall.Listed(refused), placement.ExemptLabel(pp.KeyDomain), placement.ExemptValue)
		response.Warning(rsp, fmt.Errorf("placement audit: Enforce would refuse the pods of %s", fncall.Listed(refused)))
	}
	response.ConditionFalse(rsp, TypePlacementEnforced, ReasonPlacementAudit).WithMessage(msg).TargetComposite()
}

// podTemplateOf is the pod spec a workload's pods are created from; empty if it cannot be read.
func podTemplateOf(u *unstructured.Unstructured) corev1.PodSpec {
	var spec corev1.PodSpec
	raw, found, err := unstructured.NestedMap(u.Object, "spec", "template", "spec")
	if err != nil || !found {
		return spec
	}
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec)
	return spec
}

// audited reports whether the audit binding covers a namespace: neither the platform's (listed, or labelled
// exempt) nor an organization's.
func (pp placementPlan) audited(namespace string, labels map[string]string) bool {
	if slices.Contains(pp.PlatformNamespaces, namespace) || labels[placement.ExemptLabel(pp.KeyDomain)] == placement.ExemptValue {
		return false
	}
	_, organization := labels[pp.OrganizationKey]
	return !organization
}

// wouldRefuse is the first refusal the placement policy (policy) gives a pod created from spec in a namespace
// of no organization, or "" if it admits it: the checks of a creation, in the policy's order.
func (pp placementPlan) wouldRefuse(spec corev1.PodSpec, namespace string) string {
	if spec.NodeName != "" {
		return "names node " + spec.NodeName + " in spec.nodeName"
	}
	if why := pp.tolerationRefusal(spec.Tolerations, namespace); why != "" {
		return why
	}
	return pp.selectionRefusal(spec, namespace)
}

// tolerationRefusal is why the policy refuses a pod's tolerations in a namespace of no organization, or "".
func (pp placementPlan) tolerationRefusal(tolerations []corev1.Toleration, namespace string) string {
	for _, t := range tolerations {
		if !schedulesOnNoSchedule(t) || t.Operator != corev1.TolerationOpExists {
			continue
		}
		switch t.Key {
		case "":
			return "tolerates every taint (a toleration with operator Exists and no key), organizations' nodes included"
		case pp.OrganizationKey, pp.StackKey:
			return "tolerates every value of " + t.Key + " (operator Exists), every organization's nodes"
		}
	}
	for _, t := range tolerations {
		// A namespace of no organization is organization "": only a toleration of another value is foreign.
		if schedulesOnNoSchedule(t) && t.Key == pp.OrganizationKey && t.Operator != corev1.TolerationOpExists && t.Value != "" {
			return "tolerates organization " + t.Value + "'s taint, but namespace " + namespace + " is no organization's"
		}
	}
	return ""
}

// selectionRefusal is why the policy refuses the nodes a pod selects in a namespace of no organization, or "".
func (pp placementPlan) selectionRefusal(spec corev1.PodSpec, namespace string) string {
	keys := []string{pp.OrganizationKey, pp.NodeOrganizationKey}
	for _, k := range keys {
		if v := spec.NodeSelector[k]; v != "" {
			return "selects the nodes of organization " + v + " (" + k + " in its nodeSelector), but namespace " + namespace + " is no organization's"
		}
	}
	na := nodeAffinityOf(spec)
	if na == nil {
		return ""
	}
	for _, term := range na.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if slices.Contains(keys, e.Key) && e.Operator == corev1.NodeSelectorOpIn && slices.ContainsFunc(e.Values, func(v string) bool { return v != "" }) {
				return "selects the nodes of organization " + strings.Join(e.Values, ", ") + " (" + e.Key + " in its required node affinity), but namespace " + namespace + " is no organization's"
			}
		}
	}
	return ""
}

// schedulesOnNoSchedule reports whether a toleration matches a NoSchedule taint, the only effect kiso's taints
// have: one with no effect matches every effect.
func schedulesOnNoSchedule(t corev1.Toleration) bool {
	return t.Effect == "" || t.Effect == corev1.TaintEffectNoSchedule
}

// nodeAffinityOf is a pod's required node affinity, nil if it has none.
func nodeAffinityOf(spec corev1.PodSpec) *corev1.NodeSelector {
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil {
		return nil
	}
	return spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}
