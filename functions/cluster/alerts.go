package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/response"

	"github.com/kiso-dev/kiso/functions/internal/fnstate"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
)

// A PrometheusRule is prometheus-operator's kind: on a cluster without its CRD, Crossplane cannot apply one, and
// an object it cannot apply fails the whole XR's reconcile, IAM and queue included. So the cluster asks whether
// the CRD is there (in the workload cluster, for a remote one: the read goes there), composes the alerts only
// then, and says why not otherwise.

// Condition of the alerts the spec asks for.
const (
	TypeAlerts = "Alerts"
	// ReasonAlertsComposed: the PrometheusRule is composed.
	ReasonAlertsComposed = "Composed"
	// ReasonAlertsCRDMissing: the spec asks for alerts the cluster cannot hold.
	ReasonAlertsCRDMissing = "PrometheusRuleCRDMissing"
	// ReasonAlertsDisabled: spec.monitoring.prometheusRule is false.
	ReasonAlertsDisabled = "Disabled"
)

// requirePrometheusRuleCRD is the required resource under which Crossplane returns prometheus-operator's CRD.
const requirePrometheusRuleCRD = "prometheusrule-crd"

// prometheusRuleCRD is the name of prometheus-operator's PrometheusRule CRD.
const prometheusRuleCRD = "prometheusrules.monitoring.coreos.com"

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// alertsPlan is whether the cluster composes its PrometheusRule: asked for by the spec, and the cluster serving
// the kind. One concern: it asks for prometheus-operator's CRD (require), reads the answer and sets the plan's
// PrometheusRule (resolve), and says whether the alerts are in place (report).
type alertsPlan struct {
	// wanted: spec.monitoring.prometheusRule.
	wanted bool
	// answered: Crossplane has said whether the CRD exists; served: it does.
	answered, served bool
	// composed: the PrometheusRule was composed before.
	composed bool
}

// resolve reads Crossplane's answer for the CRD, and whether the PrometheusRule was composed before, and has the
// plan compose the rule or not (compose).
func (a *alertsPlan) resolve(r *state) {
	_, a.composed = r.Observed.Get(crPrometheusRule)
	found, answered := fnstate.Required(r.Req, requirePrometheusRuleCRD)
	a.answered, a.served = answered, len(found) > 0
	r.plan.PrometheusRule = a.compose()
}

// compose reports whether to compose the PrometheusRule: while Crossplane has not answered yet, as before
// (Crossplane deletes what a function stops returning).
func (a alertsPlan) compose() bool {
	if !a.wanted {
		return false
	}
	if !a.answered {
		return a.composed
	}
	return a.served
}

// require asks for prometheus-operator's CRD when the spec wants alerts (the plan's PrometheusRule, from the spec).
func (a *alertsPlan) require(r *state) {
	*a = alertsPlan{wanted: r.plan.PrometheusRule}
	if a.wanted {
		r.required[requirePrometheusRuleCRD] = ownership.ByName(crdGVK, "", prometheusRuleCRD)
	}
}

// report says whether the alerts are in place, once Crossplane has answered.
func (a *alertsPlan) report(r *state) {
	rsp := r.Rsp
	switch {
	case !a.wanted:
		response.ConditionTrue(rsp, TypeAlerts, ReasonAlertsDisabled).
			WithMessage("spec.monitoring.prometheusRule is false: kiso composes no alerts").TargetComposite()
	case !a.answered:
	case a.served:
		response.ConditionTrue(rsp, TypeAlerts, ReasonAlertsComposed).TargetComposite()
	default:
		response.ConditionFalse(rsp, TypeAlerts, ReasonAlertsCRDMissing).
			WithMessage("spec.monitoring.prometheusRule: the cluster has no CustomResourceDefinition " + prometheusRuleCRD +
				" (prometheus-operator's), so kiso composes no alerts; install prometheus-operator's CRDs, or set spec.monitoring.prometheusRule: false").
			TargetComposite()
	}
}
