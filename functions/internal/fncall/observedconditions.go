package fncall

import (
	"time"

	"k8s.io/apimachinery/pkg/util/json"

	xpv1 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
)

// Observed returns the observed XR's condition of type ct as its GetCondition does, decoding the conditions
// alone: GetCondition decodes the whole status through JSON to find one condition, and an organization of a
// thousand stacks has a status of a thousand stacks, read three times a call.
func Observed(xr *resource.Composite, ct xpv1.ConditionType) xpv1.Condition {
	conditioned, ok := observedConditions(xr)
	if !ok {
		return xpv1.Condition{}
	}
	return conditioned.GetCondition(ct)
}

// LastTransition returns when the observed XR's most recent condition transition happened, and false when it
// has no condition with a transition time (an XR Crossplane has not reported on yet).
func LastTransition(xr *resource.Composite) (time.Time, bool) {
	var last time.Time
	conditioned, _ := observedConditions(xr)
	for _, c := range conditioned.Conditions {
		if c.LastTransitionTime.After(last) {
			last = c.LastTransitionTime.Time
		}
	}
	return last, !last.IsZero()
}

// observedConditions decodes the conditions of the observed XR's status, and false when it has no status or
// one GetCondition could not decode (which then reports an empty condition, not an Unknown one).
func observedConditions(xr *resource.Composite) (xpv1.ConditionedStatus, bool) {
	conditioned := xpv1.ConditionedStatus{}
	status, ok := xr.Resource.Object["status"]
	if !ok {
		return conditioned, false
	}
	switch status := status.(type) {
	case nil:
		// A null status decodes as an empty one.
	case map[string]any:
		// Decoded with the JSON package GetCondition's field path uses, which matches names case-sensitively.
		conditions := map[string]any{}
		if v, ok := status["conditions"]; ok {
			conditions["conditions"] = v
		}
		js, err := json.Marshal(conditions)
		if err != nil || json.Unmarshal(js, &conditioned) != nil {
			return xpv1.ConditionedStatus{}, false
		}
	default:
		return conditioned, false
	}
	return conditioned, true
}
