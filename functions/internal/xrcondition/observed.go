package xrcondition

import (
	"k8s.io/apimachinery/pkg/util/json"

	xpv1 "github.com/crossplane/crossplane-runtime/v2/apis/common/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// Observed returns the observed XR's condition of type ct as its GetCondition does, decoding the conditions
// alone: GetCondition decodes the whole status through JSON to find one condition, and an organization of a
// thousand stacks has a status of a thousand stacks, read three times a call.
func Observed(xr *resource.Composite, ct xpv1.ConditionType) xpv1.Condition {
	status, ok := xr.Resource.Object["status"]
	if !ok {
		return xpv1.Condition{}
	}
	conditioned := xpv1.ConditionedStatus{}
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
			return xpv1.Condition{}
		}
	default:
		return xpv1.Condition{}
	}
	return conditioned.GetCondition(ct)
}
